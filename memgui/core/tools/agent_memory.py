"""The `agent-memory` profile: seed 001's seven tools over a memgui brain.

A memory of agent-memory is a trace whose `category` is its type (DECISION … CONSTRAINT),
filed as `user` scope under its agent-memory scope as scope id ("" = global), with its
`source` in the metadata and agent-memory's half-life as its stability, exactly as the
JSONL import files one; `decay_score` is the trace's current strength. The wire shapes,
defaults, bounds and messages are seed 001's; where memgui differs (string ids, pages of at
most 200 with a cursor, forget moves to the trash) docs/agents.md says so.
"""

from __future__ import annotations

from typing import Any

from memgui.core import decay
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.io.readers.jsonl_checks import CATEGORY_TYPES
from memgui.core.model import (
    CATEGORIES,
    LINK_KINDS,
    MAX_LIMIT,
    MAX_TTL_SECS,
    MIN_TTL_SECS,
    Changes,
    RelatedSummary,
    Trace,
    TraceFilter,
    check_content,
    check_limit,
    check_link_kind,
    check_text,
    check_ttl,
)
from memgui.core.tools.params import BOOLEAN, ID, INTEGER, STRING, STRINGS, Args, Param
from memgui.core.tools.registry import Profile, Tool, ToolContext, ToolResult, make_profile
from memgui.core.tools.shared import (
    auto_embeds,
    checked_id,
    decode_cursor,
    encode_cursor,
    forget_live,
    sent,
    update_live,
)

SEARCH_LIMIT = 50  # seed 001's default for memory_search
PAGE = MAX_LIMIT  # memory_list without a limit: a page of this many, and a cursor
PATCHABLE = ("content", "tags", "scope", "ttl_secs")


class InvalidMemoryType(InvalidArgument):
    """agent-memory's own words for a type outside its six."""

    def __init__(self, value: object) -> None:
        super().__init__("type", f"must be one of {', '.join(CATEGORIES)}", value)
        self.args = (f"invalid memory type '{value}' (expected one of {', '.join(CATEGORIES)})",)

    def __str__(self) -> str:
        return self.args[0]


def memory_type(value: object) -> str:
    if value not in CATEGORIES:
        raise InvalidMemoryType(value)
    return value


# --- wire shapes -----------------------------------------------------------------------------


def memory_view(trace: Trace) -> dict[str, Any]:
    """agent-memory's MemoryView (times in unix seconds), plus memgui's `version`."""
    accessed = trace.last_accessed if trace.last_accessed is not None else trace.created_at
    return {
        "id": trace.id,
        "content": trace.content,
        "type": trace.category,
        "tags": list(trace.tags),
        "scope": trace.scope_id or None,
        "decay_score": round(trace.strength, 6),
        "created_at": trace.created_at // 1000,
        "last_accessed": accessed // 1000,
        "version": trace.version,
    }


def views(
    ctx: ToolContext, traces: list[Trace], related: dict[str, list[RelatedSummary]] | None
) -> list[dict[str, Any]]:
    """Views of `traces`; with `related`, each carries its 1-hop neighbours (`related`)."""
    out = [memory_view(t) for t in traces]
    if related is None:
        return out
    neighbours = ctx.brain.get_many(sorted({r.id for rs in related.values() for r in rs}))
    for view, trace in zip(out, traces, strict=True):
        view["related"] = [
            {
                "id": r.id,
                "kind": r.kind,
                "direction": r.direction,
                "type": neighbours[r.id].category if r.id in neighbours else None,
                "snippet": r.snippet,
                "tags": list(neighbours[r.id].tags) if r.id in neighbours else [],
            }
            for r in related.get(trace.id, [])
        ]
    return out


def _filter(args: Args) -> TraceFilter:
    category = memory_type(args["type"]) if "type" in args else None
    return TraceFilter(category=category, tag=args.get("tag"), scope_id=args.get("scope"))


# --- the seven tools -------------------------------------------------------------------------


def _store(ctx: ToolContext, args: Args) -> ToolResult:
    category = memory_type(args["type"])
    content = check_content(args["content"])
    ttl = args.get("ttl_secs")
    if ttl is not None:
        check_ttl(ttl)
    metadata: dict[str, Any] = {
        "decay": {"stability": round(decay.agent_memory_stability(category))}
    }
    if args.get("source") is not None:
        metadata["source"] = check_text("source", args["source"])
    trace = ctx.brain.add(
        content,
        type=CATEGORY_TYPES[category],
        scope="user",
        scope_id=args.get("scope") or "",
        category=category,
        tags=args.get("tags"),
        ttl_secs=ttl,
        metadata=metadata,
        actor=ctx.actor,
    )
    return ToolResult({"id": trace.id}, text=trace.id, created=True, changes=trace.changes)


