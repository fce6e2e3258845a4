"""The gallery's apps end with their launcher: `hold()` watches the pipe bench/foreign.py gives as stdin.

The launcher starts each app in a session of its own and stops it when its block ends; should the launcher
itself be killed first (a test run ended by a timeout), its end of the pipe closes and the app sends itself
SIGTERM, so it shuts down as on any stop (JupyterLab ends its kernels) instead of serving on forever.
"""

import os
import signal
import threading


def hold() -> None:
    def watch() -> None:
        # os.read, not sys.stdin: a daemon thread blocked inside sys.stdin's buffer holds its lock, and the
        # interpreter waits a second for that lock at exit.
        while os.read(0, 4096):
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="lifeline", daemon=True).start()
