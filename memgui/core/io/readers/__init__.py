"""Readers: one per source format, each turns a file or folder into records, never a brain.

A reader is a generator function `reader(path, options=ImportOptions(...))` (the `Reader`
protocol): it yields `Progress` and one `ImportRecord` per thing it read or could not read,
and takes from the options what its format needs (the CSV column, the GSD scope, the AgentOS
brain to read, ChatGPT's branches). `READERS` names the reader of each format of
`detect.FORMATS`; the planner looks a format up there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from memgui.core.io.options import ImportOptions
from memgui.core.io.readers.agentos_reader import read_agentos_json, read_agentos_sqlite
from memgui.core.io.readers.chatgpt_reader import read_chatgpt
from memgui.core.io.readers.csv_reader import read_csv
from memgui.core.io.readers.gsd_reader import read_gsd
from memgui.core.io.readers.jsonl_reader import read_jsonl
from memgui.core.io.readers.markdown_reader import read_markdown
from memgui.core.io.readers.obsidian_reader import read_obsidian
from memgui.core.io.records import ImportRecord
from memgui.core.progress import Progress


class Reader(Protocol):
    """Reads one source; never opens a brain (the planner classifies what it yields)."""

    def __call__(
        self, path: str | Path, *, options: ImportOptions | None = None
    ) -> Iterator[Progress | ImportRecord]: ...


READERS: dict[str, Reader] = {
    "sqlite": read_agentos_sqlite,
    "json": read_agentos_json,
    "jsonl": read_jsonl,
    "markdown": read_markdown,
    "obsidian": read_obsidian,
    "chatgpt": read_chatgpt,
    "csv": read_csv,
    "gsd": read_gsd,
}
