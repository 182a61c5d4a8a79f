"""A script run in a child interpreter and killed with SIGKILL at the point under test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.paths import ROOT

# argv: brain. Holds the brain's write lock (BEGIN IMMEDIATE and a write) until it is killed.
LOCK_HOLDER = r"""
import sys, time
import apsw
conn = apsw.Connection(sys.argv[1])
conn.setbusytimeout(60_000)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE brain_meta SET value = value WHERE key = 'created_at'")
print("holding", flush=True)
time.sleep(300)
"""


@contextmanager
def killed_once_it_says(
    script: str, args: list[str], says: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """Start `script`; once it prints `says`, run the block (given the child), then
    `kill -9` it."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=dict(env or os.environ, PYTHONPATH=str(ROOT)),
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == says
        yield child
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()


def stopped_once_it_says(
    script: str, args: list[str], says: str, signum: int, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Start `script`; once it prints `says`, send it `signum` and wait for it to end."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=dict(env or os.environ, PYTHONPATH=str(ROOT)),
    )
    assert child.stdout is not None
    heard = child.stdout.readline().strip()
    if heard == says:
        child.send_signal(signum)
    out, err = child.communicate(timeout=120)
    assert heard == says, f"the child said {heard!r}, not {says!r}: {err}"
    return subprocess.CompletedProcess(child.args, child.returncode, heard + "\n" + out, err)
