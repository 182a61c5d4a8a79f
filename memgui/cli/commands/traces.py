"""Trace subcommands of `memgui`: add, get, list, search, update, forget, restore, purge, merge.

Values pass through to the core unchecked: the core validates every field and its message
(field, bound, value) is the one the person sees, the same as in the app and the servers.
"""

from __future__ import annotations

import argparse
from typing import Any

from memgui.cli.format import results_lines, trace_details, trace_line
from memgui.cli.registry import CommandContext, add_filter_options, command, identifier
from memgui.core.errors import InvalidArgument
from memgui.core.model import RelatedSummary, Trace, TraceFilter

MAX_RELATED = 10  # each result carries at most this many linked summaries


def _configure_add(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("content", help="the memory's text")
    parser.add_argument("--type", help="episodic (default), semantic, procedural, ...")
    parser.add_argument("--scope", help="user (default), thread, persona or organization")
    parser.add_argument("--scope-id", metavar="ID", help="the scope's id (e.g. a user id)")
    parser.add_argument("--category", help="DECISION, PATTERN, ERROR, TODO, ...")
    parser.add_argument(
        "--tag", dest="tags", action="append", metavar="TAG", help="a tag; repeat for several"
    )
    parser.add_argument(
        "--ttl-secs", type=int, metavar="N", help="expire after N seconds (1-3155760000)"
    )


@command("add", "add a trace", configure=_configure_add, on_shared_brains=True)
def run_add(ctx: CommandContext, args: argparse.Namespace) -> None:
    """Add a trace and print it. Options left out take the core's defaults."""
    given = {
        "type": args.type,
        "scope": args.scope,
        "scope_id": args.scope_id,
        "category": args.category,
        "tags": args.tags,
        "ttl_secs": args.ttl_secs,
    }
    trace = ctx.store.add(args.content, **{k: v for k, v in given.items() if v is not None})
    ctx.emit(trace, f"added {trace.id} (version {trace.version})")


def _configure_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=identifier("id"), help="a trace id (mt_...)")


@command("get", "show one trace", configure=_configure_id, on_shared_brains=True)
def run_get(ctx: CommandContext, args: argparse.Namespace) -> None:
    trace = ctx.store.get(args.id)
    ctx.emit(trace, trace_details(trace))


def _filter(args: argparse.Namespace) -> TraceFilter:
    return TraceFilter(
        type=args.type,
        scope=args.scope,
        scope_id=args.scope_id,
        category=args.category,
        tag=args.tag,
        deleted=args.deleted,
        include_deleted=args.include_deleted,
    )


def _with_related(
    traces: list[Trace], related: dict[str, list[RelatedSummary]]
) -> list[dict[str, Any]]:
    results = []
    for trace in traces:
        doc = trace.to_json()
        if trace.id in related:
            doc["related"] = [r.to_json() for r in related[trace.id]]
        results.append(doc)
    return results


def _configure_list(parser: argparse.ArgumentParser) -> None:
    add_filter_options(parser, default_limit=50)
    parser.add_argument(
        "--offset", type=int, default=0, metavar="N", help="skip the first N traces"
    )


@command("list", "list traces, newest first", configure=_configure_list, on_shared_brains=True)
def run_list(ctx: CommandContext, args: argparse.Namespace) -> None:
    if args.offset < 0:
        raise InvalidArgument("offset", f"must be 0 or more (got {args.offset})", args.offset)
    traces = ctx.store.list_traces(
        _filter(args), limit=args.limit, offset=args.offset, order="created_at", descending=True
    )
    related: dict[str, list[RelatedSummary]] = {}
    if args.expand_links:
        related = {t.id: ctx.store.related(t.id, limit=MAX_RELATED) for t in traces}
    ctx.emit({"results": _with_related(traces, related)}, results_lines(traces, related))


def _configure_search(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help='words, or FTS5 syntax ("phrase", AND/OR/NOT, prefix*)')
    add_filter_options(parser, default_limit=20)
    parser.add_argument(
        "--mode",
        choices=("auto", "keyword", "semantic", "hybrid", "cognitive"),
        default="auto",
        help="auto (default): by words and meaning once the brain has vectors, else by words;"
        " cognitive: AgentOS's composite score",
    )
    parser.add_argument(
        "--mood",
        type=float,
        metavar="V",
        help="with --mode cognitive: the mood's valence, -1 to 1 (mood-congruent recall)",
    )


@command(
    "search",
    "search traces by keyword (and meaning, when embeddings exist)",
    configure=_configure_search,
    on_shared_brains=True,
)
def run_search(ctx: CommandContext, args: argparse.Namespace) -> None:
    result = ctx.store.search(
        args.query,
        _filter(args),
        limit=args.limit,
        mode=args.mode,
        expand_links=args.expand_links,
        mood=args.mood,
    )
    traces = [hit.trace for hit in result.hits]
    related = {h.trace.id: list(h.related) for h in result.hits} if args.expand_links else {}
    results = _with_related(traces, related)
    for doc, hit in zip(results, result.hits, strict=True):
        doc["score"] = round(hit.score, 6)
        if hit.parts is not None:  # the cognitive mode: the score's parts and why
            doc["parts"] = {
                k: round(v, 6) if isinstance(v, float) else v
                for k, v in hit.parts.items()
                if k != "why"
            }
            doc["why"] = hit.parts["why"]
    if result.search_mode == "cognitive":
        lines = []
        for hit in result.hits:
            why = (hit.parts or {}).get("why", "")
            lines += results_lines([hit.trace], related) + [f"    why: {why}"]
        lines = lines or ["no traces found"]
    else:
        lines = results_lines(traces, related)
    lines.append(f"({len(traces)} found, {result.search_mode})")
    ctx.emit({"results": results, "search_mode": result.search_mode}, lines)


