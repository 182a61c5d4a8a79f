"""Embeddings from a local Ollama, and the on-disk form of a vector.

The vector of a trace is stored as AgentOS stores it: a float32 little-endian BLOB in
`memory_traces.embedding` (older AgentOS rows may hold a JSON array instead). Embeddings come
from Ollama's batched `/api/embed` through the official `ollama` client. Ollama being down is
normal: callers catch `EmbeddingUnavailable` and leave the trace pending for a later backfill.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from memgui.core.errors import EmbeddingUnavailable

if TYPE_CHECKING:
    import numpy as np
    import ollama

# numpy loads on first use (~0.1 s): a CLI call that handles no vector never pays it.

DEFAULT_OLLAMA_URL = "http://localhost:11434"
DEFAULT_EMBEDDING_MODEL = "nomic-embed-text"
OLLAMA_URL_ENV = "MEMGUI_OLLAMA_URL"
# After a failed call, further calls fail at once for this long, so that storing a memory
# never waits on a hung Ollama (a refused connection is instant, a timeout is not).
DEFAULT_RETRY_AFTER_S = 30.0

EmbedderStatus = Literal["reachable", "model missing", "down"]


class EmbeddingModelMissing(EmbeddingUnavailable):
    """Ollama answers but does not have the model."""


def resolve_ollama_url(cli_value: str | None, settings_value: str | None = None) -> str:
    """The Ollama URL: `--ollama-url`, else `$MEMGUI_OLLAMA_URL`, else settings, else default."""
    for candidate in (cli_value, os.environ.get(OLLAMA_URL_ENV), settings_value):
        if candidate and candidate.strip():
            return candidate.strip().rstrip("/")
    return DEFAULT_OLLAMA_URL


def pack_vector(values: Sequence[float] | np.ndarray) -> bytes:
    """A vector as the float32 little-endian BLOB AgentOS reads."""
    import numpy as np

    return np.asarray(values, dtype="<f4").tobytes()


def unpack_vector(blob: bytes | str | memoryview | None) -> np.ndarray | None:
    """The float32 vector in an embedding column, or None when it holds none.

    Reads the float32 BLOB and the legacy JSON-array form (first byte `[`). A float32 BLOB
    can start with the byte `[` too, so JSON is only believed when it parses as a list.
    """
    if blob is None:
        return None
    import numpy as np

    if isinstance(blob, str):
        blob = blob.encode()
    data = bytes(blob)
    if not data:
        return None
    if data[:1] == b"[" and data.rstrip()[-1:] == b"]":
        try:
            parsed = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            parsed = None
        if isinstance(parsed, list) and all(isinstance(v, int | float) for v in parsed):
            return np.asarray(parsed, dtype=np.float32)
    if len(data) % 4:
        return None
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


class LazyOllamaClient:
    """The official client of the Ollama at `url`, made on first use: importing it (httpx,
    pydantic) takes ~0.3 s, more than a whole `memgui get`, which never asks Ollama."""

    url: str
    timeout: float
    _client: ollama.Client | None = None

    @property
    def client(self) -> ollama.Client:
        if self._client is None:
            import ollama

            self._client = ollama.Client(host=self.url, timeout=self.timeout)
        return self._client

    def close(self) -> None:
        close = getattr(self._client, "close", None)
        if close is not None:
            close()


class OllamaEmbedder(LazyOllamaClient):
    """Text → vectors through Ollama's `/api/embed`, with typed failures."""

    def __init__(
        self,
        url: str | None = None,
        model: str = DEFAULT_EMBEDDING_MODEL,
        timeout: float = 10.0,
        retry_after: float = DEFAULT_RETRY_AFTER_S,
    ) -> None:
        self.url = resolve_ollama_url(url)
        self.model = model
        self.timeout = timeout
        self.retry_after = retry_after
        self.dimensions: int | None = None  # known after the first successful call
        self._down_until = 0.0
        self._last_error = ""
        self._client: ollama.Client | None = None

    def __repr__(self) -> str:
        return f"OllamaEmbedder(url={self.url!r}, model={self.model!r})"

    def _refused(self) -> bool:
        """Whether nothing listens at the URL: a refused connection says "down" at once,
        without loading the client (the common case of a CLI call with Ollama off)."""
        try:
            parts = urllib.parse.urlsplit(self.url if "//" in self.url else f"//{self.url}")
            port = parts.port or (443 if parts.scheme == "https" else 80)
            socket.create_connection((parts.hostname or "localhost", port), self.timeout).close()
        except ConnectionRefusedError:
            return True
        except (ValueError, OverflowError):
            return True  # no server can listen there (a port out of range): down
        except OSError:
            return False  # unknown: let the client try and say what went wrong
        return False

    def known_down(self) -> bool:
        """Whether a call failed within the last `retry_after` seconds: callers that would
        only be told so again (a search choosing its mode) can skip the attempt."""
        return time.monotonic() < self._down_until

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, from one batched call; EmbeddingUnavailable on failure."""
        texts = list(texts)
        if not texts:
            return []
        if time.monotonic() < self._down_until:
            raise EmbeddingUnavailable(
                f"Ollama at {self.url} is unavailable ({self._last_error}); retrying later"
            )
        if self._client is None and self._refused():
            raise self._failed(self._not_reachable("not reachable"))
        import httpx
        import ollama

        try:
            response = self.client.embed(model=self.model, input=texts)
        except ollama.ResponseError as error:
            if error.status_code == 404:
                raise self._failed(
                    EmbeddingModelMissing(
                        f"Ollama at {self.url} has no model {self.model!r}; "
                        f"pull it with `ollama pull {self.model}`"
                    )
                ) from None
            raise self._failed(
                EmbeddingUnavailable(
                    f"Ollama at {self.url} failed to embed (HTTP {error.status_code}: "
                    f"{error.error})"
                )
            ) from None
        except (ConnectionError, httpx.HTTPError, OSError, ValueError) as error:
            # (ValueError: the client's own word for a URL it cannot use.)
            reason = "timed out" if isinstance(error, httpx.TimeoutException) else "not reachable"
            raise self._failed(self._not_reachable(reason)) from None
        vectors = [list(map(float, vector)) for vector in response.embeddings]
        self._check(texts, vectors)
        self._down_until = 0.0
        self.dimensions = len(vectors[0])
        return vectors

    def status(self) -> EmbedderStatus:
        """Whether Ollama answers and has the model (asks it now, never the cached state)."""
        if self._client is None and self._refused():
            return "down"
        import httpx
        import ollama

        try:
            listing = self.client.list()
        except (ollama.ResponseError, ConnectionError, httpx.HTTPError, OSError, ValueError):
            return "down"
        self._down_until = 0.0
        names = {m.model or "" for m in listing.models}
        wanted = self.model if ":" in self.model else f"{self.model}:latest"
        if self.model in names or wanted in names:
            return "reachable"
        return "model missing"

    def _not_reachable(self, reason: str) -> EmbeddingUnavailable:
        return EmbeddingUnavailable(
            f"Ollama at {self.url} is {reason}; start it with `ollama serve`"
        )

    def _failed(self, error: EmbeddingUnavailable) -> EmbeddingUnavailable:
        self._last_error = str(error)
        self._down_until = time.monotonic() + self.retry_after
        return error

    def _check(self, texts: list[str], vectors: list[list[float]]) -> None:
        """A reply with the wrong count, ragged or non-finite vectors is no reply at all."""
        if len(vectors) != len(texts):
            raise EmbeddingUnavailable(
                f"Ollama returned {len(vectors)} vectors for {len(texts)} texts "
                f"(model {self.model!r})"
            )
        sizes = {len(v) for v in vectors}
        if len(sizes) != 1 or 0 in sizes:
            raise EmbeddingUnavailable(
                f"Ollama returned vectors of sizes {sorted(sizes)} (model {self.model!r})"
            )
        import numpy as np

        # One C pass over the batch (a generator over each float cost ~0.2 ms per vector).
        if not np.isfinite(np.asarray(vectors, dtype=np.float64)).all():
            raise EmbeddingUnavailable(f"Ollama returned a non-finite vector ({self.model!r})")
