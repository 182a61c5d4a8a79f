"""Auto-ingest: facts worth keeping, drawn from one conversation turn (seed 000, Wunderland's
`MemoryAutoIngestPipeline`; upstream-notes §C.1).

    turn = ingest_turn(brain, "I prefer dark mode.", "Noted!", config, OllamaChat(url))

1. **Keep the turn.** The user's message and the assistant's reply are stored first, as a
   conversation with its two messages (as a ChatGPT import keeps a chat), in a write of their
   own: whatever happens next, the raw turn is never lost.
2. **Extract.** One chat call, outside any transaction, asks for a JSON array of
   `{content, category, importance, entities}` with Wunderland's system prompt. Its answer
   is read as Wunderland reads it (an array, or the first `[…]` in a fenced or wrapped
   answer; anything else is no fact). A failed call stores nothing for the turn.
3. **Filter.** A category the personality does not enable is skipped; the category's boost
   is added to the importance (at most 1); a fact below the threshold (the lower of the
   personality's and `storage.autoIngest`'s) is skipped; at most `maxPerTurn` facts are kept.
4. **Store.** Each kept fact becomes a trace tagged with its category and `auto_ingest`, its
   category in the trace's category, its importance as its strength, its entities and the
   conversation in its metadata — one journal batch, revertible. No deduplication, as in
   Wunderland (consolidation merges copies later, reviewably).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memgui.core import traces
from memgui.core.errors import InvalidArgument
from memgui.core.ingest_config import AutoIngestConfig
from memgui.core.model import check_id, check_text
from memgui.core.storage import journal_rows

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.shared_conversations import RowWrite

    BrainStore = Brain | SharedBrain  # either engine

ACTOR = "auto_ingest"
TAG = "auto_ingest"
SYSTEM_PROMPT = """You are a memory-extraction system. From the conversation turn below, pull out the facts worth remembering for future conversations.

Output ONLY a JSON array, with no markdown and no other text. Each element is an object:
- "content": one concise, standalone sentence
- "category": exactly one of "user_preference", "episodic", "goal", "knowledge", "correction"
- "importance": a number from 0.0 to 1.0
- "entities": an optional array of entity names

Categories: "correction" = the user corrects an earlier misunderstanding; "user_preference" = likes, dislikes, habits; "goal" = plans and intentions; "episodic" = notable events; "knowledge" = factual information.

