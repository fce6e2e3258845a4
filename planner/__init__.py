"""The AND/OR tree planner: tree, engine, operator commands, and the protocols it plans through."""

from planner.commands import Command, apply_command, parse_command
from planner.config import Breakpoint, EngineConfig
from planner.engine import Engine
from planner.errors import (
    CommandRejected,
    EventOrderError,
    InvalidTransition,
    ModelEnvelopeError,
    ModelOutputError,
    ModelUnavailable,
    PlannerError,
    ScriptError,
)
from planner.events import Event, Kind
from planner.frames import Frame, active_path, next_position
from planner.protocols import ActionResult, Environment, Model, Page
from planner.state import RunStatus, SessionState, apply, replay
from planner.tree import Node, NodeType, Origin, Status, Tree

__all__ = [
    "ActionResult",
    "Breakpoint",
    "Command",
    "CommandRejected",
    "Engine",
    "EngineConfig",
    "Environment",
    "Event",
    "EventOrderError",
    "Frame",
    "InvalidTransition",
    "Kind",
    "Model",
    "ModelEnvelopeError",
    "ModelOutputError",
    "ModelUnavailable",
    "Node",
    "NodeType",
    "Origin",
    "Page",
    "PlannerError",
    "RunStatus",
    "ScriptError",
    "SessionState",
    "Status",
    "Tree",
    "active_path",
    "apply",
    "apply_command",
    "next_position",
    "parse_command",
    "replay",
]
