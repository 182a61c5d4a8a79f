"""Planning an import keeps Python's cyclic collector paused for the whole job, not per step."""

from __future__ import annotations

import gc
from pathlib import Path

import orjson
import pytest

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.progress import Progress


def jsonl_source(path: Path, count: int) -> Path:
    header = {
        "record": "header",
        "format": "agent-memory-export",
        "version": 1,
        "exported_at": 1_767_225_600,
        "embedding_model": "nomic-embed-text",
        "embedding_dim": 768,
        "schema_version": 3,
        "agent_memory_version": "0.1.0",
        "exported_rows": count,
        "exported_links": 0,
    }
    lines = [orjson.dumps(header)]
    for key in range(count):
        memory = {
            "record": "memory",
            "key": key,
            "type": "DECISION",
            "content": f"note {key}",
            "tags": ["x"],
            "source": "cli",
            "scope": "test",
            "created_at": 1_767_225_600 + key,
            "last_accessed": 1_767_225_600 + key,
            "access_count": 0,
            "expires_at": None,
        }
        lines.append(orjson.dumps(memory))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collector_on")
def test_the_collector_stays_paused_between_steps_and_runs_again_after(
    brain: Brain, tmp_path: Path
) -> None:
    source = jsonl_source(tmp_path / "memories.jsonl", 50)
    job = plan(brain, source, options=ImportOptions(format="jsonl"))
    between_steps = []
    try:
        while True:
            event = next(job)
            assert isinstance(event, Progress)
            between_steps.append(gc.isenabled())
    except StopIteration as done:
        assert done.value.counts["new"] == 50
    assert between_steps and not any(between_steps)
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_closing_a_plan_midway_runs_the_collector_again(brain: Brain, tmp_path: Path) -> None:
    job = plan(brain, jsonl_source(tmp_path / "memories.jsonl", 50), format="jsonl")
    next(job)
    assert not gc.isenabled()
    job.close()
    assert gc.isenabled()