Return [] if nothing is worth keeping.
Never store profanity, slurs or insults as facts about the user; summarise the emotional context instead.
Tell statements about the user apart from statements directed at the AI: "I'm a software engineer" is a fact; "You're useless" is feedback.
Never store anything that characterises or incriminates the user because of an outburst at the AI."""  # noqa: E501
# Wunderland's category → the trace's type and AgentOS's source type (store path B).
TYPE_OF = {
    "user_preference": ("semantic", "user_statement"),
    "knowledge": ("semantic", "agent_inference"),
    "episodic": ("episodic", "observation"),
    "goal": ("episodic", "user_statement"),
    "correction": ("semantic", "user_statement"),
}
OTHER_TYPE = ("episodic", "observation")
_ARRAY = re.compile(r"\[[\s\S]*\]")

STORED, SKIPPED, OVER_LIMIT = "stored", "skipped", "over the limit"


def user_prompt(user_message: str, assistant_message: str) -> str:
    return f"User: {user_message}\n\nAssistant: {assistant_message}"


@dataclass
class Fact:
    """One candidate fact, as the model gave it and as the filter left it."""

    content: str
    category: str
    importance: float  # after the category's boost, once filtered
    entities: list[str] = field(default_factory=list)
    verdict: str = ""  # stored | skipped | over the limit (a dry run: what it would be)
    reason: str = ""
    trace_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "category": self.category,
            "importance": round(self.importance, 6),
            "entities": list(self.entities),
            "verdict": self.verdict,
            "reason": self.reason,
            "id": self.trace_id,
        }


def parse_facts(reply: str) -> list[Fact]:
    """Wunderland's reading of the model's answer: the array itself, or the first greedy
    `[…]` in it (a fenced or wrapped array); a parse error or a non-array is no fact. Items
    need a string content and category and a numeric importance; entities are kept when
    they are an array (its strings)."""
    text = reply.strip() if isinstance(reply, str) else ""
    if not text.startswith("["):
        found = _ARRAY.search(text)
        text = found.group(0) if found else "[]"
    try:
        items = json.loads(text)
    except ValueError:
        return []
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        content, category, importance = (item.get(k) for k in ("content", "category", "importance"))
        if not isinstance(content, str) or not isinstance(category, str):
            continue
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            continue
        entities = item.get("entities")
        names = [e for e in entities if isinstance(e, str)] if isinstance(entities, list) else []
        out.append(Fact(content, category, float(importance), names))
    return out


def filter_facts(facts: list[Fact], config: AutoIngestConfig) -> list[Fact]:
    """Give each fact its verdict (Wunderland's filter); returns the kept ones, boosted."""
    personality = config.personality
    threshold, limit = config.threshold, config.per_turn
    kept: list[Fact] = []
    for fact in facts:
        if len(kept) >= limit:
            fact.verdict, fact.reason = OVER_LIMIT, f"{limit} facts a turn are kept already"
            continue  # Wunderland stops here: counted neither stored nor skipped
        fact.verdict = SKIPPED
        if fact.category not in personality.enabled_categories:
            fact.reason = f"category {fact.category!r} is not enabled"
            continue
        if not fact.content.strip():
            fact.reason = "no text"
            continue
        boost = personality.category_boosts.get(fact.category, 0.0)
        adjusted = min(1.0, fact.importance + boost)
        if adjusted < threshold:
            fact.reason = f"importance {adjusted:g} < threshold {threshold:g}"
            continue
        fact.importance = adjusted
        fact.verdict = STORED
        fact.reason = f"importance {adjusted:g} >= threshold {threshold:g}" + (
            f" (boost +{boost:g})" if boost else ""
        )
        kept.append(fact)
    return kept


def fact_fields(fact: Fact, conversation_id: str | None, scope_id: str = "") -> dict[str, Any]:
    """The trace a kept fact becomes (`Brain.add`'s arguments)."""
    trace_type, source_type = TYPE_OF.get(fact.category, OTHER_TYPE)
    metadata: dict[str, Any] = {
        "source": TAG,
        "importance": fact.importance,
        "entities": fact.entities,
        "sourceType": source_type,
    }
    if conversation_id:
        metadata["conversation_id"] = conversation_id
    return {
        "content": fact.content,
        "type": trace_type,
        "scope": "user",
        "scope_id": scope_id,
        "category": fact.category,
        "tags": [fact.category, TAG],
        "strength": max(0.0, min(1.0, fact.importance)),
        "metadata": metadata,
    }


@dataclass
class IngestResult:
    facts: list[Fact] = field(default_factory=list)
    conversation_id: str | None = None
    turn_batch_id: str | None = None  # the write that kept the raw turn
    batch_id: str | None = None  # the write that stored the facts
    error: str | None = None  # why nothing was extracted (the chat call failed, disabled)
    failed: bool = False  # the chat model could not answer: the turn is kept, no fact
    dry_run: bool = False

    @property
    def stored(self) -> int:
        return sum(1 for f in self.facts if f.verdict == STORED)

    @property
    def skipped(self) -> int:
        return sum(1 for f in self.facts if f.verdict == SKIPPED)

    def to_json(self) -> dict[str, Any]:
        return {
            "factsExtracted": len(self.facts),
            "stored": self.stored,
            "skipped": self.skipped,
            "facts": [f.to_json() for f in self.facts],
            "conversation_id": self.conversation_id,
            "turn_batch_id": self.turn_batch_id,
            "batch_id": self.batch_id,
            "error": self.error,
            "failed": self.failed,
            "dry_run": self.dry_run,
        }


def extract(llm: Any, user_message: str, assistant_message: str) -> list[Fact]:
    """Ask the chat model for the turn's facts (raises `LLMUnavailable` when it cannot)."""
    return parse_facts(llm.chat(SYSTEM_PROMPT, user_prompt(user_message, assistant_message)))


def keep_turn(
    brain: BrainStore,
    user_message: str,
    assistant_message: str,
    conversation_id: str | None = None,
    actor: str = ACTOR,
) -> tuple[str, str]:
    """Store the raw turn as a conversation (a new one, or appended to `conversation_id`)
    and its two messages, on either engine; returns (conversation id, batch id)."""
    from memgui.core.brain import Brain  # at run time: which engine

    now = brain.now()
    if conversation_id is None:
        conversation_id = f"cv_{uuid.uuid4()}"
    turn = (conversation_id, user_message, assistant_message, now)

    def rows_of(updated_at: int | None) -> Iterator[RowWrite]:
        return turn_rows(*turn, updated_at)

    if not isinstance(brain, Brain):  # a shared brain writes the same rows on its server
        return conversation_id, brain.keep_turn(conversation_id, rows_of, actor)
    with brain.write("keep the turn", kind="ingest", actor=actor) as batch:
        db, bid = brain.db, brain.brain_id
        held = db.conn.execute(
            "SELECT updated_at FROM conversations WHERE brain_id = ? AND id = ?",
            (bid, conversation_id),
        ).fetchone()
        for op, before, after in rows_of(None if held is None else held[0]):
            if before is None:
                journal_rows.insert_row(db, batch, bid, op, after)
            else:
                journal_rows.update_row(db, batch, bid, op, before, after)
        return conversation_id, batch.batch_id


def turn_rows(
    conversation_id: str,
    user_message: str,
    assistant_message: str,
    now: int,
    updated_at: int | None,
) -> Iterator[RowWrite]:
    """The rows a kept turn writes: its conversation (new, or its `updated_at` moved on)
    and its two messages, on either engine."""
    if updated_at is None:
        title = " ".join(user_message.split())[:80] or "Untitled"
        conversation = {
            "id": conversation_id,
            "title": title,
            "created_at": now,
            "updated_at": now,
            "metadata": {"source": TAG},
        }
        yield "conversation", None, conversation
    else:
        before = {"id": conversation_id, "updated_at": updated_at}
        yield "conversation", before, {"id": conversation_id, "updated_at": now}
    for offset, (role, text) in enumerate(
        (("user", user_message), ("assistant", assistant_message))
    ):
        message = {
            "id": f"msg_{uuid.uuid4()}",
            "conversation_id": conversation_id,
            "role": role,
            "content": text,
            "created_at": now + offset,
            "metadata": {"source": TAG},
        }
        yield "message", None, message


def ingest_turn(
    brain: BrainStore,
    user_message: str,
    assistant_message: str,
    config: AutoIngestConfig | None = None,
    llm: Any = None,
    *,
    conversation_id: str | None = None,
    scope_id: str = "",
    dry_run: bool = False,
    actor: str = ACTOR,
) -> IngestResult:
    """Keep the turn, extract its facts, filter them, store the kept ones (module docstring).
    With `dry_run` nothing is written: the facts say what would be stored."""
    from memgui.core.llm import LLMUnavailable

    for name, text in (("user", user_message), ("assistant", assistant_message)):
        if not isinstance(text, str):
            raise InvalidArgument(name, f"must be a string (got {type(text).__name__})", text)
        check_text(name, text)
    if conversation_id is not None:
        check_id("conversation_id", conversation_id, "conversation id")
    config = config or AutoIngestConfig()
    result = IngestResult(dry_run=dry_run)
    if not config.enabled:
        result.error = "auto-ingest is off (storage.autoIngest.enabled is false)"
        return result
    if not user_message.strip() and not assistant_message.strip():
        result.error = "the turn holds no text"
        return result
    if not dry_run:
        result.conversation_id, result.turn_batch_id = keep_turn(
            brain, user_message, assistant_message, conversation_id, actor
        )
    if llm is None:
        result.error = "no chat model was given; the turn was kept, no fact extracted"
        result.failed = True
        return result
    try:
        facts = extract(llm, user_message, assistant_message)  # never inside a transaction
    except LLMUnavailable as error:
        held = "nothing was written" if dry_run else "the turn was kept"
        result.error = f"{error}; {held}, no fact stored"
        result.failed = True
        return result
    result.facts = facts
    kept = filter_facts(facts, config)
    if dry_run or not kept:
        return result
    result.batch_id = _store_facts(brain, kept, result.conversation_id, scope_id, actor)
    return result


def _store_facts(
    brain: BrainStore, kept: list[Fact], conversation_id: str | None, scope_id: str, actor: str
) -> str | None:
    """The kept facts as traces, in one journal batch; its id (None if nothing was written)."""
    from memgui.core.brain import Brain  # at run time: which engine

    if not isinstance(brain, Brain):  # a shared brain: its own adds, grouped in one batch
        with brain.batch(actor, kind="ingest") as grouped:
            for fact in kept:
                fields = fact_fields(fact, conversation_id, scope_id)
                fact.trace_id = brain.add(**fields, actor=actor).id
        return grouped.changes.batch_id or None
    write = brain.write("store facts", kind="ingest", actor=actor)
    with write:
        for fact in kept:
            fields = fact_fields(fact, conversation_id, scope_id)
            fact.trace_id = traces.add(brain, **fields, actor=actor).id
    brain._embed_now([f.trace_id for f in kept if f.trace_id])  # after the commit
    return write.changes.batch_id or None
