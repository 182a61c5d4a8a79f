"""`memgui embed`, `memgui similar` and `search --mode` against the fake Ollama server."""

from __future__ import annotations

import json
from pathlib import Path

from memgui.__main__ import main
from tests.support.paths import SHARED


def run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip().startswith("{") else {}), err


def test_add_embeds_and_search_reports_the_mode(tmp_path: Path, capsys, ollama_server) -> None:
    brain = str(tmp_path / "b.sqlite")
    common = ["--brain", brain, "--ollama-url", ollama_server.url, "--json"]
    code, car, _ = run(capsys, *common, "add", "my automobile had a breakdown")
    assert code == 0
    run(capsys, *common, "add", "espresso after dinner")
    code, motor, _ = run(capsys, *common, "add", "the vehicle motor failed again")
    code, found, _ = run(capsys, *common, "search", "vehicle failure", "--mode", "hybrid")
    assert found["search_mode"] == "hybrid" and found["results"][0]["id"] == car["id"]
    code, found, _ = run(capsys, *common, "search", "vehicle failure", "--mode", "keyword")
    assert found == {"results": [], "search_mode": "keyword"}
    code, similar, _ = run(capsys, *common, "similar", car["id"], "--limit", "1")
    assert code == 0 and [r["id"] for r in similar["results"]] == [motor["id"]]
    code, status, _ = run(capsys, *common, "embed", "--status")
    assert status["ollama"] == "reachable" and status["pending"] == 0
    assert status["model"] == "nomic-embed-text" and status["dimensions"] == 768


def test_store_succeeds_with_ollama_down_and_embed_backfills(
    tmp_path: Path, capsys, ollama_server
) -> None:
    brain = str(tmp_path / "b.sqlite")
    url = ollama_server.url
    ollama_server.stop()
    code, trace, _ = run(capsys, "--brain", brain, "--ollama-url", url, "--json", "add", "x y")
    assert code == 0
    code, found, _ = run(capsys, "--brain", brain, "--ollama-url", url, "--json", "search", "x")
    assert found["search_mode"] == "keyword"
    ollama_server.restart()
    code, report, _ = run(capsys, "--brain", brain, "--ollama-url", url, "--json", "embed")
    assert code == 0 and report["embedded"] == 1 and report["pending"] == 0


def test_rebuild_with_another_model_and_mismatch_refused(
    tmp_path: Path, capsys, ollama_server
) -> None:
    brain = str(tmp_path / "b.sqlite")
    common = ["--brain", brain, "--ollama-url", ollama_server.url, "--json"]
    run(capsys, *common, "add", "a puppy and a kitten")
    code, _, err = run(
        capsys, *common, "--embed-model", "all-minilm", "search", "dog", "--mode", "semantic"
    )
    assert code == 2 and "memgui embed --rebuild --model" in err
    code, report, _ = run(capsys, *common, "embed", "--rebuild", "--model", "all-minilm")
    assert code == 0 and report["embedded"] == 1
    code, status, _ = run(capsys, *common, "--embed-model", "all-minilm", "embed", "--status")
    assert status["model"] == "all-minilm" and status["dimensions"] == 384


def test_similar_unknown_id_and_bad_limit(tmp_path: Path, capsys, ollama_server) -> None:
    brain = str(tmp_path / "b.sqlite")
    common = ["--brain", brain, "--ollama-url", ollama_server.url]
    code, _, err = run(capsys, *common, "similar", "mt_nope")
    assert code == 3 and "mt_nope" in err
    code, _, err = run(capsys, *common, "similar", "mt_nope", "--limit", "0")
    assert code == 2 and "limit must be between 1 and 200 (got 0)" in err


AGENTOS_BRAIN = SHARED / "fixtures" / "agentos" / "brain.sqlite"


def test_an_agentos_brain_as_it_is_is_searched_in_every_mode(
    tmp_path: Path, capsys, ollama_server
) -> None:
    # Read-only, so never migrated: every mode runs on AgentOS's own columns.
    brain = tmp_path / "agentos.sqlite"
    brain.write_bytes(AGENTOS_BRAIN.read_bytes())
    brain.chmod(0o444)
    common = ["--brain", str(brain), "--ollama-url", ollama_server.url, "--json"]
    for mode in ("auto", "keyword"):
        code, found, err = run(capsys, *common, "search", "Alice", "--mode", mode)
        assert code == 0, err
        assert found["search_mode"] == "keyword" and found["results"]
    # Its vectors come from a 1536-dimension model AgentOS did not name: said, not mixed.
    for mode in ("semantic", "hybrid"):
        code, _, err = run(capsys, *common, "search", "Alice", "--mode", mode)
        assert code == 2
        assert "an unnamed model (1536 dimensions), not nomic-embed-text (768" in err
    assert brain.read_bytes() == AGENTOS_BRAIN.read_bytes()
    brain.chmod(0o644)
    code, swept, err = run(capsys, *common, "sweep")
    assert code == 0 and swept == {"expired": 0, "embedded": 0}, err
    code, found, err = run(capsys, *common, "search", "Alice")
    assert code == 0 and found["results"], err


def test_a_read_only_brain_answers_searches_and_refuses_writes(tmp_path: Path, capsys) -> None:
    brain = tmp_path / "b.sqlite"
    common = ["--brain", str(brain), "--ollama-url", "http://127.0.0.1:9", "--json"]
    code, added, _ = run(capsys, *common, "add", "kept on read-only media")
    brain.chmod(0o444)
    before = brain.read_bytes()
    code, found, err = run(capsys, *common, "search", "media")
    assert code == 0 and [r["id"] for r in found["results"]] == [added["id"]], err
    assert found["results"][0]["retrieval_count"] == 0  # answered, not noted as a recall
    code, _, err = run(capsys, *common, "add", "another")
    assert code == 1
    assert err.startswith(f"memgui: {brain} is read-only; it cannot be migrated or written")
    assert brain.read_bytes() == before


def test_embed_model_belongs_to_rebuild_which_needs_one(tmp_path: Path, capsys) -> None:
    brain = str(tmp_path / "b.sqlite")
    common = ["--brain", brain, "--ollama-url", "http://127.0.0.1:9", "--json"]
    code, _, err = run(capsys, *common, "embed", "--rebuild")
    assert code == 2 and "model must name the model every trace is embedded with" in err
    code, _, err = run(capsys, *common, "embed", "--model", "all-minilm")
    assert code == 2 and "model is only for --rebuild or --status (got 'all-minilm')" in err
    assert not Path(brain).exists()  # refused before the brain was opened


def test_an_ollama_url_no_server_can_have_reads_as_down(tmp_path: Path, capsys) -> None:
    brain = str(tmp_path / "b.sqlite")
    common = ["--brain", brain, "--ollama-url", "http://127.0.0.1:99999", "--json"]
    code, added, err = run(capsys, *common, "add", "stored all the same")
    assert code == 0 and added["content"] == "stored all the same", err
    code, status, err = run(capsys, *common, "embed", "--status")
    assert code == 0 and status["ollama"] == "down" and status["pending"] == 1, err
    code, swept, err = run(capsys, *common, "sweep")
    assert code == 0, err
    code, found, _ = run(capsys, *common, "search", "stored", "--mode", "auto")
    assert code == 0 and found["search_mode"] == "keyword"
