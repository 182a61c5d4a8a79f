"""Where the tests find things: the project, the tests, their fixtures, the shared material.

Named here once, so that a test reads the same files whichever folder it sits in.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the project
TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"
SHARED = ROOT.parent / "shared"  # the shared reference material, beside the project
AGENTOS = SHARED / "fixtures" / "agentos"
CORPORA = SHARED / "corpora"
PACKAGING = ROOT / "packaging"  # the frozen build's spec, hooks, desktop files and scripts