def _configure_update(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=identifier("id"), help="a trace id (mt_...)")
    parser.add_argument("--content", help="new text")
    parser.add_argument("--type", help="episodic, semantic, procedural, ...")
    tags = parser.add_mutually_exclusive_group()
    tags.add_argument(
        "--tag",
        dest="tags",
        action="append",
        metavar="TAG",
        help="replace the tags; repeat for several",
    )
    tags.add_argument("--clear-tags", action="store_true", help="remove every tag")
    parser.add_argument("--scope", help="thread, user, persona or organization")
    parser.add_argument("--scope-id", metavar="ID", help="the scope's id (e.g. a user id)")
    category = parser.add_mutually_exclusive_group()
    category.add_argument("--category", help="DECISION, PATTERN, ERROR, TODO, ...")
    category.add_argument("--no-category", action="store_true", help="clear the category")
    ttl = parser.add_mutually_exclusive_group()
    ttl.add_argument(
        "--ttl-secs", type=int, metavar="N", help="expire N seconds from now (1-3155760000)"
    )
    ttl.add_argument("--no-ttl", action="store_true", help="never expire")
    parser.add_argument(
        "--expect-version",
        type=int,
        metavar="V",
        help="fail with a conflict unless the trace is at V",
    )


def update_patch(args: argparse.Namespace) -> dict[str, Any]:
    """The merge-patch the options describe: only given fields, None clears."""
    patch: dict[str, Any] = {}
    if args.content is not None:
        patch["content"] = args.content
    if args.type is not None:
        patch["type"] = args.type
    if args.tags is not None:
        patch["tags"] = args.tags
    elif args.clear_tags:
        patch["tags"] = None
    if args.scope is not None:
        patch["scope"] = args.scope
    if args.scope_id is not None:
        patch["scope_id"] = args.scope_id
    if args.category is not None:
        patch["category"] = args.category
    elif args.no_category:
        patch["category"] = None
    if args.ttl_secs is not None:
        patch["ttl_secs"] = args.ttl_secs
    elif args.no_ttl:
        patch["ttl_secs"] = None
    return patch


@command(
    "update",
    "change a trace (only the given fields)",
    configure=_configure_update,
    on_shared_brains=True,
)
def run_update(ctx: CommandContext, args: argparse.Namespace) -> None:
    patch = update_patch(args)
    if not patch:
        raise InvalidArgument(
            "patch",
            "must change at least one field: --content, --type, --tag, --clear-tags, --scope, "
            "--scope-id, --category, --no-category, --ttl-secs or --no-ttl (got none)",
        )
    trace = ctx.store.update(args.id, patch, expect_version=args.expect_version)
    ctx.emit(trace, f"updated {trace.id} (version {trace.version})")


def _emit_state_change(ctx: CommandContext, trace_id: str, verb: str, result: Trace) -> None:
    ctx.emit(result, f"{verb} {trace_id} (version {result.version})")


@command(
    "forget",
    "forget a trace (soft delete; restore brings it back)",
    configure=_configure_id,
    on_shared_brains=True,
)
def run_forget(ctx: CommandContext, args: argparse.Namespace) -> None:
    _emit_state_change(ctx, args.id, "forgot", ctx.store.forget(args.id))


@command("restore", "restore a forgotten trace", configure=_configure_id, on_shared_brains=True)
def run_restore(ctx: CommandContext, args: argparse.Namespace) -> None:
    _emit_state_change(ctx, args.id, "restored", ctx.store.restore(args.id))


@command(
    "purge", "delete a trace and its links for good", configure=_configure_id, on_shared_brains=True
)
def run_purge(ctx: CommandContext, args: argparse.Namespace) -> None:
    ctx.store.purge(args.id)  # the trace is gone: only its id is left to print
    ctx.emit({"id": args.id, "op": "purged"}, f"purged {args.id}")


def _configure_merge(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ids", nargs="+", metavar="ID", type=identifier("ids"), help="two or more live trace ids"
    )
    parser.add_argument("--content", help="the merged text (default: contents joined by ' | ')")


@command(
    "merge",
    "merge traces into the most retrieved one",
    configure=_configure_merge,
    on_shared_brains=True,
)
def run_merge(ctx: CommandContext, args: argparse.Namespace) -> None:
    survivor = ctx.store.merge(args.ids, content=args.content)
    ctx.emit(
        survivor, [f"merged into {survivor.id} (version {survivor.version})", trace_line(survivor)]
    )
