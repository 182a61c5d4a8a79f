"""`store`: each test of a module that asks for it runs on a SQLite file and on a real
PostgreSQL server (`storage.engine.BrainStore`, brain id `team`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memgui.core.engines import open_store
from memgui.core.storage.engine import BrainStore


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BrainStore]:
    if request.param == "sqlite":
        opened = open_store(tmp_path / "brain.sqlite", "team", actor="test")
    else:
        opened = open_store(request.getfixturevalue("pg_address"), actor="test")
    yield opened
    opened.close()
