"""Subcommands of `memgui` about search by meaning: `embed` and `similar`."""

from __future__ import annotations

import argparse
import sys

from memgui.cli.registry import CommandContext, command, identifier
from memgui.core.errors import InvalidArgument
from memgui.core.progress import Progress, run_to_end
from memgui.core.search import hybrid, vectors


def _configure_embed(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--rebuild",
        action="store_true",
        help="drop every vector and the pinned model, then embed everything with --model",
    )
    what.add_argument(
        "--reindex", action="store_true", help="rebuild the vector index from the stored vectors"
    )
    what.add_argument(
        "--status", action="store_true", help="say whether Ollama answers and what is pending"
    )
    parser.add_argument("--model", metavar="M", help="the embedding model (with --rebuild)")


def _progress_to_stderr(event: Progress) -> None:
    if event.message and sys.stderr.isatty():
        print(f"\r{event.message}", end="", file=sys.stderr, flush=True)


@command(
    "embed",
    "embed pending traces (or --rebuild, --reindex, --status)",
    configure=_configure_embed,
    on_shared_brains=True,
)
def run_embed(ctx: CommandContext, args: argparse.Namespace) -> None:
    """Embed the traces still waiting for a vector, in batches of 128, through Ollama."""
    if args.rebuild and not args.model:
        raise InvalidArgument(
            "model", "must name the model every trace is embedded with again (got none)"
        )
    if args.model and not (args.rebuild or args.status):
        raise InvalidArgument(
            "model",
            f"is only for --rebuild or --status (got {args.model!r}); "
            "`--embed-model` names the model for everything else",
            args.model,
        )
    if ctx.brain_address is not None:
        _embed_shared(ctx, args)
        return
    brain = ctx.brain
    if args.status:
        embedder = ctx.embedder(args.model)
        doc = {"ollama": embedder.status(), "url": embedder.url, **brain.embedding_info()}
        ctx.emit(doc, [f"{k}: {v}" for k, v in doc.items()])
        return
    if args.reindex:
        with brain.write("reindex", kind="embed"):
            run_to_end(vectors.reindex(brain.db.conn, brain.brain_id), _progress_to_stderr)
        ctx.emit({"reindexed": True, **brain.embedding_info()}, "vector index rebuilt")
        return
    if args.rebuild:
        embedder = ctx.embedder(args.model)
        job = hybrid.rebuild(
            brain.db.conn,
            brain.brain_id,
            embedder,
            transaction=lambda: brain.write("embed", kind="embed"),
        )
    else:
        from memgui.core.search.semantic import SemanticSearch  # the rest of search: here only

        job = SemanticSearch(ctx.embedder()).backfill(brain)
    report = run_to_end(job, _progress_to_stderr)
    doc = {"embedded": report.embedded, "stale": report.stale, "pending": report.remaining}
    ctx.emit(doc, f"embedded {report.embedded}; {report.remaining} still pending")


def _embed_shared(ctx: CommandContext, args: argparse.Namespace) -> None:
    """`embed` and its options on a shared brain (`core/shared_brain_meaning.py`)."""
    from memgui.core.shared_brain import SharedBrain

    store = ctx.store
    assert isinstance(store, SharedBrain)
    if args.status:
        embedder = ctx.embedder(args.model)
        doc = {"ollama": embedder.status(), "url": embedder.url, **store.embedding_info()}
        ctx.emit(doc, [f"{k}: {v}" for k, v in doc.items()])
        return
    if args.reindex:
        indexed = run_to_end(store.reindex_vectors(), _progress_to_stderr)
        doc = {"reindexed": True, "indexed": indexed, **store.embedding_info()}
        ctx.emit(doc, "vector index rebuilt")
        return
    if args.rebuild:
        job = store.rebuild_vectors(ctx.embedder(args.model))
    else:
        job = store.backfill()
    report = run_to_end(job, _progress_to_stderr)
    doc = {"embedded": report.embedded, "stale": report.stale, "pending": report.remaining}
    ctx.emit(doc, f"embedded {report.embedded}; {report.remaining} still pending")


def _configure_similar(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=identifier("id"), help="a trace id")
    parser.add_argument("--limit", type=int, default=10, metavar="N", help="1-200 (default 10)")


@command(
    "similar",
    "memories nearest in meaning to a trace",
    configure=_configure_similar,
    on_shared_brains=True,
)
def run_similar(ctx: CommandContext, args: argparse.Namespace) -> None:
    found = ctx.store.similar(args.id, args.limit)
    results = [dict(t.to_json(), score=round(score, 6)) for t, score in found]
    ctx.emit(
        {"results": results},
        [f"{t.id}  {score:.3f}  {t.content.splitlines()[0][:80]}" for t, score in found]
        or ["no similar memories (the trace has no vector yet?)"],
    )
