"""Who the operator at this machine is when nothing else says: the command line's default sender,
and the console's when it runs on loopback without a sign-in.

One rule for both front ends, so a person who edits from the console and then from a shell is the same
name in the log: $ANDOR_OPERATOR, else the login name.
"""

from __future__ import annotations

import getpass
import os

from planner.commands import sender
from sessions.errors import SessionsError

__all__ = ["UnusableOperator", "local_operator"]


class UnusableOperator(SessionsError):
    """$ANDOR_OPERATOR is set but is not a name a command can carry."""


def local_operator() -> str | None:
    """$ANDOR_OPERATOR, else the user name (None when the system has none: the operator is not known).

    The name is checked as a command checks its `by`, so a bad one is refused here, naming where it came
    from, rather than as an "operator" field of every command sent later."""
    named = os.environ.get("ANDOR_OPERATOR", "")
    if named.strip():
        if sender({"by": named}) is None:
            raise UnusableOperator(
                "$ANDOR_OPERATOR is not a usable operator name; give one line of at most 200 characters"
            )
        return named.strip()
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name and no user database entry: not known
        return None
    return sender({"by": user})
