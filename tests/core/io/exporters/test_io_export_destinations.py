"""An export into a place it cannot write is a clear InvalidArgument, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export import FORMATS, export
from memgui.core.progress import run_to_end
from tests.support.paths import ROOT
from tests.support.privileges import (
    NO_PERMISSIONS_REASON,
    honouring_permissions,
    memgui_honouring_permissions,
)


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("below", ["afile/out", "afile/sub/out"])
def test_a_destination_below_a_file_names_the_path(
    brain: Brain, tmp_path: Path, fmt: str, below: str
) -> None:
    brain.add("a trace to export")
    folder = tmp_path / "dest"
    folder.mkdir()
    (folder / "afile").write_text("keep me", encoding="utf-8")
    dest = folder / below
    with pytest.raises(InvalidArgument) as caught:
        run_to_end(export(brain, dest, fmt))
    assert caught.value.field == "path" and caught.value.value == str(dest)
    assert str(caught.value) == (
        f"invalid argument: path is below '{folder / 'afile'}', which is not a folder "
        f"(got '{dest}')"
    )
    assert listing(folder) == ["afile"]  # nothing written, not even a temporary file
    assert (folder / "afile").read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize("fmt", ["sqlite", "json", "jsonl"])
def test_a_file_destination_in_a_missing_folder_is_named(
    brain: Brain, tmp_path: Path, fmt: str
) -> None:
    dest = tmp_path / "nowhere" / "out"
    with pytest.raises(InvalidArgument, match="names a folder that does not exist"):
        run_to_end(export(brain, dest, fmt))
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.skipif(honouring_permissions() is None, reason=NO_PERMISSIONS_REASON)
@pytest.mark.parametrize(
    ("fmt", "name"),
    # A file export makes no folder: into a folder, or a missing one, is refused before this.
    [(fmt, "out") for fmt in FORMATS]
    + [(fmt, name) for fmt in ("markdown", "obsidian") for name in ("new/out", ".")],
)
def test_a_folder_without_write_permission_is_named(tmp_path: Path, fmt: str, name: str) -> None:
    brain_path = tmp_path / "b.sqlite"
    with Brain.open(brain_path, actor="test") as brain:
        brain.add("a trace to export")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    dest = locked / name
    result = memgui_honouring_permissions(
        brain_path, "export", str(dest), "--format", fmt, cwd=ROOT
    )
    locked.chmod(0o755)
    assert result.returncode == 2, result.stderr
    assert f"path cannot be written: no permission to write in '{locked}'" in result.stderr
    assert "unexpectedly" not in result.stderr
    assert listing(locked) == []


@pytest.mark.parametrize("fmt", ["json", "jsonl", "sqlite"])
def test_a_pipe_or_a_link_where_the_file_goes_is_refused_and_left_as_it_is(
    brain: Brain, tmp_path: Path, fmt: str
) -> None:
    import os
    import stat

    brain.add("kept in the brain")
    pipe = tmp_path / "pipe.out"
    os.mkfifo(pipe)
    target = tmp_path / "target.json"
    target.write_text("theirs")
    link = tmp_path / "link.out"
    link.symlink_to(target)
    for dest in (pipe, link):
        with pytest.raises(InvalidArgument, match="path"):
            run_to_end(export(brain, dest, fmt))
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode) and link.is_symlink()
    assert target.read_text() == "theirs"


@pytest.mark.parametrize("command", ["export", "import"])
def test_an_empty_path_is_refused_not_taken_for_the_current_folder(
    tmp_path: Path, command: str, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgui.__main__ import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "note.md").write_text("---\nid: x\n---\nhello\n")
    brain = str(tmp_path / "b.sqlite")
    code = main(["--brain", brain, command, ""])
    assert code == 2 and "path must name a file or folder" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["note.md"]  # nothing written
