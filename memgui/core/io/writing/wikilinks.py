"""Which note of a vault a `[[wikilink]]` names, as Obsidian resolves it.

Obsidian matches a link's target against the vault's notes without regard to case:
- a target with a path (`[[Folder/Note]]`) names the note at that path from the vault's
  root, else the note whose path ends with it; `./` and `../` start from the linking note's
  folder; a leading `/` is the vault's root;
- a bare name (`[[Note]]`) names a note of that file name: one in the linking note's own
  folder first, else the one nearest the root (the shortest path; ties alphabetical) — the
  help vault itself links `[[Security and privacy]]` from its Sync and its Publish folders,
  each meaning its own folder's note;
- `.md` may be written or left out.
Only when no note has that name does memgui look at the notes' aliases (front-matter
`aliases`); Obsidian itself draws such a link as a note not yet written, which memgui shows
as a concept node when no alias names it either.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


def _key(text: str) -> str:
    key = text.strip().replace("\\", "/")
    if key.lower().endswith(".md"):
        key = key[:-3]
    return key.casefold()


def aliases_of(metadata: Any) -> list[str]:
    """The aliases a note's front matter gives (`aliases:` or `alias:`, a text or a list)."""
    front = metadata.get("front_matter") if isinstance(metadata, dict) else None
    if not isinstance(front, dict):
        return []
    found: list[str] = []
    for name in ("aliases", "alias"):
        value = front.get(name)
        values = value if isinstance(value, list) else [value]
        found += [v.strip() for v in values if isinstance(v, str) and v.strip()]
    return found


@dataclass
class NoteIndex:
    """The notes of an import, by path, by file name and by alias; each a trace id."""

    paths: dict[str, str] = field(default_factory=dict)  # folded path, no .md -> trace
    names: dict[str, list[str]] = field(default_factory=dict)  # folded file name -> paths
    aliases: dict[str, str] = field(default_factory=dict)

    def add(self, source_file: str, trace_id: str, aliases: Iterable[str] = ()) -> None:
        path = _key(source_file)
        if not path or path in self.paths:
            return
        self.paths[path] = trace_id
        self.names.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        for alias in aliases:
            self.aliases.setdefault(_key(alias), trace_id)

    def __bool__(self) -> bool:
        return bool(self.paths)

    def resolve(self, target: str, from_file: str) -> str | None:
        """The trace of the note `target` names, linked from the note at `from_file`."""
        key = _key(target)
        if not key:
            return None
        folder = posixpath.dirname(_key(from_file))
        if key.startswith("/"):
            return self.paths.get(key.lstrip("/"))
        if key.startswith(("./", "../")):
            joined = posixpath.normpath(posixpath.join(folder, key))
            return None if joined.startswith("../") else self.paths.get(joined)
        found = self._by_path(key, folder) if "/" in key else self._by_name(key, folder)
        return found if found is not None else self.aliases.get(key)

    def _by_path(self, key: str, folder: str) -> str | None:
        if key in self.paths:
            return self.paths[key]
        ending = [p for p in self.names.get(key.rsplit("/", 1)[-1], ()) if p.endswith("/" + key)]
        return self.paths[_nearest(ending, folder)] if ending else None

    def _by_name(self, key: str, folder: str) -> str | None:
        candidates = self.names.get(key)
        return self.paths[_nearest(candidates, folder)] if candidates else None


def _nearest(paths: list[str], folder: str) -> str:
    own = [p for p in paths if posixpath.dirname(p) == folder]
    return min(own or paths, key=lambda p: (p.count("/"), len(p), p))
