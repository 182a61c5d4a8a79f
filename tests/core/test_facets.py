"""Counting a brain's memories by type, scope, category and tag, for the filter lists."""

from __future__ import annotations

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument


def test_facets_count_the_live_and_the_trashed_apart(tmp_path):
    with Brain.open(tmp_path / "b.sqlite") as brain:
        brain.add("a", type="episodic", tags=["ops", "db"], category="DECISION")
        brain.add("b", type="episodic", scope="thread", tags=["ops"])
        gone = brain.add("c", type="procedural", tags=["ops", "old"])
        brain.forget(gone.id)
        live = brain.facets()
        assert live.total == 2
        assert live.types == {"episodic": 2}
        assert live.scopes == {"user": 1, "thread": 1}
        assert live.categories == {"DECISION": 1}
        assert list(live.tags.items()) == [("ops", 2), ("db", 1)]  # most used first
        trash = brain.facets(deleted=True)
        assert trash.types == {"procedural": 1} and trash.tags == {"ops": 1, "old": 1}
        assert list(brain.facets(tag_limit=1).tags) == ["ops"]
        with pytest.raises(InvalidArgument, match="tag_limit"):
            brain.facets(tag_limit=0)


def test_an_empty_file_has_no_facets(tmp_path):
    with Brain.open(tmp_path / "empty.sqlite") as brain:
        assert brain.facets().total == 0


def test_an_agentos_brain_not_migrated_yet_has_facets_too(tmp_path):
    import shutil

    from tests.support.paths import SHARED

    path = tmp_path / "agentos.sqlite"
    shutil.copyfile(SHARED / "fixtures" / "agentos" / "brain.sqlite", path)
    path.chmod(0o644)
    with Brain.open(path) as brain:
        assert brain.pending_migration() is not None  # read as it is
        facets = brain.facets()
        assert facets.total == brain.info()["live"] and facets.categories == {}
        assert brain.pending_migration() is not None  # and still not written
