"""`memgui reflect`: consolidate the brain (seed 000's memory_reflect), or show the plan.

With `--dry-run` the plan is printed — every candidate of every step with why — and nothing
is written. Without it the plan is applied whole, in one journal batch (actor
`consolidation`) that `memgui revert BATCH` undoes, and the seed's counts are printed with
the batch id. While another consolidation of the brain runs, nothing is done and the
command exits 5 with zero counts.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from memgui.cli.registry import CommandContext, command
from memgui.core.errors import BrainBusy, InvalidArgument
from memgui.core.progress import Progress, run_to_end

if TYPE_CHECKING:
    from memgui.core.consolidate import (
        ConsolidationOptions,
        ConsolidationPlan,
        ConsolidationResult,
    )

EXIT_BUSY = BrainBusy.exit_code


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="print the plan; write nothing")
    parser.add_argument(
        "--steps",
        action="append",
        metavar="STEP[,STEP]",
        help="the steps to run: prune, merge, strengthen, derive, compact, reindex (default all)",
    )
    parser.add_argument(
        "--prune-threshold", type=float, metavar="S", help="prune below this strength (0.05)"
    )
    parser.add_argument(
        "--merge-threshold",
        type=float,
        metavar="C",
        help="merge above this cosine similarity of stored vectors (0.95)",
    )
    parser.add_argument(
        "--across-scopes", action="store_true", help="merge copies filed in different scopes too"
    )
    parser.add_argument(
        "--across-types", action="store_true", help="merge copies of different types too"
    )
    parser.add_argument(
        "--chat-model",
        metavar="M",
        help="the Ollama chat model that derives insights ($MEMGUI_CHAT_MODEL, else llama3.2)",
    )


def _steps(given: list[str] | None) -> tuple[str, ...] | None:
    if not given:
        return None
    steps = tuple(s.strip() for chunk in given for s in chunk.split(",") if s.strip())
    if not steps:
        raise InvalidArgument("steps", f"must name at least one step (got {given!r})", given)
    return steps


def _progress(event: Progress) -> None:
    if event.message and sys.stderr.isatty():
        print(f"\r\033[K{event.message}", end="", file=sys.stderr, flush=True)


@command(
    "reflect",
    "consolidate the brain (or --dry-run: show the plan)",
    configure=_configure,
    on_shared_brains=True,
)
def run_reflect(ctx: CommandContext, args: argparse.Namespace) -> int:
    """Prune, merge, strengthen, derive, compact and re-index (seed 000's memory_reflect)."""
    from memgui.core.consolidate import (
        ConsolidationOptions,
        plan_consolidation,
        reflect,
    )
    from memgui.core.llm import OllamaChat

    options = ConsolidationOptions(
        merge_across_scopes=args.across_scopes, merge_across_types=args.across_types
    )
    steps = _steps(args.steps)
    if steps is not None:
        options.steps = steps
    if args.prune_threshold is not None:
        options.prune_threshold = args.prune_threshold
    if args.merge_threshold is not None:
        options.merge_threshold = args.merge_threshold
    options.validated()
    llm = OllamaChat(ctx.ollama_url, args.chat_model) if "derive" in options.steps else None
    options.llm = llm
    try:
        if ctx.brain_address is not None:
            return _reflect_shared(ctx, options, dry_run=args.dry_run)
        if args.dry_run:
            plan = run_to_end(plan_consolidation(ctx.brain, options), _progress)
            _end_progress()
            ctx.emit(dict(plan.to_json(), dry_run=True), plan_lines(plan))
            return EXIT_BUSY if plan.busy else 0
        result = reflect(ctx.brain, options, on_progress=_progress)
        _end_progress()
    finally:
        if llm is not None:
            llm.close()
    ctx.emit(result.to_json(), result_lines(result))
    return EXIT_BUSY if result.busy else 0


def _reflect_shared(ctx: CommandContext, options: ConsolidationOptions, dry_run: bool) -> int:
    """On a shared brain (`core/shared_consolidate.py`): every step, by the file's rules."""
    from memgui.core import shared_consolidate
    from memgui.core.shared_brain import SharedBrain

    brain = ctx.store
    assert isinstance(brain, SharedBrain)
    if dry_run:
        plan = shared_consolidate.plan_consolidation(brain, options)
        ctx.emit(dict(plan.to_json(), dry_run=True), plan_lines(plan))
        return EXIT_BUSY if plan.busy else 0  # planned while another long operation held it
    result = shared_consolidate.reflect(brain, options)
    ctx.emit(result.to_json(), result_lines(result))
    return EXIT_BUSY if result.busy else 0


def _end_progress() -> None:
    if sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr, flush=True)


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def plan_lines(plan: ConsolidationPlan) -> list[str]:
    if plan.busy:
        return [f"nothing planned: {plan.busy}"]
    counts = ", ".join(f"{step} {n}" for step, n in plan.counts.items())
    lines = [f"plan: {counts} (a dry run: nothing was written)"]
    for p in plan.prune:
        lines.append(f"prune    {p.trace_id}  {p.why}  “{_short(p.content)}”")
    for m in plan.merge:
        lines.append(f"merge {m.number}  {m.why}; keeps {m.survivor_id}: “{_short(m.content)}”")
        for member in m.members:
            if member.trace_id != m.survivor_id:
                lines.append(f"           {member.trace_id}  {member.evidence}")
    for s in plan.strengthen:
        lines.append(f"strengthen  {s.why}")
    for d in plan.derive:
        lines.append(f"derive {d.number}  {d.why}: “{_short(d.insight, 80)}”")
    for c in plan.compact:
        lines.append(f"compact  {c.trace_id}  {c.why}")
    if plan.reindex_pending:
        lines.append(f"reindex  {plan.reindex_pending} rows wait for the full-text indexes")
    lines += [f"note: {note}" for note in plan.notes]
    return lines


def result_lines(result: ConsolidationResult) -> list[str]:
    if result.busy:
        return [f"nothing done: {result.busy}"]
    counts = result.seed_counts()
    line = (
        f"consolidated: pruned {counts['pruned']}, merged {counts['merged']}, derived "
        f"{counts['derived']} ({result.derived} insights, {result.strengthened} strengthened), "
        f"compacted {counts['compacted']}, re-indexed {result.reindexed} "
        f"in {counts['durationMs']} ms"
    )
    lines = [line]
    if result.batch_id:
        lines.append(f"batch {result.batch_id} (memgui revert {result.batch_id} undoes it)")
    lines += [f"note: {note}" for note in result.notes]
    return lines
