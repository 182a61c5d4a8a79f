"""A brain that does not exist yet, made whole or not at all (an import into a new file).

The brain is built under a hidden temporary name beside its path (`.<name>.new-<pid>`) and
linked into place when the work in it is done, so the path never holds an empty or partial
brain: a job that fails, is stopped or is killed leaves the path as it was, absent. What a
killed one left beside it is removed by the next import into that path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export_common import link_into_place
from memgui.core.storage import leftovers

_SIDE_FILES = ("-wal", "-shm", "-journal")


def _temporary_pattern(dest: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(dest.name)}\.new-(?P<pid>\d+)(?:-wal|-shm|-journal)?")


def remove_killed_builds(dest: Path) -> list[str]:
    """Remove what a build of a brain at `dest` that was killed left beside it."""
    return leftovers.remove_stale_files(dest.parent, _temporary_pattern(dest))


@contextmanager
def brain_made_whole(dest: Path, brain_id: str, actor: str) -> Iterator[Brain]:
    """A new brain to write, which takes the name `dest` only when the block ends without
    an error; `dest` must not exist, and must not appear meanwhile (then nothing is kept
    and the error says so)."""
    dest = Path(os.path.abspath(dest))
    if os.path.lexists(dest):
        raise InvalidArgument("brain", f"already exists (got '{dest}')", str(dest))
    made = [p for p in dest.parents if not p.exists()]
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_killed_builds(dest)
    temporary = dest.with_name(f".{dest.name}.new-{os.getpid()}")
    _remove(temporary)
    try:
        brain = Brain.open(temporary, brain_id=brain_id, actor=actor)
        try:
            yield brain
        finally:
            brain.close()  # checkpointed: one file, no -wal beside it
        if not link_into_place(temporary, dest):  # never replaces a brain made meanwhile
            raise InvalidArgument(
                "brain",
                f"was made by another program while the import ran; nothing was written to "
                f"it, import again (got '{dest}')",
                str(dest),
            )
    finally:
        _remove(temporary)
        if not dest.exists():
            for folder in made:
                try:
                    folder.rmdir()
                except OSError:
                    break


def _remove(temporary: Path) -> None:
    for path in (temporary, *(Path(f"{temporary}{side}") for side in _SIDE_FILES)):
        path.unlink(missing_ok=True)
