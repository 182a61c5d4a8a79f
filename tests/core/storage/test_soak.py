"""Soak: writers of every kind and a reader on one brain at once, and a writer that holds a
long transaction in the middle of it.

`memgui add` processes in two loops, a Python API writer (adds, and compare-and-set updates
of a counter) and a reader (searches, lists, gets) run together until the command loops are
done. Meanwhile another program holds the write lock: a `memgui add` with a short wait
fails, saying the brain is busy and who holds it; everyone else waits and goes on; the
reader and this test read on. At the end: every write that was reported done is in the
brain, once, as written; no process saw "database is locked" or any error at all; the file
passes SQLite's integrity check. Bounded by counts, not by time (the loops' length).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from tests.support.killed_child import LOCK_HOLDER, killed_once_it_says
from tests.support.paths import ROOT

CLI_LOOPS, CLI_ADDS = 2, 8  # `memgui add` processes per loop (each costs ~0.5 s here)
HOLD_WAIT_S = 1.0  # the short wait of the `memgui add` that meets the held lock

# argv: brain, start file, stop file. Adds and counts until the stop file is there.
API_WRITER = r"""
import json, os, sys
from memgui.core.brain import Brain
from memgui.core.errors import Conflict
brain_path, start, stop = sys.argv[1:4]
brain = Brain.open(brain_path, actor="api")
counter = brain.add("count=0", tags=["counter"]).id
print(json.dumps({"counter": counter}), flush=True)
while not os.path.exists(start):
    pass
added, counted, conflicts = [], 0, 0
while not os.path.exists(stop):
    added.append(brain.add(f"api {len(added)}", tags=["api"]).id)
    seen = brain.get(counter)
    try:
        brain.update(counter, {"content": f"count={counted + 1}"}, expect_version=seen.version)
        counted += 1
    except Conflict:
        conflicts += 1
brain.close()
print(json.dumps({"added": added, "counted": counted, "conflicts": conflicts}), flush=True)
"""

# argv: brain, start file, stop file. Reads until the stop file is there; counts failures.
READER = r"""
import json, os, sys
from memgui.core.brain import Brain
brain_path, start, stop = sys.argv[1:4]
brain = Brain.open(brain_path, actor="reader", create=False)
while not os.path.exists(start):
    pass
reads, failures = 0, []
while not os.path.exists(stop):
    try:
        hits = brain.search("soak", limit=5).hits
        for trace in brain.list_traces(limit=20):
            brain.get(trace.id)
        reads += 1 + len(hits)
    except Exception as error:
        failures.append(f"{type(error).__name__}: {error}")
brain.close()
print(json.dumps({"reads": reads, "failures": failures}), flush=True)
"""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMGUI_BRAIN"}
    env.update(
        PYTHONPATH=str(ROOT),
        XDG_STATE_HOME=str(tmp_path / "state"),
        MEMGUI_OLLAMA_URL="http://127.0.0.1:9",  # nothing listens: no embedding
        **extra,
    )
    return env


def _memgui(tmp_path: Path, brain: Path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memgui", "--brain", str(brain), "--json", *argv],
        capture_output=True,
        text=True,
        env=_env(tmp_path, **env),
        timeout=240,
    )


def _start(tmp_path: Path, script: str, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
    )


@pytest.mark.slow
def test_writers_and_a_reader_on_one_brain_lose_nothing_and_a_long_lock_is_named(
    tmp_path: Path,
) -> None:
    brain_path = tmp_path / "soak.sqlite"
    with Brain.open(brain_path, actor="test") as brain:
        for i in range(20):
            brain.add(f"soak seed {i}", tags=["seed"])
    start, stop = tmp_path / "start", tmp_path / "stop"
    writer = _start(tmp_path, API_WRITER, str(brain_path), str(start), str(stop))
    reader = _start(tmp_path, READER, str(brain_path), str(start), str(stop))
    assert writer.stdout is not None
    counter = json.loads(writer.stdout.readline())["counter"]  # the writer is ready
    cli_done: list[subprocess.CompletedProcess] = []

    def cli_loop(loop: int) -> None:
        for i in range(CLI_ADDS):
            cli_done.append(_memgui(tmp_path, brain_path, "add", f"soak cli {loop}-{i}"))

    loops = [threading.Thread(target=cli_loop, args=(n,)) for n in range(CLI_LOOPS)]
    start.touch()
    for loop in loops:
        loop.start()
    with Brain.open(brain_path, actor="test") as watcher:
        deadline = time.monotonic() + 120
        while watcher.count(TraceFilter(tag="api")) < 50:  # the writer is at work
            assert time.monotonic() < deadline, "the API writer made no progress"
            time.sleep(0.05)

    # Another program holds the write lock: a short wait ends in a clear refusal; the
    # others wait; reads go on.
    with killed_once_it_says(LOCK_HOLDER, [str(brain_path)], says="holding") as holder:
        began = time.monotonic()
        refused = _memgui(
            tmp_path, brain_path, "add", "soak refused", MEMGUI_WRITE_WAIT=str(HOLD_WAIT_S)
        )
        assert time.monotonic() - began >= HOLD_WAIT_S
        assert refused.returncode == 5, refused.stderr
        assert f"is busy: another program (pid {holder.pid}: " in refused.stderr
        assert "nothing was written" in refused.stderr
        with Brain.open(brain_path, actor="test", create=False) as reading:
            assert reading.count(TraceFilter(tag="seed")) == 20
            assert reading.search("soak seed 7", record_recall=False).hits

    for loop in loops:
        loop.join(timeout=240)
    stop.touch()
    written, err = writer.communicate(timeout=240)
    assert writer.returncode == 0 and err == "", err
    api = json.loads(written.splitlines()[-1])
    read, err = reader.communicate(timeout=240)
    assert reader.returncode == 0 and err == "", err
    reads = json.loads(read)
    assert reads["failures"] == [] and reads["reads"] > 0

    assert len(cli_done) == CLI_LOOPS * CLI_ADDS
    for done in cli_done:
        assert done.returncode == 0 and done.stderr == "", done.stderr
    cli_ids = {
        json.loads(done.stdout)["id"]: json.loads(done.stdout)["content"] for done in cli_done
    }

    conn = apsw.Connection(str(brain_path))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with Brain.open(brain_path, actor="test") as brain:
        for trace_id, content in cli_ids.items():
            assert brain.get(trace_id).content == content
        got = brain.get_many(api["added"])
        assert [got[i].content for i in api["added"]] == [
            f"api {n}" for n in range(len(api["added"]))
        ]
        assert brain.get(counter).content == f"count={api['counted']}"
        assert api["conflicts"] == 0  # nobody else wrote the counter
        assert brain.count(TraceFilter(include_deleted=True)) == (
            20 + 1 + len(cli_ids) + len(api["added"])
        )
        assert not brain.search("refused", record_recall=False).hits
