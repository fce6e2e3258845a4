"""The AND/OR tree planner: tree, engine, operator commands, and the protocols it plans through."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner._lazy import lazy_exports

if TYPE_CHECKING:
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

_HOME = {
    "ActionResult": "planner.protocols",
    "Breakpoint": "planner.config",
    "Command": "planner.commands",
    "CommandRejected": "planner.errors",
    "Engine": "planner.engine",
    "EngineConfig": "planner.config",
    "Environment": "planner.protocols",
    "Event": "planner.events",
    "EventOrderError": "planner.errors",
    "Frame": "planner.frames",
    "InvalidTransition": "planner.errors",
    "Kind": "planner.events",
    "Model": "planner.protocols",
    "ModelEnvelopeError": "planner.errors",
    "ModelOutputError": "planner.errors",
    "ModelUnavailable": "planner.errors",
    "Node": "planner.tree",
    "NodeType": "planner.tree",
    "Origin": "planner.tree",
    "Page": "planner.protocols",
    "PlannerError": "planner.errors",
    "RunStatus": "planner.state",
    "ScriptError": "planner.errors",
    "SessionState": "planner.state",
    "Status": "planner.tree",
    "Tree": "planner.tree",
    "active_path": "planner.frames",
    "apply": "planner.state",
    "apply_command": "planner.commands",
    "next_position": "planner.frames",
    "parse_command": "planner.commands",
    "replay": "planner.state",
}
"""Where each name lives. Imported on first use: a command that needs only one module (the CLI's
`list` needs no engine) does not pay for all of them."""


__getattr__ = lazy_exports(__name__, _HOME, globals())
