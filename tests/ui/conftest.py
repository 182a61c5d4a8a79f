"""Fixtures of the app tests: a real brain file in tmp_path and a session over it."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from memgui.core.brain import Brain  # noqa: E402
from memgui.ui.session import BrainSession  # noqa: E402

SAMPLE = [
    ("The build uses Python 3.11", "semantic", "user", "u1", "DECISION", ["build"]),
    (
        "Deploys run on Fridays\nafter the freeze",
        "procedural",
        "organization",
        "acme",
        None,
        ["deploy", "ops"],
    ),
    ("Alice prefers dark mode", "semantic", "user", "alice", None, ["ui"]),
    ("Call Bob about the invoice", "prospective", "user", "u1", "TODO", []),
    ("The cache key includes the locale", "semantic", "thread", "t9", "PATTERN", ["cache"]),
]


def fill(brain: Brain, extra: int = 0) -> list[str]:
    ids = []
    for content, type_, scope, scope_id, category, tags in SAMPLE:
        trace = brain.add(
            content, type=type_, scope=scope, scope_id=scope_id, category=category, tags=tags
        )
        ids.append(trace.id)
    for n in range(extra):
        ids.append(brain.add(f"Filler memory number {n}", tags=["filler"]).id)
    return ids


@pytest.fixture
def brain_path(tmp_path):
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        fill(brain)
    return path


@pytest.fixture
def session(brain_path, qapp):
    opened = BrainSession.open(brain_path)
    yield opened
    opened.close()