def _search(ctx: ToolContext, args: Args) -> ToolResult:
    flt = _filter(args)
    limit = check_limit(args.get("limit", SEARCH_LIMIT))
    expand = args.get("expand_links", False)
    brain = ctx.brain
    result = brain.search(
        args["query"], flt, limit, ctx.search_mode, expand_links=expand, record_recall=False
    )
    traces = [hit.trace for hit in result.hits]
    related = {h.trace.id: list(h.related) for h in result.hits} if expand else None
    # Only the returned results are recalled, after the answer (agent-memory's bump); a
    # shared brain does not note recalls yet.
    note = getattr(brain, "note_recalls", None)
    return ToolResult(
        {"search_mode": result.search_mode, "results": views(ctx, traces, related)},
        after=(lambda: note(traces, flt)) if traces and note is not None else None,
    )


def _list(ctx: ToolContext, args: Args) -> ToolResult:
    flt = _filter(args)
    expand = args.get("expand_links", False)
    if "limit" in args:
        check_limit(args["limit"])
    elif expand:
        raise InvalidArgument(
            "limit", f"is required when expand_links is true; pass a limit between 1 and {PAGE}"
        )
    page = args.get("limit", PAGE)
    after = decode_cursor(args["cursor"]) if "cursor" in args else None
    brain = ctx.brain
    traces = brain.list_traces(flt, limit=page, after=after)
    more = False
    if len(traces) == page:
        last = traces[-1]
        more = bool(brain.list_traces(flt, limit=1, after=(last.created_at, last.id)))
    related = {t.id: brain.related(t.id) for t in traces} if expand else None
    return ToolResult(
        views(ctx, traces, related), next_cursor=encode_cursor(traces[-1]) if more else None
    )


def _update(ctx: ToolContext, args: Args) -> ToolResult:
    trace_id = checked_id("id", args["id"])
    if not any(name in args for name in PATCHABLE):
        raise InvalidArgument(
            "patch", f"must set at least one of {', '.join(PATCHABLE)} besides id (got none)"
        )
    patch: dict[str, Any] = {}
    if "content" in args:
        if args["content"] is None:
            raise InvalidArgument("content", "must not be null or empty (got null)")
        patch["content"] = check_content(args["content"])
    if "tags" in args:
        patch["tags"] = args["tags"] or []
    if "scope" in args:
        patch["scope_id"] = args["scope"] or ""
    if "ttl_secs" in args:
        patch["ttl_secs"] = None if args["ttl_secs"] is None else check_ttl(args["ttl_secs"])
    brain = ctx.brain
    updated = update_live(ctx, trace_id, patch, args.get("expect_version"))
    if updated is None:
        return ToolResult({"id": args["id"], "updated": False, "reason": "not_found"}, found=False)
    if "content" in patch and auto_embeds(brain):
        updated = brain.get(trace_id)  # embedded after the write, when Ollama answered
    view = dict(memory_view(updated), embedding_status=updated.embedding_status)
    return ToolResult(view, changes=updated.changes)


def _link_ids(args: Args) -> tuple[str, str, str]:
    kind = check_link_kind(args["kind"])
    from_id, to_id = checked_id("from_id", args["from_id"]), checked_id("to_id", args["to_id"])
    if from_id == to_id:
        raise InvalidArgument(
            "from_id", f"and to_id must differ (got {sent(args['from_id'])})", args["from_id"]
        )
    return from_id, to_id, kind


def _missing(ctx: ToolContext, args: Args, from_id: str, to_id: str) -> object | None:
    """The id (as sent) of an endpoint that is no live trace, or None."""
    found = ctx.brain.get_many([from_id, to_id])
    for trace_id, given in ((from_id, args["from_id"]), (to_id, args["to_id"])):
        if trace_id not in found or found[trace_id].deleted:
            return given
    return None


def _link(ctx: ToolContext, args: Args) -> ToolResult:
    from_id, to_id, kind = _link_ids(args)
    echo = {"from_id": args["from_id"], "to_id": args["to_id"], "kind": kind}
    missing = _missing(ctx, args, from_id, to_id)
    changes = None
    if missing is None:
        try:
            changes = ctx.brain.link(from_id, to_id, kind, actor=ctx.actor)
        except NotFound as gone:  # purged since the read
            missing = args["from_id"] if gone.missing_id == from_id else args["to_id"]
    if missing is not None:
        return ToolResult(
            dict(echo, linked=False, reason="not_found", missing_id=missing), found=False
        )
    return ToolResult(dict(echo, linked=True), changes=changes)  # linked either way


