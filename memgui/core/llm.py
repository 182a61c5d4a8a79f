"""A chat model on a local Ollama, for the steps that need one: consolidation's derive step
and auto-ingest's fact extraction (seed 000). Ollama being down is normal: callers catch
`LLMUnavailable`, say so, and go on without (derive is skipped; ingest stores nothing).

The model answers through Ollama's `/api/chat` via the official `ollama` client, with
temperature 0 so that the same prompt asks for the same answer.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Literal

from memgui.core.errors import MemguiError
from memgui.core.search.embed import LazyOllamaClient, resolve_ollama_url

if TYPE_CHECKING:
    import ollama

DEFAULT_CHAT_MODEL = "llama3.2"
CHAT_MODEL_ENV = "MEMGUI_CHAT_MODEL"
DEFAULT_TIMEOUT_S = 120.0  # a small model on a laptop CPU takes tens of seconds
STATUS_TIMEOUT_S = 5.0

ChatStatus = Literal["reachable", "model missing", "down"]


class LLMUnavailable(MemguiError):
    """The chat model could not answer (Ollama down, the model missing, an HTTP error)."""


def resolve_chat_model(value: str | None) -> str:
    """`--chat-model`, else `$MEMGUI_CHAT_MODEL`, else llama3.2."""
    for candidate in (value, os.environ.get(CHAT_MODEL_ENV)):
        if candidate and candidate.strip():
            return candidate.strip()
    return DEFAULT_CHAT_MODEL


class OllamaChat(LazyOllamaClient):
    """One chat model of one Ollama: `chat(system, user) -> str`, `status()`."""

    def __init__(
        self, url: str | None = None, model: str | None = None, timeout: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self.url = resolve_ollama_url(url)
        self.model = resolve_chat_model(model)
        self.timeout = timeout
        self._client: ollama.Client | None = None
        self.calls = 0  # answered calls (what a report can count)
        self.seconds = 0.0

    def __repr__(self) -> str:
        return f"OllamaChat(url={self.url!r}, model={self.model!r})"

    def chat(self, system: str | None, user: str) -> str:
        """The model's answer to one user message (after a system prompt, when given)."""
        import httpx
        import ollama

        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": user})
        start = time.perf_counter()
        try:
            response = self.client.chat(
                model=self.model, messages=messages, options={"temperature": 0}
            )
        except ollama.ResponseError as error:
            if error.status_code == 404:
                raise LLMUnavailable(
                    f"Ollama at {self.url} has no model {self.model!r}; "
                    f"pull it with `ollama pull {self.model}`"
                ) from None
            raise LLMUnavailable(
                f"Ollama at {self.url} failed to answer (HTTP {error.status_code}: {error.error})"
            ) from None
        except (ConnectionError, httpx.HTTPError, OSError, ValueError) as error:
            reason = "timed out" if isinstance(error, httpx.TimeoutException) else "not reachable"
            raise LLMUnavailable(
                f"Ollama at {self.url} is {reason}; start it with `ollama serve`"
            ) from None
        self.calls += 1
        self.seconds += time.perf_counter() - start
        return str(response.message.content or "")

    def status(self) -> ChatStatus:
        """Whether Ollama answers and has the model (asks it now)."""
        import httpx
        import ollama

        # A short wait of its own: a hung Ollama must not hold a plan for the chat's timeout.
        asking = ollama.Client(host=self.url, timeout=min(self.timeout, STATUS_TIMEOUT_S))
        try:
            listing = asking.list()
        except (ollama.ResponseError, ConnectionError, httpx.HTTPError, OSError, ValueError):
            return "down"
        finally:
            asking.close()  # type: ignore[no-untyped-call]  # the client's close is untyped
        names = {m.model or "" for m in listing.models}
        wanted = self.model if ":" in self.model else f"{self.model}:latest"
        return "reachable" if self.model in names or wanted in names else "model missing"

    def unavailable_reason(self) -> str | None:
        """Why this model cannot answer now, in words; None when it can."""
        state = self.status()
        if state == "down":
            return f"Ollama at {self.url} is not reachable"
        if state == "model missing":
            return f"Ollama at {self.url} has no model {self.model!r} (ollama pull {self.model})"
        return None
