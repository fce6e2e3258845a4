"""`SessionClient`: the one way a front end (the console, the CLI) starts, watches and commands sessions.

A client sends commands and reads snapshots; it never steps a session. Who runs sessions is its
`Runners` (the console's own runner threads, or the workers: `sessions.worker.pool`), and the client
only makes sure one will: a command that reaches a session with no runner wakes one.

What the client's verbs need is imported when first used: a quick look at the store (the CLI's
`list`) loads no engine, model or command models.

`send` queues and returns at once; the answer comes with a later snapshot (`SessionView.handled`,
read by `Outcome.settled`). Sending never waits for a runner, so a console press never holds the
page, and a command sent twice with one id (a replayed press) is one command (the queue is
idempotent by id).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions.client.outcomes import CommandRefused, Outcome, OutcomeKind
from sessions.errors import InvalidCommand
from sessions.store import EventStore, SessionFinished, SessionInfo, database_target
from sessions.store.feed import Changes, Polling, Reads, open_feed

if TYPE_CHECKING:
    from planner.commands import Command
    from planner.config import EngineConfig
    from planner.events import Event
    from planner.state import SessionState
    from sessions.catalogue import Bundled, Catalogue, Listed
    from sessions.client.attention import Attention, InboxItem, Mark
    from sessions.client.counterfactual import Counterfactual
    from sessions.client.history import TimeTravel
    from sessions.client.templates import TemplateLibrary
    from sessions.client.view import Follower, SessionView
    from sessions.store.artifacts import ArtifactStore
    from sessions.worker.pool import Runners

__all__ = ["SessionClient"]


class SessionClient:
    """Sessions as a front end sees them. Thread-safe where its store is; one per process is enough."""

    def __init__(
        self,
        store: EventStore,
        runners: Runners,
        *,
        changes: Changes | None = None,
        catalogue: Catalogue | None = None,
        artifacts: Path | None = None,
    ) -> None:
        self._store = store
        self._runners = runners
        self._changes = changes or Polling()
        self._reads = Reads(store, self._changes)
        self._catalogue = catalogue
        self.artifacts = artifacts

    @cached_property
    def templates(self) -> TemplateLibrary:
        """The store's plan templates (`sessions.client.templates`)."""
        from sessions.client.templates import TemplateLibrary

        return TemplateLibrary(self._store)

    @cached_property
    def _history(self) -> TimeTravel:
        from sessions.client.history import TimeTravel

        return TimeTravel(self._store)

    @classmethod
    def connect(cls, db: str | None = None, *, runner: str | None = None) -> SessionClient:
        """A client of the database `db` (default `$ANDOR_DB`), whose sessions run as `runner` says
        (default `$ANDOR_RUNNER`: `sessions.worker.pool.runners_for`), with the configured catalogue.
        Raises `SessionsError` with one sentence when either cannot be used."""
        from sessions.backends import artifacts_root
        from sessions.catalogue import configured
        from sessions.store.sql import open_store
        from sessions.worker.pool import runners_for

        target = str(database_target(db))
        store = open_store(target)
        artifacts = artifacts_root(target)
        try:
            runners = runners_for(runner if runner is not None else os.environ.get("ANDOR_RUNNER"), store, artifacts)
            catalogue = configured()
        except Exception:
            store.close()
            raise
        return cls(store, runners, changes=open_feed(store), catalogue=catalogue, artifacts=artifacts)

    @property
    def runners(self) -> Runners:
        """Who runs this client's sessions (`sessions.worker.pool.runners_for`)."""
        return self._runners

    @property
    def changes(self) -> Changes:
        """The change feed this client's reads follow."""
        return self._changes

    @property
    def store_reads(self) -> int:
        """How many reads of the store the client's watches and listings have made (for tests and benches)."""
        return self._reads.reads

    def close(self, timeout: float = 15.0) -> None:
        """Pause whatever this client's own runners run, stop following changes and close the store."""
        self._runners.shutdown(timeout)
        self._changes.close()
        self._store.close()

    def stop_runners(self, timeout: float = 15.0) -> None:
        """Leave every session this client's own runners run paused (`Runners.shutdown`)."""
        self._runners.shutdown(timeout)

    # Sessions

    def bundled_tasks(self) -> Sequence[Listed]:
        """The tasks the configured catalogue bundles (`sessions.catalogue`), for a picker."""
        return self._catalogue.tasks() if self._catalogue is not None else ()

    def bundled(self, task: str, start_url: str | None) -> Bundled | None:
        """The catalogue's entry for `task`, if it is a bundled one."""
        return self._catalogue.bundled(task, start_url) if self._catalogue is not None else None

    def create(
        self,
        task: str,
        model: str,
        *,
        start_url: str | None = None,
        config: EngineConfig | None = None,
        paused: bool = False,
        effort: str | None = None,
        by: str | None = None,
        secrets: Mapping[str, str] | None = None,
    ) -> str:
        """A new session (`sessions.client.creation.create_session`, with this client's catalogue), with
        a runner on it unless it starts paused."""
        from sessions.catalogue import NoCatalogue
        from sessions.client.creation import create_session

        session_id = create_session(
            self._store,
            task,
            model,
            start_url=start_url,
            config=config,
            paused=paused,
            effort=effort,
            by=by,
            secrets=secrets,
            catalogue=self._catalogue or NoCatalogue(),
        )
        self._runners.ensure_running(session_id)
        return session_id

    def fork(self, session_id: str, at: int, *, by: str | None = None) -> str:
        """A paused copy of the session's first `at` events."""
        from sessions.client.creation import fork_session

        return fork_session(self._store, session_id, at, by=by)

    def delete(self, session_id: str, artifacts: ArtifactStore | None = None) -> int:
        """Delete the session, then its files from `artifacts` (default: this client's artifacts directory);
        how many files were removed (`sessions.client.deletion`)."""
        from sessions.client.deletion import delete_session
        from sessions.store.artifacts import artifact_store

        return delete_session(self._store, session_id, artifacts or artifact_store(self.artifacts))

    def listing(self, *, fresh: bool = False) -> list[SessionInfo]:
        """Every session, newest first; read again only when the change feed says something changed, or,
        `fresh`, now (a session this client has just created may not have reached the feed yet)."""
        return self._store.sessions() if fresh else self._reads.sessions()

    def inbox(self, operator: str, items: Sequence[Attention]) -> list[InboxItem]:
        """`operator`'s attention inbox of `items` (`needing_attention` of a listing): without what they
        dismissed, each new or seen (`sessions.client.attention`)."""
        from sessions.client.attention import inbox

        return inbox(items, self._store.attention_marks(operator, [item.key for item in items]))

    def mark(self, operator: str, key: str, mark: Mark) -> None:
        """Record that `operator` saw or dismissed the inbox item `key`."""
        self._store.mark_attention(operator, key, mark.value, time.time())

    def judge(self, session_id: str, *, accepted: bool, reason: str | None = None, by: str | None = None) -> None:
        """Record `by`'s word on the finished session's answer (`sessions.client.verdict`)."""
        from sessions.client.verdict import judge_answer

        judge_answer(self._store, session_id, accepted=accepted, reason=reason, by=by)

    def info(self, session_id: str) -> SessionInfo:
        return self._reads.session(session_id)

    def recent_actions(self, window: float) -> dict[str, int]:
        """Actions per session in the last `window` seconds (kept a few seconds: a rate moves slowly)."""
        return self._reads.recent_actions(window)

    def changed(self, session_id: str | None = None) -> int:
        """The change feed's stamp of a session (or of the listing): it moves when the session does."""
        return self._changes.stamp(session_id)

    # Commands

    def send(self, session_id: str, command: Command, *, name: str | None = None) -> Outcome:
        """Queue `command` and make sure a runner will apply it; returns at once with a queued outcome
        (`name` is what the answers call the command, default its kind). Raises `CommandRefused` when
        it cannot be queued: malformed, or the session has ended."""
        from sessions.client.commands import queue_command

        try:
            command_id = queue_command(self._store, session_id, command)
        except InvalidCommand as error:
            raise CommandRefused(error.problem[:1].upper() + error.problem[1:]) from None
        except SessionFinished as error:
            raise CommandRefused(str(error)) from None
        self._runners.ensure_running(session_id)
        name = name or command.kind.replace("_", " ")
        message = f"{name} queued; it applies at the next step boundary"
        return Outcome(OutcomeKind.QUEUED, message, session_id, command_id, name)

    def outcome(self, sent: Outcome) -> Outcome:
        """`sent` as the log tells it now (one read of the session's new events)."""
        return sent.settled(self.follow(sent.session_id).watch().handled) if sent.command_id else sent

    def wait(self, sent: Outcome, timeout: float) -> Outcome:
        """`sent` once its runner has handled it, or still queued after `timeout` seconds."""
        from sessions.client.commands import wait_for_outcome

        if not sent.command_id:
            return sent
        done = wait_for_outcome(self._store, sent.session_id, sent.command_id, timeout)
        return sent.settled({sent.command_id: done}) if done is not None else sent

    def restart(self, session_id: str) -> None:
        """Put a runner on a session whose runner died (it shows running, but nobody holds its lease)."""
        self._runners.ensure_running(session_id)

    # Reading

    def follow(self, session_id: str) -> Follower:
        """A follower of the session's log: each `watch()` reads only what changed since the last."""
        from sessions.client.view import Follower

        return Follower(session_id, self._reads, self._changes, self._runners)

    def watch(self, session_id: str) -> SessionView:
        """The session now, read whole (a long-lived reader keeps a `follow`er instead)."""
        return self.follow(session_id).watch()

    def events(
        self, session_id: str, upto: int | None = None, *, after: int = 0, view: SessionView | None = None
    ) -> list[Event]:
        """The log (or its events past `after` up to `upto`), masked; with `view`, by that view's secrets,
        so only the events asked for are read."""
        from sessions.store.reading import load_events

        return load_events(self._store, session_id, upto, after=after, secrets=view.secrets if view else None)

    def state_at(self, session_id: str, seq: int, view: SessionView | None = None) -> SessionState:
        """The state just after event `seq`, masked (kept in a small cache: the timeline asks again)."""
        return self._history.at(session_id, seq, view.secrets if view else None)

    def reask(self, session_id: str, call_seq: int, **options: Any) -> Counterfactual:
        """Ask a recorded model call again and compare (`sessions.client.counterfactual.reask`)."""
        from sessions.client.counterfactual import reask

        return reask(self._store, session_id, call_seq, **options)
