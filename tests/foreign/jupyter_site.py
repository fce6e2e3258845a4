"""The gallery's JupyterLab: `python jupyter_site.py FLAGS…`, JupyterLab's own command with a lifeline.

bench/foreign.py gives the flags (loopback, no token, nothing fetched from the internet) and the root
directory, a copy of jupyter/ (one notebook and a CSV file).
"""

import sys

from jupyterlab.labapp import main
from lifeline import hold

if __name__ == "__main__":
    hold()
    sys.exit(main())
