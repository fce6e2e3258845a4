"""`python -m demo suite` runs every demo task; `python -m demo run [TASK_ID]` one of them."""

import sys

from demo.cli import main

sys.exit(main())
