"""The `agentos` profile: seed 000's agent memory tools over a memgui brain.

`memory_add`, `memory_update`, `memory_delete`, `memory_merge`, `memory_search` with
AgentOS's inputs and outputs (`traceId`, `{updated}`, `{deleted}`, `survivorId` and
`deletedIds`), `memory_reflect` (a consolidation run, `core/consolidate.py`), and
`rehydrate_memory` when the server is asked for it. An MCP client has no AgentOS execution
context, so `memory_add` files traces under scope id "" (AgentOS's own default without a
user). update, delete and merge read each trace first and write only while it is as read
(compare-and-set on its version): a trace another writer changed in between fails the call
with a conflict, and nothing changes. `memory_reflect` plans and applies every candidate in
one journal batch (actor `consolidation`) that a person can review and revert.
"""

from __future__ import annotations

from typing import Any

from memgui.core import archive
from memgui.core.brain import Brain
from memgui.core.consolidate import ConsolidationOptions, reflect
from memgui.core.errors import InvalidArgument
from memgui.core.model import (
    SCOPES,
    TYPES,
    SearchHit,
    Trace,
    TraceFilter,
    check_choice,
    check_content,
    check_int_range,
)
from memgui.core.search import searching
from memgui.core.storage import store
from memgui.core.tools.params import ID, IDS, INTEGER, NUMBER, STRING, STRINGS, Args, Param
from memgui.core.tools.registry import Profile, Tool, ToolContext, ToolResult, make_profile
from memgui.core.tools.shared import checked_id, forget_live, update_live

SEARCH_LIMIT, MAX_SEARCH_LIMIT = 10, 100
_EVERY_TRACE = TraceFilter()
SEARCH_MODES = ("keyword", "cognitive")


class ToolRefusal(InvalidArgument):
    """AgentOS's own words for a call its tool answers with an error result."""

    def __init__(self, field: str, message: str, value: object = None) -> None:
        super().__init__(field, message, value)
        self.args = (message,)

    def __str__(self) -> str:
        return self.args[0]


def _add(ctx: ToolContext, args: Args) -> ToolResult:
    trace = ctx.brain.add(
        check_content(args["content"]),
        type=check_choice("type", args.get("type", "episodic"), TYPES),
        scope=check_choice("scope", args.get("scope", "user"), SCOPES),
        tags=args.get("tags"),
        actor=ctx.actor,
    )
    return ToolResult({"traceId": trace.id}, created=True, changes=trace.changes)


def _update(ctx: ToolContext, args: Args) -> ToolResult:
    trace_id = checked_id("traceId", args["traceId"])
    patch: dict[str, Any] = {}
    if "content" in args:
        patch["content"] = check_content(args["content"])
    if "tags" in args:
        patch["tags"] = args["tags"]
    if not patch:
        return ToolResult({"updated": False}, found=False)  # AgentOS: nothing to change
    updated = update_live(ctx, trace_id, patch, None, as_read=True)
    done = updated is not None
    return ToolResult(
        {"updated": done}, found=done, changes=updated.changes if updated is not None else None
    )


def _delete(ctx: ToolContext, args: Args) -> ToolResult:
    trace_id = checked_id("traceId", args["traceId"])
    forgotten = forget_live(ctx, trace_id, None, as_read=True)
    done = forgotten is not None
    return ToolResult(
        {"deleted": done}, found=done, changes=forgotten.changes if forgotten is not None else None
    )


def _merge(ctx: ToolContext, args: Args) -> ToolResult:
    brain = ctx.brain
    given = args["traceIds"]
    if len(given) < 2:
        raise ToolRefusal("traceIds", "traceIds must contain at least 2 trace IDs.", given)
    ids = list(dict.fromkeys(checked_id(f"traceIds[{i}]", v) for i, v in enumerate(given)))
    content = args.get("mergedContent")
    if content is not None and (not isinstance(content, str) or not content.strip()):
        content = None  # AgentOS joins the texts when no merged content is given
    if content is not None:
        check_content(content, "mergedContent")
    found = brain.get_many(ids)
    live: list[Trace] = [found[i] for i in ids if i in found and not found[i].deleted]
    if len(live) < 2:
        raise ToolRefusal(
            "traceIds",
            f"Found only {len(live)} active trace(s) for the provided IDs. Need at least 2.",
            given,
        )
    survivor = brain.merge([t.id for t in live], content=content, actor=ctx.actor)
    gone = [t.id for t in live if t.id != survivor.id]
    return ToolResult({"survivorId": survivor.id, "deletedIds": gone}, changes=survivor.changes)


def _search(ctx: ToolContext, args: Args) -> ToolResult:
    limit = check_int_range("limit", args.get("limit", SEARCH_LIMIT), 1, MAX_SEARCH_LIMIT)
    flt = (
        TraceFilter(
            type=check_choice("type", args["type"], TYPES) if "type" in args else None,
            scope=check_choice("scope", args["scope"], SCOPES) if "scope" in args else None,
        )
        if "type" in args or "scope" in args
        else _EVERY_TRACE  # an agent's usual search: no filter made anew
    )
    query = args["query"]
    mode = check_choice("mode", args.get("mode", "keyword"), SEARCH_MODES)
    if "mood" in args and mode != "cognitive":
        raise InvalidArgument("mood", f"is for mode cognitive only (got mode {mode!r})")
    if not query.strip():
        return ToolResult({"results": []})
    # No recall noted: AgentOS's memory_search is a read. Keyword (FTS5) by default; the
    # cognitive mode ranks by AgentOS's composite score and says why, part by part.
    if mode == "keyword" and isinstance(ctx.brain, Brain):
        # The results straight from the rows the ranking read, where it read them (no
        # snapshot or Trace in between): what `_result` makes of the same search's traces.
        rows = searching.keyword_rows(ctx.brain, query, flt, limit, brief=True)
        if rows is not None:
            return ToolResult({"results": [_row_result(row) for row in rows]})
    result = ctx.brain.search(
        query, flt, limit=limit, mode=mode, record_recall=False, mood=args.get("mood")
    )
    return ToolResult({"results": [_scored(hit) for hit in result.hits]})


