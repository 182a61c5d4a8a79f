"""`memgui copy SRC DST`: a brain file into a shared brain on PostgreSQL (docs/shared-brains.md).

`--json` prints `{"copied": n, "source": SRC, "destination": DST}` (the destination without
its password).
"""

from __future__ import annotations

import argparse

from memgui.cli.registry import CommandContext, command
from memgui.core.progress import run_to_end


def _configure_copy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="SRC", help="a brain file (its one brain, or --brain-id)")
    parser.add_argument(
        "destination",
        metavar="DST",
        help="an empty shared brain: postgresql://user@host/db?brain_id=NAME",
    )


@command(
    "copy",
    "copy a brain file into a shared brain on PostgreSQL",
    configure=_configure_copy,
    on_shared_brains=True,
)
def run_copy(ctx: CommandContext, args: argparse.Namespace) -> None:
    """Copy every trace (with its embedding), link, journal row and meta row of a brain file
    into an empty PostgreSQL brain, in one transaction: on any failure nothing is copied."""
    from memgui.core.engines import copy_brain
    from memgui.core.storage.engine import parse_postgres_address

    shown = str(parse_postgres_address(args.destination))  # checked before anything opens
    copied = run_to_end(copy_brain(args.source, args.destination, ctx.brain_id))
    ctx.emit(
        {"copied": copied, "source": args.source, "destination": shown},
        f"copied {copied} traces from {args.source} to {shown}",
    )
