"""Where the graph view placed each node of a brain, kept between sessions.

One JSON file per brain (named from a hash of the file's path and the brain id) in a folder
the app chooses; written whole to a temporary name and renamed, so a crash leaves the old
file or the new one. At most `MAX_KEPT` positions are kept: the ones placed longest ago go
first.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

MAX_KEPT = 100_000
Point = tuple[float, float]


class PositionStore:
    def __init__(
        self, folder: str | os.PathLike[str], brain_path: str | os.PathLike[str], brain_id: str
    ):
        key = f"{Path(brain_path).resolve()}\0{brain_id}".encode("utf-8", "surrogatepass")
        self.path = Path(folder) / f"{hashlib.sha1(key).hexdigest()[:20]}.json"
        self._positions: dict[str, Point] | None = None

    def _loaded(self) -> dict[str, Point]:
        if self._positions is None:
            self._positions = {}
            try:
                raw = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raw = {}
            if isinstance(raw, dict):
                for node_id, point in raw.items():
                    if _is_point(point):
                        self._positions[node_id] = (float(point[0]), float(point[1]))
        return self._positions

    def get(self, ids: Iterable[str]) -> dict[str, Point]:
        known = self._loaded()
        return {i: known[i] for i in ids if i in known}

    def update(self, positions: Mapping[str, Point]) -> None:
        known = self._loaded()
        for node_id, point in positions.items():
            known.pop(node_id, None)  # re-inserted: the newest
            known[node_id] = (float(point[0]), float(point[1]))
        while len(known) > MAX_KEPT:
            del known[next(iter(known))]

    def save(self) -> None:
        if self._positions is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
        temporary.write_text(json.dumps(self._positions), encoding="utf-8")
        os.replace(temporary, self.path)


def _is_point(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int | float) and math.isfinite(v) for v in value)
    )
