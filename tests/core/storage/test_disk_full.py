"""A disk that fills up mid-write: the write fails with memgui's StorageError, nothing of
it is kept, and the brain stays sound (a file-size limit stands in for the full disk)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # a real process

FILLING = """
import resource, signal, sys
from memgui.core.brain import Brain
from memgui.core.errors import StorageError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
brain = Brain.open(sys.argv[1], actor="test")
size = max(p.stat().st_size for p in [brain.path])
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 200_000, resource.RLIM_INFINITY))
for how in ("add", "batch"):
    try:
        if how == "add":
            for i in range(5000):
                brain.add(f"zqsingle{i} " + "x" * 400)
        else:
            with brain.batch():
                for i in range(5000):
                    brain.add(f"zqbatched{i} " + "y" * 400)
        print(how, "accepted")
    except StorageError as exc:
        print(how, "StorageError", exc)
    except Exception as exc:
        print(how, "other", type(exc).__name__, exc)
"""


def test_a_full_disk_fails_a_batch_with_a_storage_error_and_keeps_nothing_of_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        brain.add("before the disk filled")
    run = subprocess.run(
        [sys.executable, "-c", FILLING, str(path)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    lines = run.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["add", "StorageError"],
        ["batch", "StorageError"],
    ], run.stdout + run.stderr
    assert "batch failed due to a storage error" in lines[1]
    with Brain.open(path, actor="test") as again:
        conn = again.db.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert not again.search("zqbatched1", record_recall=False).traces
        again.add("after the disk was freed")
