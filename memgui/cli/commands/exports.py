"""`memgui export PATH --format F`: write the brain out as SQLite, JSON, JSONL, Markdown or
an Obsidian vault, and report what was exported and what was refused (and why).

`--json` prints `{"exported": n, "refused": [{"id", "field", "problem"}]}`. For `jsonl`,
PATH `-` writes the export to stdout; the report then goes to stderr, since stdout is the
file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memgui.cli.registry import CommandContext, command
from memgui.core.errors import InvalidArgument
from memgui.core.io import EXPORT_FORMATS
from memgui.core.progress import run_to_end

if TYPE_CHECKING:  # the export engine loads when the command runs
    from memgui.core.io import ExportResult

STDOUT = "-"
BY_SUFFIX = {".json": "json", ".jsonl": "jsonl", ".sqlite": "sqlite", ".db": "sqlite"}


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="where to write: a file, a folder (markdown, obsidian), or -")
    parser.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        help="default: from PATH (.json, .jsonl, .sqlite/.db; anything else: markdown)",
    )
    parser.add_argument(
        "--include-embeddings", action="store_true", help="json: embeddings as base64"
    )
    parser.add_argument(
        "--no-conversations", action="store_true", help="json: leave out conversations, messages"
    )
    parser.add_argument(
        "--id",
        dest="ids",
        action="append",
        metavar="ID",
        help="export only this trace; repeat for several",
    )


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    if args.path == STDOUT:
        return "jsonl"
    return BY_SUFFIX.get(Path(args.path).suffix.lower(), "markdown")


def _report_lines(result: ExportResult, fmt: str, path: str) -> list[str]:
    where = "stdout" if path == STDOUT else path
    lines = [f"exported {result.exported} traces as {fmt} to {where}"]
    if result.refused:
        lines.append(f"refused {len(result.refused)}:")
        lines.extend(f"  {r.id!r} ({r.field}: {r.problem})" for r in result.refused)
    return lines


@command(
    "export",
    "export the brain (sqlite, json, jsonl, markdown, obsidian)",
    configure=_configure,
    on_shared_brains=True,
)
def run_export(ctx: CommandContext, args: argparse.Namespace) -> int | None:
    """Export the brain. SQLite never replaces a file; JSON and JSONL files are replaced
    atomically and written private (0600); Markdown and Obsidian write into a folder."""
    from memgui.core.engines import export_store
    from memgui.core.io import ExportIncomplete, ExportOptions

    fmt = _format(args)
    if args.path == STDOUT and fmt != "jsonl":
        raise InvalidArgument("path", f"'-' (stdout) is only for --format jsonl (got {fmt})", "-")
    options = ExportOptions(
        include_embeddings=args.include_embeddings,
        include_conversations=not args.no_conversations,
        selection=args.ids,
    )
    if not args.path.strip():  # Path("") would be the current folder
        raise InvalidArgument("path", f"must name a file or folder (got {args.path!r})", args.path)
    dest = sys.stdout.buffer if args.path == STDOUT else Path(args.path).expanduser()
    if args.path == STDOUT:
        sys.stdout.flush()
    failure: ExportIncomplete | None = None
    try:
        result = run_to_end(export_store(ctx.store, dest, fmt, options))
    except ExportIncomplete as error:
        failure, result = error, error.result
    if args.path == STDOUT:
        report = json.dumps(result.to_json(), ensure_ascii=False) if ctx.json else None
        print(report or "\n".join(_report_lines(result, fmt, args.path)), file=sys.stderr)
    else:
        ctx.emit(result, _report_lines(result, fmt, args.path))
    if failure is not None:
        print(f"memgui: {failure}", file=sys.stderr)
        return failure.exit_code
    return None
