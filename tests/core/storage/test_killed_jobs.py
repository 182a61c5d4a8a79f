"""Jobs killed or stopped halfway: what they began is undone, and what `kill -9` left
(temporary files, the planner's folder, an unfinished backup) goes with the next job of
its kind. Each child stops at a state it reports (never after a delay), then is signalled.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.io.exporters.export import export
from memgui.core.progress import run_to_end
from memgui.core.storage import schema
from tests.support.killed_child import killed_once_it_says, stopped_once_it_says

TRACES = 1_200  # more than one progress step of every exporter

# argv: brain, dest, format, glob of what the export writes before it is done (beside dest).
EXPORT_UNTIL_DEBRIS = r"""
import signal, sys
from pathlib import Path
from memgui.core.brain import Brain
from memgui.core.io.exporters.export import export
brain_path, dest, fmt, debris = sys.argv[1:5]
dest = Path(dest)
brain = Brain.open(brain_path, actor="test")
for event in export(brain, dest, fmt):
    if list(dest.parent.glob(debris)) or (dest.is_dir() and list(dest.glob(debris))):
        print("mid-export", flush=True)
        signal.pause()
print("finished", flush=True)
"""

# The `memgui` command, paused in its job loop once `folder` holds what `pattern` names.
CLI_PAUSED_WHEN = r"""
import os, signal, sys
from pathlib import Path
import {module} as command
from memgui.__main__ import main
def paused(job, on_progress=None):
    try:
        while True:
            try:
                next(job)
            except StopIteration as stop:
                return stop.value
            if list(Path({folder!r}).glob({pattern!r})):
                # Not signal.pause(): the kernel may hand the signal to another thread of
                # the process, and the main thread's pause would go on. Whichever thread
                # takes it writes a byte to the wakeup pipe; the read returns, and Python
                # runs the handler here, in the main thread.
                woken, wake = os.pipe()
                os.set_blocking(wake, False)
                signal.set_wakeup_fd(wake)
                print("under way", flush=True)
                while True:
                    os.read(woken, 1)
    finally:
        job.close()
command.run_to_end = paused
sys.exit(main(sys.argv[1:]))
"""

DEBRIS = {
    "markdown": ".memgui-export-*",
    "obsidian": ".memgui-export-*",
    "json": "out.json.export-tmp-*",
    "jsonl": "out.jsonl.export-tmp-*",
    "sqlite": ".out.sqlite.export-tmp-*",
}


def _dest(tmp_path: Path, fmt: str) -> Path:
    return tmp_path / ("vault" if fmt in ("markdown", "obsidian") else f"out.{fmt}")


def _debris(tmp_path: Path, fmt: str) -> list[Path]:
    dest = _dest(tmp_path, fmt)
    found = list(tmp_path.glob(DEBRIS[fmt]))
    return found + (list(dest.glob(DEBRIS[fmt])) if dest.is_dir() else [])


@pytest.fixture
def full_brain(tmp_path: Path) -> Path:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain, brain.batch():
        for i in range(TRACES):
            brain.add(f"memory {i} " + "words " * 30, tags=["bulk"], category="DECISION")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("fmt", list(DEBRIS))
def test_what_a_killed_export_left_goes_with_the_next_export(
    tmp_path: Path, full_brain: Path, fmt: str
) -> None:
    dest = _dest(tmp_path, fmt)
    argv = [str(full_brain), str(dest), fmt, DEBRIS[fmt]]
    with killed_once_it_says(EXPORT_UNTIL_DEBRIS, argv, says="mid-export"):
        pass
    assert _debris(tmp_path, fmt)  # kill -9 leaves them: only their process knew them
    with Brain.open(full_brain, actor="test") as brain:
        result = run_to_end(export(brain, dest, fmt))
    assert result.exported == TRACES
    assert _debris(tmp_path, fmt) == []
    if fmt in ("markdown", "obsidian"):
        assert len(list(dest.glob("*/*/*.md"))) == TRACES


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fmt", "signum"),
    [("markdown", signal.SIGTERM), ("json", signal.SIGHUP), ("sqlite", signal.SIGTERM)],
)
def test_a_stopped_export_leaves_nothing(
    tmp_path: Path, full_brain: Path, fmt: str, signum: int
) -> None:
    dest = _dest(tmp_path, fmt)
    folder = dest if fmt == "markdown" else tmp_path
    script = CLI_PAUSED_WHEN.format(
        module="memgui.cli.commands.exports", folder=str(folder), pattern=DEBRIS[fmt]
    )
    argv = ["--brain", str(full_brain), "export", str(dest), "--format", fmt]
    done = stopped_once_it_says(script, argv, "under way", signum)
    assert done.returncode == 128 + signum, done.stderr
    name = signal.Signals(signum).name
    assert f"memgui: stopped by {name}; what the command had begun was undone" in done.stderr
    assert _debris(tmp_path, fmt) == [] and not os.path.lexists(dest)


def _jsonl_source(path: Path, count: int) -> Path:
    header = {
        "record": "header", "format": "agent-memory-export", "version": 1,
        "exported_at": 1767225600, "embedding_model": "nomic-embed-text", "embedding_dim": 768,
        "schema_version": 3, "agent_memory_version": "0.1.0", "exported_rows": count,
        "exported_links": 0,
    }  # fmt: skip
    lines = [json.dumps(header)]
    for key in range(1, count + 1):
        lines.append(
            json.dumps(
                {
                    "record": "memory",
                    "key": key,
                    "type": "DECISION",
                    "content": f"note {key} " + "lorem ipsum " * 10,
                    "tags": [],
                    "source": "cli",
                    "scope": None,
                    "created_at": 1767225600,
                    "last_accessed": 1767225600,
                    "access_count": 0,
                    "expires_at": None,
                }  # fmt: skip
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A temporary folder of the test's own, for this process and its children."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(folder))
    return dict(os.environ, TMPDIR=str(folder))


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["plan", "commit"])
def test_an_import_into_a_new_brain_killed_leaves_no_brain(
    tmp_path: Path, scratch: dict[str, str], phase: str
) -> None:
    from memgui.__main__ import main

    source = _jsonl_source(tmp_path / "g.jsonl", 3_000)
    new = tmp_path / "new.sqlite"
    folder, pattern = (scratch["TMPDIR"], "memgui-plan-*")
    if phase == "commit":
        folder, pattern = str(tmp_path), ".new.sqlite.new-*"
    script = CLI_PAUSED_WHEN.format(
        module="memgui.cli.commands.imports", folder=folder, pattern=pattern
    )
    with killed_once_it_says(
        script, ["--brain", str(new), "import", str(source)], "under way", env=scratch
    ):
        pass
    planning = Path(scratch["TMPDIR"])
    assert not new.exists()  # as before: absent, not an empty brain
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".new.sqlite.new-")]
    planned = [p.name for p in planning.iterdir()]
    assert left if phase == "commit" else planned  # what kill -9 could not remove
    assert main(["--brain", str(new), "import", str(source)]) == 0
    assert [p.name for p in planning.iterdir()] == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl", "new.sqlite", "scratch"]
    with Brain.open(new) as brain:
        assert brain.count() == 3_000


@pytest.mark.slow
def test_an_import_into_a_new_brain_stopped_leaves_nothing(
    tmp_path: Path, scratch: dict[str, str]
) -> None:
    source = _jsonl_source(tmp_path / "g.jsonl", 3_000)
    new = tmp_path / "new.sqlite"
    script = CLI_PAUSED_WHEN.format(
        module="memgui.cli.commands.imports", folder=str(tmp_path), pattern=".new.sqlite.new-*"
    )
    argv = ["--brain", str(new), "import", str(source)]
    done = stopped_once_it_says(script, argv, "under way", signal.SIGTERM, env=scratch)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl", "scratch"]
    assert list(Path(scratch["TMPDIR"]).iterdir()) == []


# argv: brain. Migrates it by its first write, paused while the backup is being written.
MIGRATION_PAUSED_IN_BACKUP = r"""
import signal, sys, types
import apsw
from memgui.core.storage import migration
from memgui.core.brain import Brain

