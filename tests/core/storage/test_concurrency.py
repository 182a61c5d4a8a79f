"""Several processes writing one brain at once: every write lands, nobody sees
"database is locked", and a compare-and-set conflict happens only where versions clashed.

Writers: two loops of 1,000 adds, two loops racing read-modify-write increments on the same
traces with `expect_version`, one loop updating traces nobody else touches, and real
`memgui add` processes, all started together.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter

ADDS_PER_LOOP = 1_000
INCREMENTS_PER_LOOP = 150
SOLO_UPDATES = 200
CLI_ADDS = 50  # real `memgui add` processes, in two loops (each process costs ~0.4 s here)
CLI_LOOPS = 2
SHARED_TRACES = 5

# One writer process. argv: brain, role, name, count, [trace ids as JSON]. It says "ready"
# once the brain is open, then starts at the line "go" on its stdin.
WORKER = r"""
import json, sys
from memgui.core.brain import Brain
from memgui.core.errors import Conflict

brain_path, role, name, count = sys.argv[1:5]
ids = json.loads(sys.argv[5]) if len(sys.argv) > 5 else []
count = int(count)
brain = Brain.open(brain_path, actor="cli")
print("ready", flush=True)
assert sys.stdin.readline() == "go\n"
report = {"name": name, "conflicts": [], "successes": {}}
if role == "add":
    for i in range(count):
        brain.add(f"{name} {i}", tags=[name])
elif role in ("increment", "solo"):
    for i in range(count):
        trace_id = ids[i % len(ids)]
        while True:
            seen = brain.get(trace_id)
            value = int(seen.content.split("=")[1]) + 1
            try:
                brain.update(trace_id, {"content": f"count={value}"},
                             expect_version=seen.version)
            except Conflict as clash:
                report["conflicts"].append([clash.trace_id, clash.expected, clash.actual])
                continue
            report["successes"][trace_id] = report["successes"].get(trace_id, 0) + 1
            break
brain.close()
print(json.dumps(report))
"""


def _start_worker(brain: Path, role: str, name: str, count: int, ids=()):
    argv = [sys.executable, "-c", WORKER, str(brain), role, name, str(count)]
    if ids:
        argv.append(json.dumps(list(ids)))
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _cli_add_loop(
    brain: Path, start: threading.Event, numbers: range, results: list[subprocess.CompletedProcess]
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MEMGUI_BRAIN"}
    start.wait()
    for i in numbers:
        argv = [
            sys.executable,
            "-m",
            "memgui",
            "--brain",
            str(brain),
            "--json",
            "add",
            f"cli {i}",
            "--tag",
            "cli",
        ]
        results.append(subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120))


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(tmp_path):
    brain_path = tmp_path / "shared.sqlite"
    with Brain.open(brain_path, actor="cli") as brain:
        shared = [brain.add("count=0", tags=["shared"]).id for _ in range(SHARED_TRACES)]
        private = [brain.add("count=0", tags=["private"]).id for _ in range(SHARED_TRACES)]
    start = threading.Event()

    workers = [
        _start_worker(brain_path, "add", "w1", ADDS_PER_LOOP),
        _start_worker(brain_path, "add", "w2", ADDS_PER_LOOP),
        _start_worker(brain_path, "increment", "inc1", INCREMENTS_PER_LOOP, shared),
        _start_worker(brain_path, "increment", "inc2", INCREMENTS_PER_LOOP, shared),
        _start_worker(brain_path, "solo", "solo", SOLO_UPDATES, private),
    ]
    cli_results: list[subprocess.CompletedProcess] = []
    cli_loops = [
        threading.Thread(
            target=_cli_add_loop,
            args=(brain_path, start, range(n, CLI_ADDS, CLI_LOOPS), cli_results),
            daemon=True,  # should a worker fail to get ready, the loop never starts
        )
        for n in range(CLI_LOOPS)
    ]
    for loop in cli_loops:
        loop.start()
    for worker in workers:  # every worker has the brain open and waits at the start line
        assert worker.stdout is not None and worker.stdout.readline() == "ready\n"
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    start.set()

    reports = {}
    for worker in workers:
        out, err = worker.communicate(timeout=240)
        assert worker.returncode == 0, err
        assert "locked" not in err.lower() and "Traceback" not in err
        report = json.loads(out)
        reports[report["name"]] = report
    for loop in cli_loops:
        loop.join(timeout=240)

    assert len(cli_results) == CLI_ADDS
    for done in cli_results:
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        assert json.loads(done.stdout)["tags"] == ["cli"]

    with Brain.open(brain_path, actor="cli") as brain:
        # Every add is there, once.
        for name in ("w1", "w2"):
            assert brain.count(TraceFilter(tag=name)) == ADDS_PER_LOOP
            contents = {brain.get(i).content for i in brain.list_ids(TraceFilter(tag=name))}
            assert contents == {f"{name} {i}" for i in range(ADDS_PER_LOOP)}
        cli_contents = {brain.get(i).content for i in brain.list_ids(TraceFilter(tag="cli"))}
        assert cli_contents == {f"cli {i}" for i in range(CLI_ADDS)}
        expected_total = 2 * SHARED_TRACES + 2 * ADDS_PER_LOOP + CLI_ADDS
        assert brain.info()["traces"] == expected_total

        # No increment was lost: each successful compare-and-set moved the count by one.
        racers = (reports["inc1"], reports["inc2"])
        for trace_id in shared:
            wins = sum(r["successes"].get(trace_id, 0) for r in racers)
            trace = brain.get(trace_id)
            assert trace.content == f"count={wins}"
            assert trace.version == 1 + wins
        assert sum(sum(r["successes"].values()) for r in racers) == 2 * INCREMENTS_PER_LOOP

        # A conflict always means the trace had really moved on since it was read.
        for report in racers:
            for trace_id, expected, actual in report["conflicts"]:
                assert trace_id in shared and actual > expected

        # The loop nobody raced saw no conflict at all.
        assert reports["solo"]["conflicts"] == []
        for trace_id in private:
            assert brain.get(trace_id).version == 1 + SOLO_UPDATES // SHARED_TRACES
