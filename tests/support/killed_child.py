"""A script run in a child interpreter and killed with SIGKILL at the point under test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.paths import ROOT


@contextmanager
def killed_once_it_says(script: str, args: list[str], says: str) -> Iterator[None]:
    """Start `script`; once it prints `says`, run the block, then `kill -9` it."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == says
        yield
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
