"""A small Ollama-compatible HTTP server for tests.

It serves `/api/embed` (batched), `/api/chat`, `/api/tags` and `/api/version` on 127.0.0.1
so that the real `ollama` client runs end to end. Its vectors carry meaning: each word goes
through a small synonym table to a concept ("car", "automobile" and "vehicle" are one
concept), words outside the table hash to dimensions of their own, and the bag of concepts is
normalised. So a paraphrase that shares no word with the query still lands near it, as with a
real model. Its chat answers deterministically (`fake_chat.answer`), or with what a test
queued (`chat_replies`).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import threading
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.fake_chat import answer as default_chat_answer

# Each group is one concept; concept i owns dimension i + 1 (dimension 0 marks empty text).
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("car", "cars", "automobile", "automobiles", "vehicle", "vehicles", "auto"),
    ("broke", "broken", "breakdown", "failure", "failed", "fails", "fault", "stalled", "dead"),
    ("engine", "motor", "ignition"),
    ("repair", "fix", "fixed", "mechanic", "garage", "service"),
    ("cold", "freezing", "frozen", "winter", "icy"),
    ("morning", "dawn", "sunrise", "early"),
    ("database", "sqlite", "storage", "datastore", "db"),
    ("fast", "quick", "speedy", "rapid", "performance", "latency"),
    ("slow", "sluggish", "laggy", "lag"),
    ("python", "py", "cpython"),
    ("dog", "dogs", "puppy", "canine", "hound"),
    ("cat", "cats", "kitten", "feline"),
    ("food", "meal", "dinner", "lunch", "eat", "eating", "cuisine"),
    ("coffee", "espresso", "latte", "caffeine"),
    ("happy", "glad", "joyful", "cheerful", "pleased"),
    ("sad", "unhappy", "gloomy", "miserable"),
    ("travel", "trip", "journey", "voyage", "flight", "vacation", "holiday"),
    ("money", "cash", "budget", "cost", "price", "expensive", "cheap"),
    ("doctor", "physician", "clinic", "hospital", "medical"),
    ("music", "song", "songs", "melody", "concert"),
    ("test", "tests", "testing", "pytest", "unittest"),
    ("build", "compile", "compiler", "toolchain"),
    ("deploy", "release", "ship", "rollout", "deployment"),
    ("bug", "bugs", "defect", "crash", "crashes", "error", "errors"),
    ("book", "books", "novel", "reading", "read"),
)
STOP_WORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "is",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "and",
        "or",
        "but",
        "for",
        "with",
        "by",
        "from",
        "this",
        "that",
        "my",
        "our",
        "your",
        "their",
        "we",
        "i",
        "you",
        "he",
        "she",
        "they",
        "would",
        "could",
        "should",
        "not",
        "no",
        "did",
        "do",
        "does",
    )
)
CONCEPT_OF = {word: index + 1 for index, group in enumerate(SYNONYM_GROUPS) for word in group}
DEFAULT_MODELS = {"nomic-embed-text": 768}
DEFAULT_CHAT_MODELS = ("llama3.2",)
HOLD_LIMIT_S = 120  # a held embed call goes on after this, should a test never release it


def concept_vector(text: str, dimensions: int) -> list[float]:
    """The normalised bag-of-concepts vector of a text."""
    vector = [0.0] * dimensions
    words = [w for w in re.findall(r"\w+", text.lower()) if w not in STOP_WORDS]
    free_dims = dimensions - len(SYNONYM_GROUPS) - 1
    for word in words:
        concept = CONCEPT_OF.get(word)
        if concept is None or concept >= dimensions:
            # Unknown words still count, each on a dimension picked by a stable hash.
            concept = len(SYNONYM_GROUPS) + 1 + zlib.crc32(word.encode()) % max(free_dims, 1)
            concept = min(concept, dimensions - 1)
        vector[concept] += 1.0
    if not words:
        vector[0] = 1.0
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


class FakeOllama:
    """An Ollama-compatible server in a thread; stop() and start() keep the port."""

    def __init__(
        self,
        models: dict[str, int] | None = None,
        port: int = 0,
        chat_models: tuple[str, ...] = DEFAULT_CHAT_MODELS,
    ) -> None:
        self.models = dict(models or DEFAULT_MODELS)
        self.chat_models = set(chat_models)
        self.chat_replies: list[str] = []  # answered first, in order, before the default
        self.chat_requests: list[dict[str, Any]] = []  # every /api/chat body, in order
        self.fail_next_chat = 0  # answer the next N chat calls with HTTP 500
        # Called with each chat body before it is answered (a test looks at the world then).
        self.chat_hook: Callable[[dict[str, Any]], None] | None = None
        self.port = port
        self.requests: dict[str, int] = {}
        self.embedded_texts: list[str] = []
        self.fail_next = 0  # answer the next N embed calls with HTTP 500
        self._embeds_go_on = threading.Event()  # cleared: embed calls wait (`hold_embeds`)
        self._embeds_go_on.set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def embed_count(self) -> int:
        return self.requests.get("/api/embed", 0)

    def hold_embeds(self) -> None:
        """Keep each embed call from now on waiting for `release_embeds`: a call under way,
        or a server that does not answer, for as long as a test needs."""
        self._embeds_go_on.clear()

    def release_embeds(self) -> None:
        self._embeds_go_on.set()

    def start(self) -> FakeOllama:
        if self._server is not None:
            return self
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _make_handler(self))
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        with self._lock:  # kept-alive client connections must die too, as with a real exit
            for connection in list(self._connections):
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            self._connections.clear()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def restart(self) -> FakeOllama:
        self.stop()
        return self.start()

    def _count(self, path: str) -> None:
        with self._lock:
            self.requests[path] = self.requests.get(path, 0) + 1

    def _answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if method == "GET" and path == "/api/version":
            return 200, {"version": "0.6.0"}
        if method == "GET" and path == "/api/tags":
            listed = [_tag(name, dims) for name, dims in self.models.items()]
            listed += [_tag(name, 0) for name in sorted(self.chat_models)]
            return 200, {"models": listed}
        if method == "POST" and path == "/api/embed":
            return self._embed(body)
        if method == "POST" and path == "/api/chat":
            return self._chat(body)
        return 404, {"error": f"{method} {path} not found"}

    def _embed(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if self.fail_next > 0:
                self.fail_next -= 1
                return 500, {"error": "simulated failure"}
        name = str(body.get("model", ""))
        dimensions = self.models.get(name.removesuffix(":latest"))
        if dimensions is None:
            return 404, {"error": f'model "{name}" not found, try pulling it first'}
        texts = body.get("input", "")
        texts = [texts] if isinstance(texts, str) else list(texts)
        with self._lock:
            self.embedded_texts.extend(texts)
        vectors = [concept_vector(text, dimensions) for text in texts]
        return 200, {
            "model": name,
            "embeddings": vectors,
            "total_duration": 1000,
            "load_duration": 10,
            "prompt_eval_count": sum(len(t.split()) for t in texts),
        }

    def _chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.chat_hook is not None:
            self.chat_hook(body)
        with self._lock:
            self.chat_requests.append(body)
            if self.fail_next_chat > 0:
                self.fail_next_chat -= 1
                return 500, {"error": "simulated failure"}
            queued = self.chat_replies.pop(0) if self.chat_replies else None
        name = str(body.get("model", ""))
        if name.removesuffix(":latest") not in self.chat_models:
            return 404, {"error": f'model "{name}" not found, try pulling it first'}
        messages = body.get("messages") or []
        content = queued if queued is not None else default_chat_answer(messages)
        return 200, {
            "model": name,
            "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": content},
            "done": True,
            "done_reason": "stop",
            "total_duration": 1000,
        }


def _tag(name: str, dimensions: int) -> dict[str, Any]:
    return {
        "name": f"{name}:latest",
        "model": f"{name}:latest",
        "modified_at": "2025-01-01T00:00:00Z",
        "size": 274302450,
        "digest": f"{zlib.crc32(name.encode()):08x}" * 8,
        "details": {"format": "gguf", "family": "test", "parameter_size": f"{dimensions}d"},
    }


def _make_handler(owner: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # TCP_NODELAY, as Ollama's Go server has: otherwise the body waits behind the headers
        # for the client's delayed ACK, 40 ms on every call.
        disable_nagle_algorithm = True

        def setup(self) -> None:
            super().setup()
            with owner._lock:
                owner._connections.add(self.connection)

        def finish(self) -> None:
            with owner._lock:
                owner._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def _handle(self, method: str) -> None:
            path = self.path.split("?", 1)[0]
            owner._count(path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                status, answer = 400, {"error": "invalid JSON body"}
            else:
                if path == "/api/embed":
                    owner._embeds_go_on.wait(HOLD_LIMIT_S)
                status, answer = owner._answer(method, path, body)
            data = json.dumps(answer).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (a timeout) or the server is stopping
                self.close_connection = True

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._handle("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._handle("POST")

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

    return Handler
