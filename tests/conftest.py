"""Shared fixtures: a real brain file in tmp_path, a copy of the AgentOS brain, the fake Ollama."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.paths import AGENTOS

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def brain_path(tmp_path: Path) -> Path:
    return tmp_path / "brain.sqlite"


@pytest.fixture
def brain(brain_path: Path):
    from memgui.core.brain import Brain

    b = Brain.open(brain_path, actor="test")
    yield b
    b.close()


@pytest.fixture
def agentos_copy(tmp_path: Path) -> Path:
    """A private copy of the brain the real AgentOS package wrote."""
    dest = tmp_path / "agentos" / "brain.sqlite"
    dest.parent.mkdir()
    shutil.copyfile(AGENTOS / "brain.sqlite", dest)
    return dest


from tests.support.cli import any_brain  # noqa: E402, F401  (a brain file, or PostgreSQL)
from tests.support.ollama_fixture import ollama_server  # noqa: E402, F401  (the fake Ollama server)
from tests.support.postgres import (  # noqa: E402, F401  (a real PostgreSQL)
    guarded_address,
    pg_address,
    pg_server,
)
