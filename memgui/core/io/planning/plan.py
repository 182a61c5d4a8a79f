"""Planning an import: read a source, classify every record against the brain, write nothing.

`plan(brain, source, format, options)` is a core job (it yields `Progress` and returns the
`ImportPlan`). It reads the source with the reader of its format and gives every record a
verdict: `new`, `duplicate` (of which trace or row, and why), `update` (adds tags or links to
a trace the brain holds), `refused` / `error` as the reader set them, or `skipped` (an expired
memory, a graph row whose trace is not imported). Things the reader saw and did not read (an
image, a file of another extension, an embed) are listed in `not_read`. The person reviews the
plan, may edit or un-accept records, and `commit.commit(brain, plan)` writes it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument
from memgui.core.ingest_import import facts_into_plan
from memgui.core.io.detect import detect_format, looks_like_vault
from memgui.core.io.options import ImportOptions
from memgui.core.io.planning import classify
from memgui.core.io.readers import READERS
from memgui.core.io.records import (
    ERROR,
    REFUSED,
    SKIPPED,
    UNREAD,
    VERDICTS,
    ImportRecord,
)
from memgui.core.progress import Cancelled, Job, Progress, gc_paused
from memgui.core.storage import commit_count

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.io.planning.fixes import CarriedFixes

COUNTED = (*VERDICTS, SKIPPED)
FOLDER_FORMATS = ("markdown", "obsidian", "chatgpt")


@dataclass
class ImportPlan:
    """What an import would do: every record with its verdict; nothing written yet."""

    source: str
    format: str
    brain_id: str
    options: ImportOptions
    records: list[ImportRecord] = field(default_factory=list)
    not_read: list[ImportRecord] = field(default_factory=list)  # images, other files, embeds
    # Per record index: what commit needs that the source did not say (the trace id to
    # write under when it is not the record's own `id`, remapped graph ends, the tags and
    # links an update adds).
    resolved: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Fingerprints of refused / error records at planning: an edited one is read again.
    fingerprints: dict[int, str] = field(default_factory=dict)
    # The brain as planning read it: its last journal id and trace rowid (see io/recheck.py).
    journal_mark: int = 0
    rowid_mark: int = 0
    written: set[int] = field(default_factory=set)  # indexes a commit of this plan wrote
    # A re-plan: the person's fixes of the plan before, laid over this one (`fixes.py`).
    carried_fixes: CarriedFixes | None = None
    # A format that would read the source better than the one detected (a folder of notes
    # with [[wikilinks]] but no .obsidian folder: "obsidian"), for the person to choose.
    suggested_format: str | None = None

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(r.verdict for r in self.records)
        return {verdict: found.get(verdict, 0) for verdict in COUNTED}

    @property
    def files_read(self) -> int:
        """Files the reader opened (for a folder: each note once, whatever it became)."""
        return len({classify.file_of(r.source) for r in self.records})

    @property
    def unreadable(self) -> str | None:
        """Why the source as a whole could not be read, or None when it could."""
        whole = [r for r in self.records if r.kind == UNREAD and r.verdict in (ERROR, REFUSED)]
        if whole and len(whole) == len(self.records):
            return "; ".join(f"{r.source}: {r.reason}" for r in whole)
        return None

    def trace_id(self, index: int) -> str | None:
        """The trace a record will be written as, or the one it duplicates or updates."""
        record = self.records[index]
        if record.existing_id is not None:
            return record.existing_id
        return self.resolved.get(index, {}).get("id") or record.fields.get("id")

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "counts": self.counts,
            "not_read": [{"source": r.source, "reason": r.reason} for r in self.not_read],
        }


def resolve_format(source: Path, options: ImportOptions) -> str:
    return detect_format(source) if options.format == "auto" else options.format


def _check_readable(source: Path) -> None:
    """Exists and can be opened (a folder: listed), else a clear error before any reading."""
    if not source.exists():
        raise InvalidArgument("path", f"does not exist (got '{source}')", str(source))
    if not source.is_dir() and not source.is_file():
        # A device or a pipe: reading it could block or never end.
        raise InvalidArgument(
            "path",
            f"is not a regular file or folder (a device, pipe or socket; got '{source}')",
            str(source),
        )
    if source.is_file() and commit_count.is_open_here(source):
        # Reading it with plain file calls would drop this program's locks on it.
        raise InvalidArgument(
            "path",
            f"is a brain this program has open: import a copy of it, made by memgui export "
            f"or while it is closed (got '{source}')",
            str(source),
        )
    try:
        if source.is_dir():
            with os.scandir(source):
                pass
        else:
            with source.open("rb"):
                pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InvalidArgument(
            "path", f"cannot be read: {reason} (got '{source}')", str(source)
        ) from None


def _check_source(source: Path, fmt: str) -> None:
    if source.is_dir() and fmt not in FOLDER_FORMATS:
        raise InvalidArgument(
            "path", f"is a folder, but a {fmt} source is a file (got '{source}')", str(source)
        )
    if source.is_file() and fmt in ("obsidian",) and source.suffix.lower() != ".md":
        raise InvalidArgument("path", f"is not an Obsidian vault folder (got '{source}')")


def plan(
    brain: Brain,
    source: str | Path,
    format: str = "auto",
    options: ImportOptions | None = None,
    cancel_requested: Callable[[], bool] | None = None,
) -> Job[ImportPlan]:
    """Read `source` and classify every record against `brain` (see the module docstring).

    `format` overrides `options.format` when it is not "auto". Writes nothing.
    `cancel_requested`, when given, is asked between records; a True stops the job with
    `Cancelled`.
    """
    if not isinstance(source, str | Path):
        raise InvalidArgument("path", f"must be a path (got {source!r:.80})", source)
    if options is not None and not isinstance(options, ImportOptions):
        raise InvalidArgument("options", f"must be ImportOptions (got {options!r:.80})", options)
    if isinstance(source, str) and not source.strip():
        # Path("") is the current folder: an empty path would import whatever is there.
        raise InvalidArgument("path", f"must name a file or folder (got {source!r})", source)
    # The records read and classified all live on in the plan: nothing to collect. Paused
    # for the whole job, as the commit is (step by step, the collector ran between steps and
    # walked every record built so far: ~0.5 s more CPU per 100k records); closing the job
    # ends the pause.
    with gc_paused():
        return (yield from _plan(brain, source, format, options, cancel_requested))


def _plan(
    brain: Brain,
    source: str | Path,
    format: str,
    options: ImportOptions | None,
    cancel_requested: Callable[[], bool] | None,
) -> Job[ImportPlan]:
    options = options or ImportOptions()
    if format != "auto":
        options.format = format
    options.validated()
    path = Path(source)
    _check_readable(path)
    fmt = resolve_format(path, options)
    _check_source(path, fmt)
    if options.extract_facts and fmt != "chatgpt":
        raise InvalidArgument(
            "extract_facts", f"works on ChatGPT exports only (got format {fmt!r})", fmt
        )
    result = ImportPlan(source=str(path), format=fmt, brain_id=brain.brain_id, options=options)
    if options.format == "auto" and fmt == "markdown" and looks_like_vault(path):
        result.suggested_format = "obsidian"
    yield Progress(0, None, f"reading {path.name} as {fmt}")
    read = READERS[fmt](path, options=replace(options, target_brain_id=brain.brain_id))
    for event in read:
        if cancel_requested is not None and cancel_requested():
            raise Cancelled(f"planning the import of {path.name} was cancelled")
        if isinstance(event, Progress):
            yield event
        elif event.kind == UNREAD and event.verdict == SKIPPED:
            result.not_read.append(event)
        else:
            result.records.append(event)
    yield Progress(0, len(result.records), f"comparing {len(result.records)} records")
    yield from classify.classify(brain, result)
    if options.extract_facts:
        yield from facts_into_plan(brain, result, cancel_requested)
    total = len(result.records)
    yield Progress(total, total, f"planned {total} records")
    return result
