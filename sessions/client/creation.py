"""Starting sessions: a new one from a task, or a fork of another's history.

A session starts as one `session_created` event; whichever runner claims it (the console's, or a
worker's) runs it from there, so creating one is a client's act and needs no runner.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping

from planner.commands import sender
from planner.config import EngineConfig
from planner.events import Kind
from planner.inputs import InputError, shown
from planner.secrets import Secrets, placeholders
from planner.state import Recorder, RunStatus, SessionState, replay
from sessions.backends import prepare_model
from sessions.catalogue import Catalogue, configured
from sessions.errors import SessionInputError
from sessions.store import EventStore
from sessions.store.reading import event_number

__all__ = ["create_session", "fork_session"]

_SESSION_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def create_session(
    store: EventStore,
    task: str,
    model: str,
    *,
    start_url: str | None = None,
    config: EngineConfig | None = None,
    session_id: str | None = None,
    paused: bool = False,
    effort: str | None = None,
    by: str | None = None,
    secrets: Mapping[str, str] | None = None,
    catalogue: Catalogue | None = None,
) -> str:
    """Record a new session; it starts running (or paused, for plan review) when a runner picks it up.

    `effort` is a Claude model's thinking effort for the whole session (stored with it, so a
    resumed run keeps it). `by` is the operator who starts it (None: not known).
    `secrets` (name -> value, `planner.secrets`) are what the task writes as `{{NAME}}`: the browser
    types them, and no person, file or model sees them. Every placeholder in the task needs one (a
    bundled task brings its own), and a declared value the task spells out is replaced by its
    placeholder, so the task never holds one. A task the `catalogue` (default: the configured one,
    `sessions.catalogue`) bundles brings its secrets, request rules, playbook and expected answer."""
    task = task.strip()
    if not task:
        raise SessionInputError("the task is empty; describe what the agent should do")
    bundled = (catalogue or configured()).bundled(task, start_url)
    try:
        declared = Secrets({**(bundled.secrets if bundled else {}), **(secrets or {})})
    except InputError as error:
        raise SessionInputError(str(error)) from None
    task = declared.hide(task)
    missing = [name for name in placeholders(task) if name not in declared.declared]
    if missing:
        raise SessionInputError(
            f"the task writes {{{{{missing[0]}}}}} but no secret {missing[0]} is given; give its value or write "
            "the task without it"
        )
    if session_id is not None and (not _SESSION_ID.fullmatch(session_id) or session_id in (".", "..")):
        raise SessionInputError(
            f"the session id '{shown(session_id)}' is not usable; give 1 to 64 letters, digits, '.', '_' or '-', "
            "not '.' or '..' alone (it names the session's folder)"
        )
    config = config or EngineConfig()
    if shop_rules := [r for r in (bundled.request_rules if bundled else ()) if r not in config.request_rules]:
        config = config.model_copy(update={"request_rules": (*config.request_rules, *shop_rules)})
    session_id = session_id or uuid.uuid4().hex[:12]
    _usable_operator(by)
    state = SessionState()
    recorder = Recorder(state)
    recorder.record(
        Kind.SESSION_CREATED,
        task=task,
        start_url=start_url,
        model=model,
        model_data=prepare_model(model, store, playbook=bundled.playbook if bundled else None, effort=effort),
        expect=list(bundled.expectations if bundled else ()),
        config=config.model_dump(mode="json"),
        status=(RunStatus.PAUSED if paused else RunStatus.RUNNING).value,
        by=by,
        secrets=dict(declared.declared),
    )
    store.create_session(
        session_id, task, model, recorder.take(), status=state.status.value, cause=_cause(state), cost_usd=0.0
    )
    return session_id


def fork_session(store: EventStore, session_id: str, at: int, *, by: str | None = None) -> str:
    """A new session whose history is the first `at` events of another; it starts paused. `by` is the
    operator who forks it (None: not known)."""
    _usable_operator(by)
    at = event_number(store, session_id, at)
    events = store.load(session_id, upto=at)
    state = replay(events)
    new_id = uuid.uuid4().hex[:12]
    recorder = Recorder(state)
    recorder.record(Kind.SESSION_FORKED, from_session=session_id, at_seq=at, by=by)
    info = store.session(session_id)
    store.create_session(
        new_id,
        info.task,
        info.model,
        [*events, *recorder.take()],
        status=state.status.value,
        cause=_cause(state),
        reason=_shown(state, state.reason),
        steps=state.steps,
        parent_id=session_id,
        forked_at=at,
        cost_usd=state.metrics.cost_usd,
    )
    return new_id


def _usable_operator(by: str | None) -> None:
    """An operator named with a new session is a name a command could carry, or none at all."""
    if by is not None and sender({"by": by}) is None:
        raise SessionInputError("the operator name is not usable; give one line of at most 200 characters")


def _shown(state: SessionState, text: str | None) -> str | None:
    """`text` as the listing may show it: every secret the session has masked."""
    return state.secrets.mask(text) if text is not None else None


def _cause(state: SessionState) -> str | None:
    """The state's cause as the store's listing keeps it."""
    return state.cause.value if state.cause is not None else None
