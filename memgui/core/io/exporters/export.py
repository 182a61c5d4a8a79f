"""Exporting a brain: one entry point for every format.

`export(brain, dest, format, options)` is a core job: a generator that yields `Progress`
and returns an `ExportResult` (`exported`, and `refused`: each trace left out with the field
and the problem). The app runs it off the GUI thread and cancels it between yields; a
cancelled or failed export leaves no partial file at the destination (files are written
beside it and renamed; a Markdown note is written whole or not at all).

| format     | dest                     | what it holds                                        |
|------------|--------------------------|------------------------------------------------------|
| `sqlite`   | a new file (never replaced) | every table's rows of this brain, deleted included |
| `json`     | a file (replaced atomically) | AgentOS's JSON export layout, deleted included    |
| `jsonl`    | a file, or a binary stream | agent-memory JSONL v1: live traces of its six types |
| `markdown` | a folder                 | one note per live trace, `{scope}/{type}/{id}.md`     |
| `obsidian` | a folder                 | Markdown plus tag line and **Related:** wikilinks     |
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export_common import (
    ExportIncomplete,
    ExportOptions,
    ExportResult,
    Refusal,
    Selection,
)
from memgui.core.io.exporters.export_json import export_json
from memgui.core.io.exporters.export_jsonl import export_jsonl
from memgui.core.io.exporters.export_markdown import export_markdown
from memgui.core.io.exporters.export_sqlite import export_sqlite
from memgui.core.io.formats import EXPORT_FORMATS
from memgui.core.model import check_choice, check_text
from memgui.core.progress import Job

if TYPE_CHECKING:
    from memgui.core.brain import Brain

FORMATS = EXPORT_FORMATS

__all__ = [
    "FORMATS",
    "ExportIncomplete",
    "ExportOptions",
    "ExportResult",
    "Refusal",
    "Selection",
    "export",
]


def export(
    brain: Brain,
    dest: str | Path | BinaryIO,
    format: str,
    options: ExportOptions | None = None,
) -> Job[ExportResult]:
    """Export `brain` (everything, or `options.selection`) to `dest` in `format`."""
    check_choice("format", format, FORMATS)
    options = options or ExportOptions()
    if not isinstance(options, ExportOptions):
        raise InvalidArgument("options", f"must be ExportOptions (got {options!r})")
    if format != "jsonl" and not isinstance(dest, str | Path):
        raise InvalidArgument("dest", f"must be a path for {format} (got {dest!r})")
    if isinstance(dest, str) and not dest:
        raise InvalidArgument("dest", "must not be empty (got '')", dest)
    if isinstance(dest, str | Path):
        text = check_text("path", str(dest))
        if "\x00" in text:
            raise InvalidArgument("path", f"must not hold a NUL character (got {text!r})", text)
    if format == "sqlite":
        return export_sqlite(brain, dest, options)  # type: ignore[arg-type]
    if format == "json":
        return export_json(brain, dest, options)  # type: ignore[arg-type]
    if format == "jsonl":
        return export_jsonl(brain, dest, options)
    return export_markdown(brain, dest, options, obsidian=format == "obsidian")  # type: ignore[arg-type]