def _unlink(ctx: ToolContext, args: Args) -> ToolResult:
    from_id, to_id, kind = _link_ids(args)
    echo = {"from_id": args["from_id"], "to_id": args["to_id"], "kind": kind}
    missing = _missing(ctx, args, from_id, to_id)
    removed: Changes | None = None
    if missing is None:
        try:
            removed = ctx.brain.unlink(from_id, to_id, kind, actor=ctx.actor)
        except NotFound:
            removed = None
    if not removed:  # no such link (its changes are empty), or no such trace
        body = dict(echo, unlinked=False, reason="not_found")
        if missing is not None:
            body["missing_id"] = missing
        return ToolResult(body, found=False)
    return ToolResult(dict(echo, unlinked=True), changes=removed)


def _forget(ctx: ToolContext, args: Args) -> ToolResult:
    trace_id = checked_id("id", args["id"])
    forgotten = forget_live(ctx, trace_id, args.get("expect_version"))
    if forgotten is None:
        return ToolResult({"id": args["id"], "deleted": False, "reason": "not_found"}, found=False)
    return ToolResult({"id": args["id"], "deleted": True}, changes=forgotten.changes)


# --- parameters ------------------------------------------------------------------------------

_TYPE = Param("type", STRING, "DECISION, PATTERN, ERROR, TODO, ARCHITECTURE or CONSTRAINT",
              required=True, enum=CATEGORIES)  # fmt: skip
_TYPE_FILTER = Param("type", STRING, "only this type", enum=CATEGORIES)
_TAG = Param("tag", STRING, "only memories with this exact tag (case-sensitive)")
_SCOPE_FILTER = Param("scope", STRING, "only this scope")
_EXPAND = Param("expand_links", BOOLEAN, "attach up to 10 linked memories", default=False)
_TTL = ("ttl_secs", INTEGER, f"expire after this many seconds ({MIN_TTL_SECS}-{MAX_TTL_SECS})")
_KIND = Param("kind", STRING, required=True, enum=LINK_KINDS)
_FROM = Param("from_id", ID, required=True)
_TO = Param("to_id", ID, required=True)
_EXPECT = Param("expect_version", INTEGER, "write only if the memory is still at this version")


def _limit(default: int | None, text: str) -> Param:
    return Param("limit", INTEGER, text, minimum=1, maximum=MAX_LIMIT, default=default)


TOOLS = [
    Tool(
        "memory_store",
        "Store a typed memory; returns its id.",
        (
            Param("content", STRING, required=True),
            _TYPE,
            Param("tags", STRINGS),
            Param("source", STRING, "provenance"),
            Param("scope", STRING, "a project or other scope; omitted = global"),
            Param(*_TTL),
        ),
        _store,
        writes=True,
    ),
    Tool(
        "memory_search",
        "Search memories by keyword and meaning (FTS5 syntax or plain "
        "words); returns {search_mode, results}.",
        (
            Param("query", STRING, required=True),
            _TYPE_FILTER,
            _TAG,
            _SCOPE_FILTER,
            _limit(SEARCH_LIMIT, "1-200"),
            _EXPAND,
        ),
        _search,
    ),
    Tool(
        "memory_list",
        "List memories newest first, at most 200 a page.",
        (
            _TYPE_FILTER,
            _TAG,
            _SCOPE_FILTER,
            _limit(None, "1-200; required with expand_links; omitted = pages of 200"),
            _EXPAND,
            Param("cursor", STRING, "next_cursor of the previous page"),
        ),
        _list,
    ),
    Tool(
        "memory_update",
        "Patch a memory by id (merge-patch: null clears tags, scope, ttl_secs).",
        (
            Param("id", ID, required=True),
            Param("content", STRING, nullable=True),
            Param("tags", STRINGS, nullable=True),
            Param("scope", STRING, nullable=True),
            Param(*_TTL, nullable=True),
            _EXPECT,
        ),
        _update,
        writes=True,
    ),
    Tool(
        "memory_link",
        "Link two memories with a typed relation (idempotent).",
        (_FROM, _TO, _KIND),
        _link,
        writes=True,
    ),
    Tool(
        "memory_unlink",
        "Remove a relation between two memories.",
        (_FROM, _TO, _KIND),
        _unlink,
        writes=True,
    ),
    Tool(
        "memory_forget",
        "Forget a memory by id; its relations go with it.",
        (Param("id", ID, required=True), _EXPECT),
        _forget,
        writes=True,
    ),
]


def profile() -> Profile:
    return make_profile("agent-memory", "seed 001's seven memory tools", TOOLS)
