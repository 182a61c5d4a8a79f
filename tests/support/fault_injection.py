"""Killing a job at a chosen point, and judging what it left.

A *zygote* process imports memgui once and forks one child per trial, so a trial costs the
job's own time, not an interpreter's start. The child counts the job's steps on its main
thread — every SQL statement (an exec tracer on every connection it opens) and every file
call of the kinds a job makes (open, write, fsync, rename, link, unlink, mkdir, rmdir) —
and kills itself with SIGKILL at step N. The point is a step, not a time: a trial stops at
the same place however loaded the machine is (the checkpoint thread, which runs on timers,
is not counted).

The judge reads what the trial left: SQLite's integrity check, the brain's rows with the
values that differ from run to run (clock readings, batch ids) masked, both full-text
indexes against the rows, and the files beside the brain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from tests.support.paths import ROOT

ZYGOTE = r"""
import json, os, signal, sys, tempfile, threading, traceback
import apsw
from memgui.__main__ import main as cli_main
from memgui.core.brain import Brain
# What a command imports when it runs, imported once here rather than in every child.
import memgui.core.io.writing.commit, memgui.core.io.exporters.export, memgui.core.io.planning.plan

assert threading.active_count() == 1, "the zygote must hold no thread: it forks"
MAIN = threading.get_ident()
FILE_CALLS = ("open", "write", "fsync", "rename", "replace", "link", "unlink", "mkdir", "rmdir")
state = {"steps": 0, "kill_at": None}

def step():
    if threading.get_ident() == MAIN:
        state["steps"] += 1
        if state["steps"] == state["kill_at"]:
            os.kill(os.getpid(), signal.SIGKILL)

def traced(cursor, sql, bindings):
    step()
    return True

def counted(call):
    def run(*args, **kwargs):
        step()
        return call(*args, **kwargs)
    return run

def job(op, args):
    if op == "cli":
        return cli_main(args["argv"])
    with Brain.open(args["brain"], actor="test") as brain:
        if op == "merge":
            brain.merge(args["ids"])
        elif op == "update":
            brain.update(args["id"], args["patch"])
        elif op == "revert":
            brain.revert(args["batch"])
        else:
            raise ValueError(op)
    return 0

def trial(request):
    os.chdir(request["cwd"])
    os.environ["TMPDIR"] = tempfile.tempdir = request["tmpdir"]
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    state["kill_at"] = request["kill_at"]
    apsw.connection_hooks.append(lambda conn: setattr(conn, "exec_trace", traced))
    for name in FILE_CALLS:
        setattr(os, name, counted(getattr(os, name)))
    code = job(request["op"], request["args"])
    sys.stdout.flush()
    with open(request["report"], "w") as out:
        json.dump({"steps": state["steps"], "code": code}, out)

for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            trial(request)
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    print(json.dumps({"killed": killed, "exit": code}), flush=True)
"""


@dataclass(frozen=True)
class Outcome:
    killed: bool
    steps: int = 0  # how many steps the job took (when it was not killed)
    code: int = 0  # its exit code (a command's), when it was not killed


class Zygote:
    """One process that forks a child per trial (see the module docstring)."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.trials = 0
        self.process = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=dict(
                os.environ,
                PYTHONPATH=str(ROOT),
                XDG_STATE_HOME=str(scratch / "state"),  # the command's log file
                XDG_DATA_HOME=str(scratch / "data"),
                MEMGUI_OLLAMA_URL="http://127.0.0.1:9",  # nothing listens: no embedding
            ),
        )

    def run(
        self, op: str, args: dict[str, Any], cwd: Path, tmpdir: Path, kill_at: int | None
    ) -> Outcome:
        """Run `op` in a child in `cwd`, killed at step `kill_at` (None: not killed)."""
        self.trials += 1
        report = self.scratch / f"report-{self.trials}.json"
        log = self.scratch / f"log-{self.trials}.txt"
        request = {
            "op": op, "args": args, "cwd": str(cwd), "tmpdir": str(tmpdir),
            "kill_at": kill_at, "report": str(report), "log": str(log),
        }  # fmt: skip
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        if answer["killed"]:
            return Outcome(True)
        assert answer["exit"] == 0 and report.exists(), log.read_text()
        done = json.loads(report.read_text())
        return Outcome(False, done["steps"], done["code"] or 0)

    def log(self) -> str:
        """What the last trial's child wrote."""
        return (self.scratch / f"log-{self.trials}.txt").read_text()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


# --- judging what a trial left --------------------------------------------------------------

