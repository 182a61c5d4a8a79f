"""`memgui copy SRC DST` (a brain between a file and PostgreSQL, either way) and `memgui
snapshot FILE` (a read-only file of a shared brain); docs/shared-brains.md.

`--json` prints `{"copied": n, "source": SRC, "destination": DST}` (an address without its
password).
"""

from __future__ import annotations

import argparse

from memgui.cli.registry import CommandContext, command
from memgui.core.errors import InvalidArgument
from memgui.core.progress import run_to_end


def _configure_copy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source",
        metavar="SRC",
        help="a brain file (its one brain, or --brain-id) or postgresql://…?brain_id=NAME",
    )
    parser.add_argument(
        "destination",
        metavar="DST",
        help="an empty shared brain (postgresql://user@host/db?brain_id=NAME) for a file; "
        "a new file for a shared brain",
    )


@command(
    "copy",
    "copy a brain between a file and a shared brain on PostgreSQL, either way",
    configure=_configure_copy,
    on_shared_brains=True,
)
def run_copy(ctx: CommandContext, args: argparse.Namespace) -> None:
    """Copy every trace (with its embedding), link, journal row and meta row of a brain
    file into an empty PostgreSQL brain, or of a PostgreSQL brain into a new file; on any
    failure nothing is copied."""
    _copy(ctx, args.source, args.destination, read_only=False)


def _configure_snapshot(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("destination", metavar="FILE", help="the new, read-only brain file")


@command(
    "snapshot",
    "make a read-only brain file of a shared brain, for reading offline",
    configure=_configure_snapshot,
    on_shared_brains=True,
)
def run_snapshot(ctx: CommandContext, args: argparse.Namespace) -> None:
    """The shared brain of --brain as it is now, in a new file without write permission."""
    if ctx.brain_address is None:
        raise InvalidArgument(
            "brain",
            f"must be a shared brain's postgresql:// address for a snapshot "
            f"(got the file {ctx.brain_path})",
            str(ctx.brain_path),
        )
    _copy(ctx, ctx.brain_address, args.destination, read_only=True)


def _copy(ctx: CommandContext, source: str, destination: str, *, read_only: bool) -> None:
    from memgui.core.engines import copy_brain
    from memgui.core.storage.engine import is_postgres_address, parse_postgres_address

    def shown(address: str, brain_id: str | None) -> str:
        """Checked before anything opens; never the password."""
        if not is_postgres_address(address):
            return address
        return str(parse_postgres_address(address, brain_id))

    # --brain-id names the source's brain (a file's, or the address's).
    names = shown(source, ctx.brain_id), shown(destination, None)
    copied = run_to_end(copy_brain(source, destination, ctx.brain_id, read_only=read_only))
    ctx.emit(
        {"copied": copied, "source": names[0], "destination": names[1]},
        f"copied {copied} traces from {names[0]} to {names[1]}",
    )
