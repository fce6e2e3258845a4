"""The sessions package's exception tree, every error it raises on purpose.

    SessionsError
    ├── StoreError            the event store (defined in `sessions.store`; each backend translates its own errors)
    │   ├── SessionNotFound   no session with that id
    │   ├── SessionFinished   a command for a session that has ended (fork it instead)
    │   ├── SeqConflict       another writer appended first (the expected sequence number is stale)
    │   ├── LeaseLost         the writer's runner lease has moved on to another runner (its fencing token is stale)
    │   ├── StoreUnavailable  the database could not be opened or written
    │   ├── SessionInUse      a session that cannot be deleted now: a live runner holds it, or a fork needs its files
    │   └── RunnerBusy        another live runner holds the session (defined in `sessions.worker.runner`)
    ├── SessionInputError     a task, session id or event number that cannot be used to create or fork a session
    ├── InvalidCommand        an operator command of no documented shape (refused before it is queued)
    ├── CommandRefused        a command a client could not queue, in one sentence (defined in `sessions.client.outcomes`)
    ├── FilesLeft             a deleted session whose files could not all be removed (defined in `sessions.client.deletion`)
    ├── ExportUnavailable     an export needs a program or package that is not installed (defined in `sessions.client.export`)
    ├── ReaskError            a model call that cannot be re-asked, or an answer that cannot be adopted (defined in `sessions.client.counterfactual`)
    ├── PolicyError           an operator policy file or name that cannot be used (defined in `demo.operator_sim`)
    ├── UnusableOperator      $ANDOR_OPERATOR set to no usable operator name (defined in `sessions.client.identity`)
    ├── ShopUnavailable       the bundled demo shop could not be started for `eval` (defined in `demo.evaluation`)
    ├── RunnerChoiceError     an ANDOR_RUNNER value that names no way of running sessions (defined in `sessions.worker.pool`)
    ├── PostgresServerError   a throwaway PostgreSQL server that would not start (defined in `sessions.store.pgserver`)
    │   └── MissingPostgres   its binaries are not installed
    ├── FleetError            a part of `make fleet` that exited or did not answer while it started (defined in `sessions.worker.fleet`)
    └── UnknownModel          a model spec that names no backend, or whose recorded data cannot be used

Every message is one sentence a person can act on; the CLI and the console catch these by type (with
`planner.errors.PlannerError`; `sessions.client.errors` gathers the ones a client sees) and show the
message, never a traceback.
"""

from __future__ import annotations

__all__ = ["InvalidCommand", "SessionInputError", "SessionsError", "UnknownModel"]


class SessionsError(Exception):
    """Base of every error the sessions package raises on purpose."""


class SessionInputError(SessionsError):
    """A task, session id or event number given to `create_session`, `fork_session` or `load_state` that cannot be used."""


class InvalidCommand(SessionsError):
    """A command that is not of any documented shape (rejected before it is queued). `problem` is what
    is wrong without naming the command, for a form that already says which one it sends."""

    def __init__(self, message: str, problem: str | None = None) -> None:
        super().__init__(message)
        self.problem = problem or message


class UnknownModel(SessionsError):
    """A --model value that names no backend, or a session whose recorded model data cannot be used."""
