"""The Ollama embedder against an Ollama-compatible server, through the real client."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memgui.core.errors import EmbeddingUnavailable
from memgui.core.search.embed import (
    DEFAULT_OLLAMA_URL,
    EmbeddingModelMissing,
    OllamaEmbedder,
    pack_vector,
    resolve_ollama_url,
    unpack_vector,
)
from tests.support import ollama_fixture
from tests.support.ollama_server import FakeOllama
from tests.support.paths import ROOT

ollama_server = ollama_fixture.ollama_server


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_embed_batches_texts_in_one_call(ollama_server: FakeOllama) -> None:
    embedder = OllamaEmbedder(ollama_server.url)
    vectors = embedder.embed(["a car", "an automobile", "a kitten"])
    assert len(vectors) == 3 and all(len(v) == 768 for v in vectors)
    assert ollama_server.embed_count() == 1
    assert embedder.dimensions == 768
    assert cosine(vectors[0], vectors[1]) > 0.99
    assert cosine(vectors[0], vectors[2]) < 0.1


def test_empty_batch_makes_no_call(ollama_server: FakeOllama) -> None:
    assert OllamaEmbedder(ollama_server.url).embed([]) == []
    assert ollama_server.embed_count() == 0


def test_status_reachable_model_missing_down(ollama_server: FakeOllama) -> None:
    assert OllamaEmbedder(ollama_server.url).status() == "reachable"
    assert OllamaEmbedder(ollama_server.url, model="mxbai-embed-large").status() == "model missing"
    ollama_server.stop()
    assert OllamaEmbedder(ollama_server.url).status() == "down"


def test_server_down_raises_typed_error_and_fails_fast_after(ollama_server: FakeOllama) -> None:
    embedder = OllamaEmbedder(ollama_server.url, retry_after=60)
    ollama_server.stop()
    with pytest.raises(EmbeddingUnavailable, match="not reachable"):
        embedder.embed(["hello"])
    ollama_server.start()  # same port
    with pytest.raises(EmbeddingUnavailable, match="retrying later"):
        embedder.embed(["hello"])  # no waiting on a server just seen down
    assert ollama_server.embed_count() == 0
    assert embedder.status() == "reachable"  # a successful probe clears the pause
    assert len(embedder.embed(["hello"])) == 1


def test_a_server_gone_after_answering_is_down_through_the_client(
    ollama_server: FakeOllama,
) -> None:
    embedder = OllamaEmbedder(ollama_server.url)
    assert len(embedder.embed(["hello"])) == 1
    ollama_server.stop()
    with pytest.raises(EmbeddingUnavailable, match="is not reachable; start it with"):
        embedder.embed(["hello"])
    assert embedder.status() == "down"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow  # a real process
def test_commands_with_ollama_off_never_load_its_client(tmp_path: Path) -> None:
    # Loading the client (httpx, pydantic) costs ~0.3 s, numpy and sqlite-vec ~0.1 s: most
    # of a short command's time, when the brain holds no vector.
    script = (
        "import sys\nfrom memgui.__main__ import main\ncode = main(sys.argv[1:])\n"
        "print(*(name in sys.modules for name in ('ollama', 'httpx', 'numpy')), code)"
    )
    url = f"http://127.0.0.1:{closed_port()}"
    for command in (["add", "stored while Ollama is off"], ["info"], ["search", "stored"]):
        argv = ["--brain", str(tmp_path / "b.sqlite"), "--ollama-url", url, *command]
        done = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True, text=True, timeout=60, cwd=ROOT,
        )  # fmt: skip
        assert done.stdout.splitlines()[-1] == "False False False 0", (command, done.stderr)


def test_missing_model_is_typed(ollama_server: FakeOllama) -> None:
    embedder = OllamaEmbedder(ollama_server.url, model="mxbai-embed-large")
    with pytest.raises(EmbeddingModelMissing, match="ollama pull mxbai-embed-large"):
        embedder.embed(["hello"])


def test_server_error_is_typed(ollama_server: FakeOllama) -> None:
    ollama_server.fail_next = 1
    with pytest.raises(EmbeddingUnavailable, match="HTTP 500"):
        OllamaEmbedder(ollama_server.url).embed(["hello"])


def test_timeout_is_typed() -> None:
    server = FakeOllama().start()
    server.hold_embeds()  # it never answers while the client waits
    try:
        with pytest.raises(EmbeddingUnavailable, match="timed out"):
            OllamaEmbedder(server.url, timeout=0.2).embed(["hello"])
    finally:
        server.release_embeds()
        server.stop()


def test_resolve_url_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMGUI_OLLAMA_URL", raising=False)
    assert resolve_ollama_url(None) == DEFAULT_OLLAMA_URL
    assert resolve_ollama_url(None, "http://settings:1") == "http://settings:1"
    monkeypatch.setenv("MEMGUI_OLLAMA_URL", "http://env:2/")
    assert resolve_ollama_url(None, "http://settings:1") == "http://env:2"
    assert resolve_ollama_url("http://cli:3", "http://settings:1") == "http://cli:3"
    assert resolve_ollama_url("  ", None) == "http://env:2"


def test_pack_unpack_round_trip_little_endian() -> None:
    blob = pack_vector([1.0, -2.5, 0.25])
    assert blob == np.asarray([1.0, -2.5, 0.25], dtype="<f4").tobytes()
    assert unpack_vector(blob).tolist() == [1.0, -2.5, 0.25]


def test_unpack_legacy_json_and_empty() -> None:
    assert unpack_vector(b"[0.5, 1, -2]").tolist() == [0.5, 1.0, -2.0]
    assert unpack_vector("[0.5]").tolist() == [0.5]
    assert unpack_vector(None) is None
    assert unpack_vector(b"") is None
    assert unpack_vector(b"abc") is None  # not a whole number of floats


def test_float_blob_starting_with_bracket_is_not_json() -> None:
    value = np.frombuffer(b"[\x00\x00\x00", dtype="<f4")[0]
    blob = pack_vector([value, 1.0])
    assert blob[:1] == b"["
    assert unpack_vector(blob).tolist() == [value, 1.0]
