"""`python -m memgui` runs the `memgui` command."""

import sys

from memgui.cli.main import main

sys.exit(main())
