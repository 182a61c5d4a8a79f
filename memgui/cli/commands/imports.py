"""`memgui import PATH`: plan an import, show it, and (unless --dry-run) commit it.

Exit codes: 0 done (refused records are reported, not failures), 1 some records could not be
read (`error`), 2 the source cannot be read at all or an option is invalid (the message names
the source), as for every `memgui` command.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memgui.cli.format import snippet
from memgui.cli.registry import ACTOR, CommandContext, command
from memgui.core.errors import MemguiError
from memgui.core.io import IMPORT_FORMATS, VERDICTS, Verdict
from memgui.core.progress import run_to_end
from memgui.core.storage import leftovers

if TYPE_CHECKING:  # the engine is imported when a command runs: ~0.2 s other commands skip
    from memgui.core.brain import Brain
    from memgui.core.io import ImportPlan, ImportResult

EXIT_ERRORS, EXIT_UNREADABLE = 1, 2


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a file or folder to import")
    parser.add_argument(
        "--format",
        default="auto",
        choices=("auto", *IMPORT_FORMATS),
        help="default: from the source",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show the plan (one line per record not new)"
    )
    parser.add_argument(
        "--all-branches", action="store_true", help="ChatGPT: every edit and regeneration"
    )
    parser.add_argument(
        "--no-dedup", action="store_true", help="import records the brain already holds"
    )
    parser.add_argument("--scope", help="file every trace under this scope")
    parser.add_argument("--scope-id", metavar="ID", help="file every trace under this scope id")
    parser.add_argument(
        "--from-brain-id", metavar="ID", help="the brain to read from a source holding several"
    )
    parser.add_argument(
        "--extract-facts",
        action="store_true",
        help="ChatGPT: also import the facts an Ollama chat model draws from each new chat",
    )
    parser.add_argument(
        "--ingest-config",
        metavar="PATH",
        help="with --extract-facts: an agent.config.json (storage.autoIngest, personality)",
    )
    parser.add_argument(
        "--chat-model",
        metavar="M",
        help="with --extract-facts: the chat model ($MEMGUI_CHAT_MODEL, else llama3.2)",
    )


def plan_document(the_plan: ImportPlan) -> dict[str, Any]:
    counts = the_plan.counts
    records = [
        {
            "source": r.source,
            "verdict": r.verdict,
            "reason": r.reason,
            "trace_id": the_plan.trace_id(i) if r.kind == "trace" else r.existing_id,
        }
        for i, r in enumerate(the_plan.records)
    ]
    return {
        "plan": {v: counts[v] for v in (*VERDICTS, "skipped")},
        "format": the_plan.format,
        "records": records,
        "not_read": [{"source": r.source, "reason": r.reason} for r in the_plan.not_read],
    }


def _plan_lines(the_plan: ImportPlan, every: bool) -> list[str]:
    counts = the_plan.counts
    summary = ", ".join(
        f"{counts[v]} {v}" for v in (*VERDICTS, "skipped") if counts[v] or v in VERDICTS
    )
    lines = [f"plan ({the_plan.format}): {summary}"]
    for i, record in enumerate(the_plan.records):
        if record.verdict == Verdict.NEW or (
            not every and record.verdict not in ("refused", "error")
        ):
            continue
        target = the_plan.trace_id(i) if record.kind == "trace" else record.existing_id
        arrow = f" -> {target}" if target and record.verdict in ("duplicate", "update") else ""
        lines.append(f"{record.verdict:<9} {record.source}{arrow}  {snippet(record.reason, 100)}")
    if the_plan.not_read:
        lines.append(f"not read: {len(the_plan.not_read)} (images, other files, embeds)")
        lines += [
            f"          {r.source}: {r.reason}"
            for r in the_plan.not_read
            if r.reason.startswith("facts not extracted")
        ]
    return lines


def _result_line(result: ImportResult) -> str:
    batch = f" (batch {result.batch_id})" if result.batch_id else ""
    return (
        f"imported {result.imported}, skipped {result.skipped} ({result.updated} updated), "
        f"refused {result.refused}, errors {len(result.errors)}{batch}"
    )


@command(
    "import",
    "import memories from a file or folder (plan, then commit)",
    configure=_configure,
    on_shared_brains=True,
)
def run_import(ctx: CommandContext, args: argparse.Namespace) -> int:
    """Plan the import of PATH against the brain; without --dry-run, commit it in one batch.

    Formats: sqlite json jsonl markdown obsidian chatgpt csv gsd (default: detected).
    """
    from memgui.core.io import ImportOptions, commit, plan

    options = ImportOptions(
        format=args.format,
        dedup=not args.no_dedup,
        all_branches=args.all_branches,
        scope=args.scope,
        scope_id=args.scope_id,
        brain_id=args.from_brain_id,
    )
    if args.extract_facts:
        from memgui.core.ingest_config import load_agent_config
        from memgui.core.llm import OllamaChat

        options.extract_facts = True
        options.facts_config = load_agent_config(args.ingest_config)
        options.facts_llm = OllamaChat(ctx.ollama_url, args.chat_model)
    elif args.ingest_config or args.chat_model:
        from memgui.core.errors import InvalidArgument

        raise InvalidArgument(
            "extract_facts", "is needed for --ingest-config and --chat-model (got neither)"
        )
    if ctx.brain_address is not None:
        return _import_shared(ctx, args, options)
    from memgui.core.io.writing.new_brain import remove_killed_builds

    # What an import into this path, or a plan, killed before it ended left behind.
    remove_killed_builds(ctx.brain_path)
    _remove_killed_plans()
    new_brain = not os.path.lexists(ctx.brain_path)
    if not new_brain:
        the_plan = run_to_end(plan(ctx.brain, args.path, options=options))
    else:
        # No brain yet: plan against an empty one, and make the real one only to write.
        with planning_brain(ctx.brain_id or ctx.brain_path.stem) as empty:
            the_plan = run_to_end(plan(empty, args.path, options=options))
    unreadable = the_plan.unreadable
    if unreadable is not None:
        raise SourceUnreadable(f"cannot read {args.path}: {unreadable}")
    document = plan_document(the_plan)
    lines = _plan_lines(the_plan, every=args.dry_run)
    result: ImportResult | None = None
    if not args.dry_run:
        if not new_brain:
            result = run_to_end(commit(ctx.brain, the_plan))
        elif _writes_something(the_plan):
            result = _commit_into_new_brain(ctx, the_plan)
        else:
            result = _nothing_written(the_plan)
        document = plan_document(the_plan)  # commit may have refused an edited record
        document["result"] = result.to_json()
        lines = _plan_lines(the_plan, every=False) + [_result_line(result)]
    ctx.emit(document, lines)
    has_errors = the_plan.counts["error"] > 0 if result is None else bool(result.errors)
    return EXIT_ERRORS if has_errors else 0


def _import_shared(ctx: CommandContext, args: argparse.Namespace, options: Any) -> int:
    """The import into a shared brain: planned against a staged file of it, committed
    there and written on the server in one transaction (`core/shared_import.py`)."""
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.shared_import import SharedImport

    shared = ctx.store
    assert isinstance(shared, SharedBrain)
    with SharedImport(shared) as job:
        the_plan = run_to_end(job.plan(args.path, options=options))
        if the_plan.unreadable is not None:
            raise SourceUnreadable(f"cannot read {args.path}: {the_plan.unreadable}")
        document = plan_document(the_plan)
        lines = _plan_lines(the_plan, every=args.dry_run)
        result: ImportResult | None = None
        if not args.dry_run:
            result = run_to_end(job.commit(the_plan))
            document = plan_document(the_plan)
            document["result"] = result.to_json()
            lines = _plan_lines(the_plan, every=False) + [_result_line(result)]
    ctx.emit(document, lines)
    has_errors = the_plan.counts["error"] > 0 if result is None else bool(result.errors)
    return EXIT_ERRORS if has_errors else 0


# A planning brain's folder names its process: `memgui-plan-<pid>-<random>`.
_PLANNING = re.compile(r"memgui-plan-(?P<pid>\d+)-\w+")


@contextmanager
def planning_brain(brain_id: str) -> Iterator[Brain]:
    """An empty brain in a temporary folder to plan against, removed after (the folder
    names this process: a killed one's is removed by the next import)."""
    from memgui.core.brain import Brain

    with (
        tempfile.TemporaryDirectory(prefix=f"memgui-plan-{os.getpid()}-") as folder,
        Brain.open(Path(folder) / f"{brain_id}.sqlite", brain_id=brain_id) as empty,
    ):
        yield empty


def _remove_killed_plans() -> None:
    try:
        scratch = os.open(tempfile.gettempdir(), os.O_RDONLY)
    except OSError:
        return
    try:
        leftovers.remove_stale_folders(scratch, _PLANNING)
    finally:
        os.close(scratch)


def _commit_into_new_brain(ctx: CommandContext, the_plan: ImportPlan) -> ImportResult:
    """Commit into a brain made for it at the brain path, whole or not at all."""
    from memgui.core.io import commit
    from memgui.core.io.writing.new_brain import brain_made_whole

    brain_id = ctx.brain_id or ctx.brain_path.stem
    with brain_made_whole(ctx.brain_path, brain_id, ACTOR) as brain:
        return run_to_end(commit(brain, the_plan))


def _writes_something(the_plan: ImportPlan) -> bool:
    return any(r.verdict in (Verdict.NEW, Verdict.UPDATE) for r in the_plan.records)


def _nothing_written(the_plan: ImportPlan) -> ImportResult:
    """The result of committing a plan with nothing to write, without opening a brain."""
    from memgui.core.io import ImportResult, count_verdicts

    result = ImportResult(format=the_plan.format)
    count_verdicts(the_plan, set(), result)
    return result


class SourceUnreadable(MemguiError):
    """The source as a whole could not be read; nothing was planned or written."""

    exit_code = EXIT_UNREADABLE


__all__ = ["plan_document", "run_import"]
