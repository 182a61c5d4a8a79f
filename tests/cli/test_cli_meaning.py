"""`memgui similar`, `embed --rebuild`, `embed --reindex` and `search --mode cognitive` on
both engines (a file, a real PostgreSQL server), against the tests' Ollama server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.ollama_server import FakeOllama


def added(
    capsys: pytest.CaptureFixture[str], brain: Path | str, url: tuple[str, ...], content: str
) -> dict[str, Any]:
    result = run_cli(capsys, brain, *url, "add", content)
    assert result.code == 0, result.err
    document: dict[str, Any] = result.json()
    return document


def test_similar_after_embedding(
    capsys: pytest.CaptureFixture[str], any_brain: Path | str, ollama_server: FakeOllama
) -> None:
    url = ("--ollama-url", ollama_server.url)
    car = added(capsys, any_brain, url, "my automobile had a breakdown")
    added(capsys, any_brain, url, "espresso after dinner")
    motor = added(capsys, any_brain, url, "the vehicle motor failed again")
    assert run_cli(capsys, any_brain, *url, "embed").json()["pending"] == 0
    found = run_cli(capsys, any_brain, *url, "similar", car["id"], "--limit", "1")
    assert found.code == 0, found.err
    assert [r["id"] for r in found.json()["results"]] == [motor["id"]]
    assert 0 < found.json()["results"][0]["score"] <= 1
    missing = run_cli(capsys, any_brain, "similar", "mt_nope")
    assert missing.code == 3 and "mt_nope" in missing.err
    bad = run_cli(capsys, any_brain, "similar", car["id"], "--limit", "0")
    assert bad.code == 2 and "limit must be between 1 and 200 (got 0)" in bad.err


def test_rebuild_with_another_model_then_reindex(
    capsys: pytest.CaptureFixture[str], any_brain: Path | str, ollama_server: FakeOllama
) -> None:
    url = ("--ollama-url", ollama_server.url)
    added(capsys, any_brain, url, "a puppy and a kitten")
    added(capsys, any_brain, url, "the vehicle motor failed")
    run_cli(capsys, any_brain, *url, "embed")
    other = ("--embed-model", "all-minilm")
    refused = run_cli(capsys, any_brain, *url, *other, "search", "dog", "--mode", "semantic")
    assert refused.code == 2 and "memgui embed --rebuild --model" in refused.err
    rebuilt = run_cli(capsys, any_brain, *url, "embed", "--rebuild", "--model", "all-minilm")
    assert rebuilt.code == 0, rebuilt.err
    assert rebuilt.json() == {"embedded": 2, "stale": 0, "pending": 0}
    status = run_cli(capsys, any_brain, *url, *other, "embed", "--status")
    assert status.json()["model"] == "all-minilm" and status.json()["dimensions"] == 384
    found = run_cli(capsys, any_brain, *url, *other, "search", "dog", "--mode", "semantic")
    assert found.code == 0 and found.json()["search_mode"] == "semantic", found.err
    reindexed = run_cli(capsys, any_brain, *url, "embed", "--reindex")
    assert reindexed.code == 0, reindexed.err
    assert reindexed.json()["reindexed"] is True and reindexed.json()["pending"] == 0
    assert reindexed.json()["dimensions"] == 384


def test_a_rebuild_with_the_embedder_down_changes_nothing(
    capsys: pytest.CaptureFixture[str], any_brain: Path | str, ollama_server: FakeOllama
) -> None:
    url = ("--ollama-url", ollama_server.url)
    added(capsys, any_brain, url, "a puppy and a kitten")
    run_cli(capsys, any_brain, *url, "embed")
    ollama_server.stop()
    down = run_cli(capsys, any_brain, *url, "embed", "--rebuild", "--model", "all-minilm")
    assert down.code != 0 and "Ollama" in down.err
    ollama_server.restart()
    status = run_cli(capsys, any_brain, *url, "embed", "--status")
    assert status.json()["model"] == "nomic-embed-text" and status.json()["pending"] == 0