# Tables whose rows are derived (rebuilt, never compared): the indexes and their bookkeeping.
DERIVED = ("memgui_fts", "memgui_stems", "memory_traces_fts", "memory_traces_vec", "sqlite_")
# Values that differ from one run of the same job to the next: clock readings.
VOLATILE_KEYS = frozenset({"at", "updated_at", "exported_at"})
VOLATILE_META = frozenset({"created_at"})  # brain_meta rows a new brain writes with the clock


# A link's time is when it was made: a merge moving links makes them anew.
LINK_OPS = frozenset({"link", "unlink"})


def _masked(value: Any, batches: dict[str, str], keys: frozenset[str] = VOLATILE_KEYS) -> Any:
    if isinstance(value, str):
        if value.startswith("b_") and value in batches:
            return batches[value]
        if value[:1] in "{[":
            try:
                return json.dumps(_masked(json.loads(value), batches, keys), sort_keys=True)
            except ValueError:
                return value
        return value
    if isinstance(value, dict):
        return {
            k: ("<volatile>" if k in keys else _masked(v, batches, keys)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_masked(v, batches, keys) for v in value]
    return value


def masked(document: Any) -> Any:
    """A JSON document with its clock readings masked."""
    return _masked(document, {})


def rows_of(conn: apsw.Connection) -> dict[str, list[tuple]]:
    """Every ordinary table's rows (derived ones left out), with run-to-run values masked."""
    tables = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        if not r[0].startswith(DERIVED)
    ]
    batches: dict[str, str] = {}
    if "memgui_journal" in tables:
        for (batch,) in conn.execute("SELECT batch_id FROM memgui_journal ORDER BY id"):
            batches.setdefault(batch, f"<batch {len(batches) + 1}>")
    out: dict[str, list[tuple]] = {}
    for table in tables:
        columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        rows = []
        for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
            named = dict(zip(columns, row, strict=True))
            if table == "brain_meta" and named.get("key") in VOLATILE_META:
                named["value"] = "<volatile>"
            keys = VOLATILE_KEYS
            if table == "memory_links" or named.get("op") in LINK_OPS:
                keys = VOLATILE_KEYS | {"created_at"}
            rows.append(tuple(sorted(_masked(named, batches, keys).items())))
        out[table] = rows
    return out


def state_of(path: Path) -> dict[str, list[tuple]] | None:
    """The brain's masked rows after SQLite's integrity check passed; None: no file."""
    if not path.exists():
        return None
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
    try:
        conn.setbusytimeout(10_000)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return rows_of(conn)
    finally:
        conn.close()


def check_indexes(path: Path) -> None:
    """Both full-text indexes hold exactly the rows, once the next memgui process indexed
    what a killed one left marked (it does so before any search)."""
    from memgui.core.brain import Brain
    from memgui.core.search import fulltext

    with Brain.open(path, actor="test") as brain:
        brain.flush_index()
        conn = brain.db.conn
        if "memory_traces_fts" in brain.db.tables:  # against its content table, exactly
            conn.execute(
                "INSERT INTO memory_traces_fts(memory_traces_fts, rank) "
                "VALUES ('integrity-check', 1)"
            )
        if "memgui_fts" not in brain.db.tables:
            return
        rows = conn.execute(fulltext.ROW_TEXT_SQL).fetchall()
        fulltext.fill_temp_index(brain.db, "judge_fts", rows)
        found = []
        for schema, table in (("main", "memgui_fts"), ("temp", "judge_fts")):
            conn.execute(
                f"CREATE VIRTUAL TABLE temp.vocab_{table} "
                f"USING fts5vocab({schema}, {table}, 'instance')"
            )
            found.append(
                conn.execute(
                    f"SELECT term, doc, col, offset FROM temp.vocab_{table} ORDER BY 1, 2, 3, 4"
                ).fetchall()
            )
        have, want = found
        assert have == want, "memgui's full-text index does not hold exactly the rows"
        assert conn.execute("SELECT count(*) FROM memgui_fts_pending").fetchone()[0] == 0


def listing(folder: Path) -> list[str]:
    """Every file and folder below `folder`, as relative paths."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def differences(state: Any, *expected: Any) -> str:
    """Where `state` differs from each of `expected`, table by table (for a failure)."""
    if state is None or any(e is None for e in expected):
        return f"{state is None=}, {[e is None for e in expected]}"
    out = []
    for number, wanted in enumerate(expected, start=1):
        for table in sorted(set(state) | set(wanted)):
            have, want = state.get(table, []), wanted.get(table, [])
            if have != want:
                extra = [r for r in have if r not in want][:2]
                missing = [r for r in want if r not in have][:2]
                out.append(f"[{number}] {table}: extra {extra}, missing {missing}")
    return "\n".join(out)