def _scored(hit: SearchHit) -> dict[str, Any]:
    out = _result(hit.trace)
    if hit.parts is not None:  # AgentOS's names (ScoredMemoryTrace)
        out["retrievalScore"] = hit.score
        out["scoreBreakdown"] = {
            f"{name}Score": hit.parts[name]
            for name in (
                "strength",
                "similarity",
                "recency",
                "emotionalCongruence",
                "graphActivation",
                "importance",
            )
        }
        out["why"] = hit.parts["why"]
    return out


def _result(trace: Trace) -> dict[str, Any]:
    return {
        "id": trace.id,
        "content": trace.content,
        "type": trace.type,
        "scope": trace.scope,
        "strength": trace.stored_strength,
        "tags": list(trace.tags),
    }


def _row_result(row: tuple[Any, ...]) -> dict[str, Any]:
    # `store.BRIEF_COLUMNS` (or all of `store.select_columns`): rowid, id, type, scope, …,
    # content, strength, …, tags.
    return {
        "id": row[1],
        "content": row[5],
        "type": row[2],
        "scope": row[3],
        "strength": store.row_strength(row[6]),
        "tags": store.row_tags(row[10]),
    }


def _reflect(ctx: ToolContext, args: Args) -> ToolResult:
    # `topic` is read and, as in AgentOS, not used (reserved for topic-scoped runs).
    from memgui.core.brain import Brain

    options = ConsolidationOptions(llm=ctx.llm)
    if isinstance(ctx.brain, Brain):
        result = reflect(ctx.brain, options)
    else:  # a shared brain: the same steps and rules
        from memgui.core import shared_consolidate

        result = shared_consolidate.reflect(ctx.brain, options)
    return ToolResult(result.seed_counts(), changes=result.changes)


def _rehydrate(ctx: ToolContext, args: Args) -> ToolResult:
    from memgui.core.brain import Brain

    trace_id = checked_id("traceId", args["traceId"])
    if isinstance(ctx.brain, Brain):
        found = archive.rehydrate(ctx.brain, trace_id)
    else:  # a shared brain: the same read and check on its server
        found = ctx.brain.rehydrate(trace_id)
    return ToolResult(
        {"verbatimContent": found.verbatim_content, "archivedAt": found.archived_at},
        found=found.verbatim_content is not None,
    )


_TRACE_ID = Param("traceId", ID, required=True)
_TYPE = Param("type", STRING, enum=TYPES)
_SCOPE = Param("scope", STRING, enum=SCOPES)

REHYDRATE = Tool(
    "rehydrate_memory",
    "The original text of a memory whose content was shortened (gisted).",
    (_TRACE_ID,),
    _rehydrate,
)


def tools() -> list[Tool]:
    return [
        Tool(
            "memory_add",
            "Store a new memory trace; returns its traceId.",
            (
                Param("content", STRING, required=True),
                _TYPE,
                _SCOPE,
                Param("tags", STRINGS),
            ),
            _add,
            writes=True,
        ),
        Tool(
            "memory_update",
            "Replace the content and/or tags of a trace.",
            (
                _TRACE_ID,
                Param("content", STRING),
                Param("tags", STRINGS),
            ),
            _update,
            writes=True,
        ),
        Tool(
            "memory_delete",
            "Soft-delete a trace by id.",
            (
                _TRACE_ID,
                Param("reason", STRING, "why (not stored)"),
            ),
            _delete,
            writes=True,
        ),
        Tool(
            "memory_merge",
            "Merge 2 or more traces into the most retrieved one.",
            (
                Param("traceIds", IDS, required=True),
                Param(
                    "mergedContent", STRING, "text of the merged trace; default: joined with ' | '"
                ),
            ),
            _merge,
            writes=True,
        ),
        Tool(
            "memory_search",
            "Full-text search (FTS5 syntax, or plain words).",
            (
                Param("query", STRING, required=True),
                _TYPE,
                _SCOPE,
                Param("limit", INTEGER, minimum=1, maximum=MAX_SEARCH_LIMIT, default=SEARCH_LIMIT),
                Param(
                    "mode",
                    STRING,
                    "keyword (FTS5, default) or cognitive (AgentOS's composite score)",
                    enum=SEARCH_MODES,
                ),
                Param("mood", NUMBER, "cognitive: the mood's valence, -1 to 1"),
            ),
            _search,
        ),
        Tool(
            "memory_reflect",
            "Consolidate memory now: prune weak traces, merge duplicates, strengthen co-used "
            "ones, derive insights, compact old episodic ones, re-index (one revertible batch).",
            (Param("topic", STRING, "reserved for topic-scoped consolidation (ignored)"),),
            _reflect,
            writes=True,
        ),
    ]


def profile(rehydrate: bool = False) -> Profile:
    chosen = tools() + ([REHYDRATE] if rehydrate else [])
    return make_profile("agentos", "seed 000's agent memory tools", chosen)
