"""Which import format a source is in, from its name and a look at its start.

- a folder: `obsidian` when it has an `.obsidian` folder; `chatgpt` when its top level
  holds ChatGPT conversation files and no Markdown; `markdown` otherwise;
- a file named `STATE.md`: `gsd`; another `.md`: `markdown`;
- `.sqlite`, `.sqlite3`, `.db`: `sqlite` (the file must start as a SQLite database);
- `.jsonl`: `jsonl`; `.csv`: `csv`;
- `.json` (or any other name whose content is JSON): `chatgpt` when it is an array of
  conversations or one conversation object (by content, not by name), `json` when it is an
  AgentOS export (an object with `traces`).
Anything else raises `InvalidArgument("format", …)` naming what was seen.
"""

from __future__ import annotations

import re
from pathlib import Path

from memgui.core.errors import InvalidArgument
from memgui.core.io.formats import IMPORT_FORMATS
from memgui.core.io.source_files import read_head

FORMATS = IMPORT_FORMATS
SQLITE_HEADER = b"SQLite format 3\x00"
SQLITE_SUFFIXES = {".sqlite", ".sqlite3", ".db"}
HEAD_BYTES = 1 << 20  # the first conversation's keys are well inside the first MiB
# A JSON key followed by a colon: key text cannot hold an unescaped quote, so this never
# matches inside a string value.
KEY = re.compile(rb'"([A-Za-z_]+)"\s*:')
CHATGPT_KEYS = {b"mapping", b"current_node", b"conversation_id"}


def _unsupported(path: Path, saw: str) -> InvalidArgument:
    names = ", ".join(FORMATS)
    return InvalidArgument(
        "format", f"cannot tell the format of {path}: {saw}; name one of {names}", str(path)
    )


def detect_format(path: str | Path) -> str:
    """The format name of a source (see the module docstring)."""
    source = Path(path)
    if not source.exists():
        raise InvalidArgument(
            "format", f"cannot detect the format of {source}: it does not exist", str(source)
        )
    if source.is_dir():
        return _folder_format(source)
    if not source.is_file():  # reading a pipe would wait for a writer, a device never end
        raise _unsupported(source, "it is not a regular file (a device, pipe or socket)")
    try:
        with source.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as exc:
        raise _unsupported(source, f"it cannot be read ({exc.strerror or exc})") from None
    suffix = source.suffix.lower()
    if source.name.upper() == "STATE.MD":
        return "gsd"
    if suffix in (".md", ".markdown"):
        return "markdown"
    if suffix == ".csv":
        return "csv"
    if suffix == ".jsonl":
        return "jsonl"
    if suffix in SQLITE_SUFFIXES or head.startswith(SQLITE_HEADER):
        if not head.startswith(SQLITE_HEADER):
            raise _unsupported(source, f"a {suffix} file that is not a SQLite database")
        return "sqlite"
    kind = _json_kind(head)
    if kind is not None:
        return kind
    if suffix == ".json":
        raise _unsupported(source, "a .json file that is neither a ChatGPT nor an AgentOS export")
    kind_of_file = f"a {suffix} file" if suffix else "an extensionless file"
    raise _unsupported(source, f"{kind_of_file} of unknown content")


def _json_kind(head: bytes) -> str | None:
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"["):
        rest = text[1:].lstrip()
        if rest.startswith(b"]") or b'"mapping"' in head or b'"title"' in head:
            return "chatgpt"  # an AgentOS export is never an array
        return None
    if not text.startswith(b"{"):
        return None
    keys = {m.group(1) for m in KEY.finditer(head)}
    if b"traces" in keys and b"mapping" not in keys:
        return "json"
    if keys & CHATGPT_KEYS:
        return "chatgpt"
    if b"traces" in keys:
        return "json"
    if b'"record"' in head and b'"header"' in head and text.find(b"\n") != -1:
        return "jsonl"  # an agent-memory export saved under another name
    return None


def _folder_format(folder: Path) -> str:
    if (folder / ".obsidian").is_dir():
        return "obsidian"
    try:
        entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    except OSError as exc:
        raise _unsupported(
            folder, f"a folder that cannot be read ({exc.strerror or exc})"
        ) from None
    files = [p for p in entries if p.is_file()]
    if any(p.suffix.lower() in (".md", ".markdown") for p in files):
        return "markdown"
    # A split export may keep its conversation files one folder down.
    nested = [f for d in entries if d.is_dir() for f in sorted(d.glob("*.json"))[:20]]
    if any(_is_chatgpt_file(p) for p in [*files, *nested]):
        return "chatgpt"
    return "markdown"


# `[[Target]]`, `[[Target|Alias]]`: text right after the brackets (a shell's `[[ -f x ]]`
# has a space there).
WIKILINK = re.compile(rb"\[\[[^\]\s|#][^\]\n]*\]\]")
VAULT_SAMPLE = 200  # notes looked at
VAULT_HEAD = 64 * 1024  # bytes of each
VAULT_NOTES = 2  # notes with a wikilink that make a folder look like a vault


def looks_like_vault(folder: str | Path) -> bool:
    """A folder of Markdown notes without an `.obsidian` folder whose notes link to one
    another with `[[wikilinks]]`, as an Obsidian vault's do (checked on a sample)."""
    root = Path(folder)
    if not root.is_dir() or (root / ".obsidian").is_dir():
        return False
    found = seen = 0
    for note in sorted(root.rglob("*.md")):
        if any(part.startswith(".") for part in note.relative_to(root).parts):
            continue
        try:
            with note.open("rb") as handle:
                head = handle.read(VAULT_HEAD)
        except OSError:
            continue
        seen += 1
        found += WIKILINK.search(head) is not None
        if found >= VAULT_NOTES or seen >= VAULT_SAMPLE:
            break
    return found >= min(VAULT_NOTES, max(seen, 1))


def _is_chatgpt_file(path: Path) -> bool:
    if path.suffix.lower() != ".json":
        return False
    head = read_head(path, HEAD_BYTES)  # a pipe named x.json is never waited on
    return head is not None and _json_kind(head) == "chatgpt" and b'"mapping"' in head
