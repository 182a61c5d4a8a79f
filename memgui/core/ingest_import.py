"""Facts drawn from a ChatGPT export, as part of its import plan ("extract facts").

With `ImportOptions.extract_facts`, planning a ChatGPT import asks the chat model, for each
question and reply the plan would add (`new` pairs only: a pair the brain holds already was
asked before), for the facts auto-ingest would keep (`core/ingest.py`, filtered by
`ImportOptions.facts_config`). Each kept fact joins the plan as a trace record of its own,
`new` or a `duplicate` of the trace holding its text, so it is reviewed, edited, accepted or
rejected with the rest and written by the same commit, in the same batch. A fact skipped by
the filter is not listed; a pair whose call failed, or a chat model that cannot be reached
at all, is listed under what the plan did not read. Calls run while planning, which writes
nothing; a cancel stops between two calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from memgui.core.ingest import extract, fact_fields, filter_facts
from memgui.core.ingest_config import AutoIngestConfig
from memgui.core.io.records import (
    DUPLICATE,
    NEW,
    SKIPPED,
    TRACE,
    UNREAD,
    ImportRecord,
    plain_fields,
)
from memgui.core.io.writing.commit_rows import find_trace
from memgui.core.progress import Cancelled, Progress

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.io.planning.plan import ImportPlan

_ASKED, _ANSWERED = "[user]: ", "\n[assistant]: "


def turn_of(content: str) -> tuple[str, str] | None:
    """(question, reply) of a ChatGPT pair's text `[user]: …\\n[assistant]: …`, or None."""
    if not content.startswith(_ASKED):
        return None
    question, _, reply = content[len(_ASKED) :].partition(_ANSWERED)
    return question, reply


def facts_into_plan(
    brain: Brain, plan: ImportPlan, cancel_requested: Callable[[], bool] | None = None
) -> Iterator[Progress]:
    """Add the facts of the plan's new ChatGPT pairs to it (see the module docstring)."""
    options = plan.options
    llm = options.facts_llm
    if llm is None:
        from memgui.core.llm import OllamaChat

        llm = OllamaChat()
    config: AutoIngestConfig = options.facts_config or AutoIngestConfig()
    pairs = [
        (i, r)
        for i, r in enumerate(plan.records)
        if r.kind == TRACE and r.verdict == NEW and turn_of(str(r.fields.get("content", "")))
    ]
    if not pairs or not config.enabled:
        return
    reason = llm.unavailable_reason()
    if reason is not None:
        plan.not_read.append(_not_read(plan.source, f"facts not extracted: {reason}"))
        return
    seen: dict[tuple[str, str, str], str] = {}  # (scope, scope id, text) -> where first
    for n, (_i, pair) in enumerate(pairs, start=1):
        if cancel_requested is not None and cancel_requested():
            raise Cancelled("planning the import was cancelled")
        yield Progress(n - 1, len(pairs), f"extracting facts: {n} of {len(pairs)} chats")
        _facts_of(brain, plan, pair, llm, config, seen)
    yield Progress(len(pairs), len(pairs), f"extracted facts of {len(pairs)} chats")


def _facts_of(
    brain: Brain,
    plan: ImportPlan,
    pair: ImportRecord,
    llm: Any,
    config: AutoIngestConfig,
    seen: dict[tuple[str, str, str], str],
) -> None:
    from memgui.core.llm import LLMUnavailable

    fields = plain_fields(pair.fields)
    question, reply = turn_of(fields["content"]) or ("", "")
    try:
        facts = extract(llm, question, reply)
    except LLMUnavailable as error:
        plan.not_read.append(_not_read(pair.source, f"facts not extracted: {error}"))
        return
    metadata = fields.get("metadata") or {}
    conversation_id = metadata.get("conversation_id") if isinstance(metadata, dict) else None
    for n, fact in enumerate(filter_facts(facts, config), start=1):
        row = fact_fields(fact, conversation_id, fields.get("scope_id") or "")
        row["scope"] = fields.get("scope") or "user"
        row["created_at"] = fields.get("created_at")
        row["metadata"]["extractedFrom"] = fields.get("id")
        record = ImportRecord(source=f"{pair.source}#fact-{n}", kind=TRACE, fields=row)
        record.reason = f"{fact.category}: {fact.reason}"
        key = (row["scope"], row["scope_id"], row["content"])
        match = find_trace(brain, row) if plan.options.dedup else None
        if match is not None:
            record.verdict, record.existing_id = DUPLICATE, match
            record.reason = f"same text as trace {match} in its scope"
        elif key in seen and plan.options.dedup:
            record.verdict = DUPLICATE
            record.reason = f"the same fact as {seen[key]}"
        else:
            seen.setdefault(key, record.source)
        plan.records.append(record)


def _not_read(source: str, reason: str) -> ImportRecord:
    return ImportRecord(source=source, kind=UNREAD, verdict=SKIPPED, reason=reason)
