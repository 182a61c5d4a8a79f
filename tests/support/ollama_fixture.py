"""pytest fixture `ollama_server`: a running Ollama-compatible server on 127.0.0.1.

Import it into a conftest with
`from tests.support.ollama_fixture import ollama_server  # noqa: F401`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.ollama_server import FakeOllama


@pytest.fixture
def ollama_server() -> Iterator[FakeOllama]:
    """A fresh server per test (nomic-embed-text, 768 dimensions); stopped afterwards."""
    server = FakeOllama(models={"nomic-embed-text": 768, "all-minilm": 384}).start()
    try:
        yield server
    finally:
        server.stop()
