"""Valid inputs of every import format, small, for the mutations to start from."""

from __future__ import annotations

import csv
import io
import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import apsw

from tests.support.paths import TESTS

AGENTOS = TESTS.parent.parent / "shared" / "fixtures" / "agentos"
FIXTURES = TESTS / "fixtures"

NOTES = {
    "plain.md": "A plain note without front matter. #tag and [[Target]]\n",
    "Exported trace.md": (FIXTURES / "io" / "vault" / "Exported trace.md").read_text(),
    "props.md": (
        "---\ntype: semantic\ntags: [book, '#read']\ncategories: ['[[Books]]']\n"
        "created: 2024-05-01\nscopeId: team\nturnUserId: u1\nnested: {a: [1, {b: c}]}\n---\n"
        "Body with `inline #code`, %%a comment%% and ![[image.png]].\n"
    ),
    "sub/fenced.md": (
        "---\nid: n1\ncategory: DECISION\nstrength: 0.4\n---\n```\n#not-a-tag\n```\ntext\n"
    ),
    "dendron.md": "---\ncreated: 1700000000000\nanchor: &a [x, y]\nagain: *a\n---\nDendron note\n",
}
NOTE_TOKENS = [
    b"---\n",
    b"---js\n",
    b"a: &a [*a]\n",
    b"<<: *a\n",
    b"&a ",
    b"*a",
    b"x: " + b"[" * 500 + b"]" * 500 + b"\n",
    b"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n",
    b"!!python/object/apply:os.system ['true']",
    b"? [a, b]\n: c\n",
    b"created: 2023-02-30\n",
    b"createdAt: 99999999999999999999999\n",
    b"strength: 1e400\n",
    b"tags: 5\n",
    b"id: [1]\n",
    b"type: dream\n",
    b"scope: everywhere\n",
    b"[[",
    b"]]",
    b"![[",
    b"#",
    b"%%",
    b"```",
    b"\n**Related:**\n- [[",
    b"\t",
]

STATE_TOKENS = [
    b"## Decisions\n",
    b"### Pending Todos\n",
    b"## Deferred Items\n",
    b"- ",
    b"-\n",
    b"```\n",
    b"| a | b | c |\n",
    b"|---|---|\n",
    b"| one |\n",
    b"None yet.",
    b"- " + b"y" * 9000 + b"\n",
    b"a: &a [*a]\n",
]

CSV_TOKENS = [b'"', b",", b"\n", b'""', b"|", b"[", b'{"', b"\x00", b"\r"]
JSONL_TOKENS = [b'"record":"memory",', b'"key":1,', b"\n", b"{}", b"null", b"1e400", b'"\\ud800"']
JSON_TOKENS = [b"{", b"}", b"[", b"]", b",", b":", b"null", b'"\\ud800"', b"1e400", b"-"]


def notes() -> dict[str, bytes]:
    return {name: text.encode() for name, text in NOTES.items()}


def state_file() -> bytes:
    state = (FIXTURES / "io" / "gsd" / ".planning" / "STATE.md").read_bytes()
    return state + b"\n| Item | Why | When |\n|---|---|---|\n| a | b | c |\n| short |\n"


def csv_rows() -> list[list[str]]:
    text = (FIXTURES / "io" / "csv" / "traces.csv").read_text(encoding="utf-8-sig")
    return [row for row in csv.reader(io.StringIO(text, newline=""))]


def csv_text(rows: list[list[str]]) -> str:
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    return out.getvalue()


def jsonl_lines() -> list[Any]:
    text = (FIXTURES / "jsonl" / "valid.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def agentos_export() -> dict[str, Any]:
    """The AgentOS fixture export, three rows of each section."""
    export = json.loads((AGENTOS / "export.json").read_text(encoding="utf-8"))
    return {key: value[:3] if isinstance(value, list) else value for key, value in export.items()}


def chatgpt_export() -> list[Any]:
    conversations: list[Any] = []
    for name in ("branching.json", "tool_and_image.json"):
        value = json.loads((FIXTURES / "chatgpt" / name).read_text(encoding="utf-8"))
        conversations.extend(value if isinstance(value, list) else [value])
    return conversations


@cache
def sqlite_seed(folder: Path) -> Path:
    """The AgentOS fixture brain file, four rows of each table, vacuumed small."""
    path = folder / "seed.sqlite"
    shutil.copyfile(AGENTOS / "export.sqlite", path)
    path.chmod(0o600)
    connection = apsw.Connection(str(path))
    tables = [
        name
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' "
            "AND name NOT LIKE 'sqlite_%'"
        )
    ]
    for table in tables:
        connection.execute(
            f'DELETE FROM "{table}" WHERE rowid NOT IN '
            f'(SELECT rowid FROM "{table}" ORDER BY rowid LIMIT 4)'
        )
    connection.execute("INSERT INTO memory_traces_fts(memory_traces_fts) VALUES ('rebuild')")
    connection.execute("VACUUM")
    connection.close()
    return path


@cache
def sqlite_cells(path: Path) -> list[tuple[str, str, int]]:
    """(table, column, rowid) of every cell of the seed's tables that the import reads."""
    connection = apsw.Connection(str(path))
    try:
        cells = []
        for table in (
            "memory_traces",
            "knowledge_nodes",
            "knowledge_edges",
            "documents",
            "document_chunks",
            "conversations",
            "messages",
            "brain_meta",
        ):
            columns = [info[1] for info in connection.execute(f'PRAGMA table_info("{table}")')]
            rowids = [r for (r,) in connection.execute(f'SELECT rowid FROM "{table}"')]
            cells += [(table, column, rowid) for column in columns for rowid in rowids]
        return cells
    finally:
        connection.close()
