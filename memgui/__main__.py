"""`python -m memgui` runs the `memgui` command."""

import sys

from memgui.cli import main

sys.exit(main())