class PausedBackup:
    def __init__(self, backup):
        self.backup = backup
    def __enter__(self):
        self.backup.__enter__()
        return self
    def __exit__(self, *exc):
        return self.backup.__exit__(*exc)
    @property
    def done(self):
        return self.backup.done
    def step(self, pages):
        self.backup.step(1)
        print("mid-backup", flush=True)
        signal.pause()

class Connection(apsw.Connection):
    def backup(self, *args):
        return PausedBackup(super().backup(*args))

paused = types.ModuleType("apsw")
paused.__dict__.update(apsw.__dict__)
paused.Connection = Connection
migration.apsw = paused
Brain.open(sys.argv[1], actor="test").add("the first write migrates")
"""


def _schema_1_brain(path: Path) -> None:
    with Brain.open(path, actor="test") as brain, brain.batch():
        for i in range(300):
            brain.add(f"memory {i}")
    conn = apsw.Connection(str(path))
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("UPDATE brain_meta SET value = '1' WHERE key = ?", (schema.SCHEMA_KEY,))
    conn.close()


@pytest.mark.slow
def test_a_backup_cut_short_never_passes_for_one_and_goes_with_the_next_migration(
    tmp_path: Path,
) -> None:
    path = tmp_path / "brain.sqlite"
    _schema_1_brain(path)
    with killed_once_it_says(MIGRATION_PAUSED_IN_BACKUP, [str(path)], says="mid-backup"):
        pass
    partial = [p.name for p in tmp_path.iterdir() if ".backup-pre-" in p.name]
    backup = f"brain.sqlite.backup-pre-{schema.SCHEMA_VERSION}-"
    assert partial and all(name.startswith(f".{backup}") for name in partial)
    assert not list(tmp_path.glob("brain.sqlite.backup-pre-*"))  # nothing that looks whole
    with Brain.open(path, actor="test") as brain:
        assert brain.info()["schema_version"] == 1
        brain.add("the first write migrates")
        assert brain.info()["schema_version"] == schema.SCHEMA_VERSION
    backups = [p.name for p in tmp_path.iterdir() if ".backup-pre-" in p.name]
    assert len(backups) == 1 and backups[0].startswith(backup)
    conn = apsw.Connection(str(tmp_path / backups[0]))
    assert conn.execute("SELECT count(*) FROM memory_traces").fetchone()[0] == 300
    conn.close()
