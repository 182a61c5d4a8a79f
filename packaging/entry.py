"""The frozen program's entry: the `memgui` command (memgui/__main__.py)."""

import sys

from memgui.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
