"""Fixtures of the graph window's tests: a brain file with links and a knowledge graph."""

from __future__ import annotations

import pytest

from memgui.core.brain import Brain
from tests.support.graph import linked_brain


@pytest.fixture
def ids(brain_path):
    """The ids of `linked_brain`'s memories and nodes in the tests' brain file."""
    with Brain.open(brain_path, actor="test") as brain:
        return linked_brain(brain)
