"""What a folder import reads: regular files inside the folder, within a size bound.

A vault is someone else's folder: a link in it may name any file of the machine, a device
or a pipe.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from memgui.core.io.planning.plan import ImportPlan
from memgui.core.io.records import DUPLICATE, NEW, REFUSED
from memgui.core.io.source_files import MAX_NOTE_BYTES
from tests.support.planning import plan_in_thread, traces_by_file


def not_read(the_plan: ImportPlan) -> dict[str, str]:
    return {r.source: r.reason for r in the_plan.not_read}


def make_device(path: Path) -> bool:
    """A character device like /dev/null at `path` (needs the right to make one)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        return False
    return True


@pytest.fixture
def hostile_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "sub").mkdir()
    (vault / "ok.md").write_text("a normal note\n")
    (vault / "sub" / "real.md").write_text("a note in a subfolder\n")
    (vault / "inside.md").symlink_to(vault / "sub" / "real.md")  # inside: read
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("SECRET outside the vault\n")
    (vault / "secret.md").symlink_to(outside / "secret.md")
    (vault / "null.md").symlink_to("/dev/null")  # a device outside (/dev/zero would never end)
    (vault / "broken.md").symlink_to(vault / "gone.md")
    os.mkfifo(vault / "pipe.md")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(vault / "sock.md"))
    server.close()  # the socket file stays
    return vault


@pytest.mark.parametrize("fmt", ["markdown", "obsidian"])
def test_a_vault_reads_only_its_own_regular_files(
    hostile_vault: Path, brain_path: Path, fmt: str
) -> None:
    the_plan = plan_in_thread(brain_path, hostile_vault, format=fmt)
    read = traces_by_file(the_plan)
    assert set(read) == {"ok.md", "inside.md", "sub/real.md"}
    assert read["ok.md"].verdict == NEW
    assert read["inside.md"].fields["content"] == "a note in a subfolder"  # the same note
    assert {read["inside.md"].verdict, read["sub/real.md"].verdict} == {NEW, DUPLICATE}
    assert not any("SECRET" in str(r.fields.get("content")) for r in the_plan.records)
    unread = not_read(the_plan)
    outside = "link to a file outside the source folder, not read"
    assert unread["secret.md"] == outside
    assert unread["null.md"] == outside
    assert unread["broken.md"] == "broken link, not read"
    assert unread["pipe.md"] == "a pipe (FIFO), not read"
    assert unread["sock.md"] == "a socket, not read"


def test_a_device_inside_the_vault_is_not_read(tmp_path: Path, brain_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "ok.md").write_text("a normal note\n")
    if not make_device(vault / "dev.md"):
        pytest.skip("making a device file needs privileges this run lacks")
    the_plan = plan_in_thread(brain_path, vault, format="markdown")
    assert set(traces_by_file(the_plan)) == {"ok.md"}
    assert not_read(the_plan)["dev.md"] == "a device, not read"


def test_a_note_over_the_size_bound_is_refused_unread(tmp_path: Path, brain_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "ok.md").write_text("a normal note\n")
    with open(vault / "huge.md", "wb") as huge:  # sparse: no disk is used
        huge.truncate(MAX_NOTE_BYTES + 1)
    (vault / "fits.md").write_bytes(b"x" * MAX_NOTE_BYTES)
    the_plan = plan_in_thread(brain_path, vault, format="markdown")
    read = traces_by_file(the_plan)
    assert read["ok.md"].verdict == NEW and read["fits.md"].verdict == NEW
    huge = read["huge.md"]
    assert huge.verdict == REFUSED and huge.value == MAX_NOTE_BYTES + 1
    assert huge.reason == (
        f"the file is {MAX_NOTE_BYTES + 1:,} bytes; "
        f"a file over {MAX_NOTE_BYTES:,} bytes is not read"
    )
    assert "content" not in huge.fields


def test_a_state_file_over_the_size_bound_cannot_be_read(tmp_path: Path, brain_path: Path) -> None:
    state = tmp_path / "STATE.md"
    with open(state, "wb") as huge:
        huge.truncate(MAX_NOTE_BYTES + 1)
    the_plan = plan_in_thread(brain_path, state, format="gsd")
    assert the_plan.unreadable == (
        f"STATE.md:1: the file is {MAX_NOTE_BYTES + 1:,} bytes; "
        f"a file over {MAX_NOTE_BYTES:,} bytes is not read"
    )


def test_a_chatgpt_folder_reads_no_link_outside_nor_pipe(tmp_path: Path, brain_path: Path) -> None:
    export = tmp_path / "export"
    (export / "nested").mkdir(parents=True)
    outside = tmp_path / "elsewhere.json"
    outside.write_text('[{"title": "outside", "mapping": {}}]')
    (export / "elsewhere.json").symlink_to(outside)
    os.mkfifo(export / "nested" / "conversations.json")  # also met by format detection
    (export / "ok.json").write_text('[{"title": "inside", "mapping": {}}]')
    the_plan = plan_in_thread(brain_path, export, format="chatgpt")
    titles = [r.fields.get("title") for r in the_plan.records if r.kind == "conversation"]
    assert titles == ["inside"]
    unread = {Path(s).name: reason for s, reason in not_read(the_plan).items()}
    assert unread["elsewhere.json"] == "link to a file outside the source folder, not read"
    assert unread["conversations.json"] == "a pipe (FIFO), not read"
    detected = plan_in_thread(brain_path, export)  # format auto: detection waits on no pipe
    assert detected.format == "chatgpt"
