"""How to read an import source and how to file what it holds: `ImportOptions`.

Below the readers and the planner alike: the planner takes options from its caller and hands
them to the format's reader (`readers.READERS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.io.detect import FORMATS
from memgui.core.model import SCOPES, check_choice, check_text


@dataclass
class ImportOptions:
    """How to read a source and how to file what it holds."""

    format: str = "auto"
    dedup: bool = True
    all_branches: bool = False  # ChatGPT: every edit and regeneration, not just the one seen
    scope: str | None = None  # file every trace under this scope instead of its own
    scope_id: str | None = None  # ... and this scope id
    brain_id: str | None = None  # the brain to read from a source that holds several
    content_column: str | None = None  # CSV: the column holding the text (default content)
    # The brain the records are for, set by `plan` (ChatGPT trace ids hash it with the text).
    target_brain_id: str | None = None
    # ChatGPT: also plan the facts auto-ingest draws from each new question and reply
    # (core/ingest_import.py), asking `facts_llm` (a core.llm.OllamaChat; default: the
    # default Ollama) and filtering them by `facts_config` (a core.ingest_config
    # AutoIngestConfig; default: Wunderland's).
    extract_facts: bool = False
    facts_llm: Any = None
    facts_config: Any = None

    def validated(self) -> ImportOptions:
        if self.format != "auto":
            check_choice("format", self.format, FORMATS)
        if self.scope is not None:
            check_choice("scope", self.scope, SCOPES)
        if self.scope_id is not None and not isinstance(self.scope_id, str):
            raise InvalidArgument("scope_id", f"must be a string (got {self.scope_id!r})")
        if self.scope_id is not None:
            check_text("scope_id", self.scope_id)
        if not isinstance(self.extract_facts, bool):
            raise InvalidArgument(
                "extract_facts", f"must be True or False (got {self.extract_facts!r})"
            )
        if self.extract_facts and self.format not in ("auto", "chatgpt"):
            raise InvalidArgument(
                "extract_facts",
                f"works on ChatGPT exports only (got format {self.format!r})",
                self.format,
            )
        return self
