"""Subcommands of `memgui` about links, the graph, the journal, scopes and the brain itself."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memgui.cli.format import journal_lines, mapping_lines, neighbour_lines
from memgui.cli.registry import CommandContext, command, identifier, jsonable
from memgui.core.errors import InvalidArgument
from memgui.core.model import MAX_NEIGHBOURS, NEIGHBOURS_CAP


def _configure_link(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("from_id", metavar="FROM", type=identifier("from_id"), help="a trace id")
    parser.add_argument("to_id", metavar="TO", type=identifier("to_id"), help="another trace id")
    parser.add_argument("kind", metavar="KIND", help="relates_to, supersedes or caused_by")


def _link_doc(args: argparse.Namespace) -> dict[str, Any]:
    return {"from": args.from_id, "to": args.to_id, "kind": args.kind}


@command("link", "link two traces (idempotent)", configure=_configure_link, on_shared_brains=True)
def run_link(ctx: CommandContext, args: argparse.Namespace) -> None:
    ctx.store.link(args.from_id, args.to_id, args.kind)  # linked either way: idempotent
    ctx.emit(dict(_link_doc(args), linked=True), f"linked {args.from_id} {args.kind} {args.to_id}")


@command(
    "unlink", "remove a link between two traces", configure=_configure_link, on_shared_brains=True
)
def run_unlink(ctx: CommandContext, args: argparse.Namespace) -> None:
    """Remove a link; a link that does not exist (in that direction) is reported, not an error."""
    edge = f"{args.from_id} {args.kind} {args.to_id}"
    if ctx.store.unlink(args.from_id, args.to_id, args.kind):  # what changed: the link, if any
        ctx.emit(dict(_link_doc(args), unlinked=True), f"unlinked {edge}")
    else:
        # As agent-memory's memory_unlink: a normal result, so a retried unlink is safe.
        doc = dict(_link_doc(args), unlinked=False, reason="not_found")
        ctx.emit(doc, f"not unlinked: no link {edge} (nothing changed)")


def _configure_neighbours(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "id",
        type=identifier("id", "trace or node id"),
        help="a trace id or a knowledge-graph node id",
    )
    parser.add_argument(
        "--depth", type=int, default=1, metavar="N", help="hops to follow, 1-3 (default 1)"
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=MAX_NEIGHBOURS,
        metavar="N",
        help=f"nearest neighbours to print, 1-{NEIGHBOURS_CAP:,} (default {MAX_NEIGHBOURS})",
    )


@command(
    "neighbours",
    "knowledge-graph neighbours of a trace or node",
    configure=_configure_neighbours,
    on_shared_brains=True,
)
def run_neighbours(ctx: CommandContext, args: argparse.Namespace) -> None:
    neighbours, truncated = ctx.store.neighbours_and_more(args.id, args.depth, args.limit)
    lines = neighbour_lines(neighbours)
    if truncated:
        lines.append(f"(the {args.limit} nearest are shown; there are more: --limit N)")
    ctx.emit(
        {"id": args.id, "neighbours": [n.to_json() for n in neighbours], "truncated": truncated},
        lines,
    )


def _configure_history(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=identifier("id"), help="a trace id")


@command(
    "history",
    "the journal of one trace, oldest first",
    configure=_configure_history,
    on_shared_brains=True,
)
def run_history(ctx: CommandContext, args: argparse.Namespace) -> None:
    entries = ctx.store.history(args.id)
    ctx.emit(
        {"trace_id": args.id, "entries": [e.to_json() for e in entries]}, journal_lines(entries)
    )


def _configure_revert(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "batch",
        metavar="BATCH",
        type=identifier("batch", "journal batch id"),
        help="a journal batch id (see `history`)",
    )


@command(
    "revert",
    "undo one journal batch (the revert can itself be reverted)",
    configure=_configure_revert,
    on_shared_brains=True,
)
def run_revert(ctx: CommandContext, args: argparse.Namespace) -> None:
    changes = ctx.store.revert(args.batch)
    text = f"reverted batch {args.batch}: {len(changes.traces)} trace(s) changed"
    ctx.emit(changes.to_json(), text + (f" (batch {changes.batch_id})" if changes else ""))


@command("sweep", "remove traces whose TTL has passed, with their links", on_shared_brains=True)
def run_sweep(ctx: CommandContext, args: argparse.Namespace) -> None:
    report = jsonable(ctx.store.sweep())
    ctx.emit(report, mapping_lines(report) if isinstance(report, dict) else str(report))


@command("info", "brain ids, schema version and trace counts", on_shared_brains=True)
def run_info(ctx: CommandContext, args: argparse.Namespace) -> None:
    info = dict(ctx.store.info())
    info.setdefault("path", str(ctx.brain_path))
    shown = {k: v for k, v in info.items() if v is not None and k != "read_only"}
    ctx.emit(info, mapping_lines(shown))


def _configure_scope_delete(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scope", metavar="SCOPE", help="thread, user, persona or organization")
    parser.add_argument("scope_id", metavar="SCOPE_ID", help="the scope's id (never empty)")
    parser.add_argument("--user", help="only the traces that name this user")


@command(
    "scope-delete",
    "delete every trace of one scope for good",
    configure=_configure_scope_delete,
    on_shared_brains=True,
)
def run_scope_delete(ctx: CommandContext, args: argparse.Namespace) -> None:
    deleted = ctx.store.delete_scope(args.scope, args.scope_id, user_id=args.user)
    doc = {"scope": args.scope, "scope_id": args.scope_id, "user": args.user}
    doc["deleted"] = deleted.count
    ctx.emit(doc, f"deleted {deleted.count} trace(s) of {args.scope}:{args.scope_id}")


def _configure_scope_refile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scope", metavar="SCOPE", help="thread, user, persona or organization")
    parser.add_argument("from_id", metavar="FROM_ID", help="the scope id the traces have")
    parser.add_argument("to_id", metavar="TO_ID", help="the scope id they move to")


@command(
    "scope-refile",
    "move a scope's traces to another scope id",
    configure=_configure_scope_refile,
    on_shared_brains=True,
)
def run_scope_refile(ctx: CommandContext, args: argparse.Namespace) -> None:
    refiled = ctx.store.refile_scope(args.scope, args.from_id, args.to_id)
    doc = {"scope": args.scope, "from": args.from_id, "to": args.to_id, "refiled": refiled.count}
    text = f"re-filed {refiled.count} trace(s) from {args.scope}:{args.from_id} to {args.to_id}"
    if args.from_id == args.to_id:
        text += " (the same scope id: nothing changed)"
    ctx.emit(doc, text)


def _configure_sample_brain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="the new file to write it to")


@command(
    "sample-brain",
    "write the sample brain (a small team's memories, links and graph) to a new file",
    configure=_configure_sample_brain,
)
def run_sample_brain(ctx: CommandContext, args: argparse.Namespace) -> None:
    from memgui.core.sample_brain import SAMPLE_BRAIN_ID, build

    path = Path(args.path).expanduser()
    if path.exists() or path.is_symlink():
        raise InvalidArgument(
            "path",
            f"exists; the sample brain is only written to a new file (got '{path}')",
            str(path),
        )
    if not path.parent.is_dir():
        raise InvalidArgument("path", f"is in a folder that does not exist (got '{path}')", path)
    build(path)
    doc = {"sample_brain": str(path), "brain_id": SAMPLE_BRAIN_ID}
    ctx.emit(doc, f"wrote the sample brain to {path} (brain id {SAMPLE_BRAIN_ID})")
