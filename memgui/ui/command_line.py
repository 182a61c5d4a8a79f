"""The app's part of the `memgui` command: `memgui [BRAIN]` opens the window,
`memgui screenshot` draws it to a PNG, and `memgui --version` names the Qt it runs on.

Registered with the command line's registry when the `memgui` program (`memgui.__main__`)
imports this module. Qt loads only when one of them runs: every other command starts without it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memgui.cli.registry import CommandContext, command, opens_the_app, reports_versions
from memgui.core.errors import InvalidArgument
from memgui.core.model import check_id

SIZE_MIN, SIZE_MAX = 200, 10_000  # what the window can be drawn at (ui/screenshot.py)
TABS = ("memory", "links", "neighbours", "history", "metadata")  # the detail pane's tabs


@opens_the_app
def open_app(brain_path: Path | str, brain_id: str | None) -> int | None:
    from memgui.ui import qt_platform

    qt_platform.check()  # Qt would abort on a missing library without naming it: we name it
    from memgui.ui.app import run_app

    return run_app(str(brain_path), brain_id)


@reports_versions
def qt_versions() -> dict[str, str]:
    """Qt's version as the library loaded reports it, and PySide6's: no application is made."""
    try:
        import PySide6
        from PySide6 import QtCore
    except ImportError as error:  # a Qt library missing from the system or the build
        return {"qt": f"unavailable: {error}"}
    return {"qt": QtCore.qVersion(), "pyside6": PySide6.__version__}


def _window_size(text: str) -> tuple[int, int]:
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit() or not int(width) or not int(height):
        raise argparse.ArgumentTypeError(f"size must be WIDTHxHEIGHT, e.g. 1280x800 (got {text!r})")
    if not all(SIZE_MIN <= int(n) <= SIZE_MAX for n in (width, height)):
        raise argparse.ArgumentTypeError(
            f"size must be between {SIZE_MIN}x{SIZE_MIN} and {SIZE_MAX}x{SIZE_MAX} (got {text!r})"
        )
    return int(width), int(height)


def _configure_screenshot(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "memgui screenshot [BRAIN] OUT.png [--select ID] [--search TEXT] [--tab TAB] [--trash]"
        " [--activity] [--size WxH] [--view main|graph|open-shared] [--import PATH [--show V]]"
        " [--consolidate]"
    )
    parser.add_argument("first", metavar="BRAIN", help="the brain, or OUT.png alone (then --brain)")
    parser.add_argument("second", nargs="?", metavar="OUT.png", help="the PNG to write")
    parser.add_argument("--select", metavar="ID", help="select this trace first")
    parser.add_argument("--search", metavar="TEXT", help="search for TEXT first")
    parser.add_argument("--tab", choices=TABS, help="show this tab of the detail pane")
    parser.add_argument("--trash", action="store_true", help="show the trash")
    parser.add_argument("--size", type=_window_size, metavar="WxH", help="window size")
    parser.add_argument(
        "--activity",
        action="store_true",
        help="show the Agent activity panel, its first change chosen",
    )
    parser.add_argument(
        "--view",
        choices=("main", "graph", "open-shared"),
        default="main",
        help="graph: the graph window opened on --select (else the first memory); "
        "open-shared: File ▸ Open shared brain…'s dialog alone",
    )
    parser.add_argument(
        "--depth", type=int, choices=(1, 2, 3), default=1, help="with --view graph: hops shown"
    )
    parser.add_argument(
        "--import",
        dest="import_path",
        metavar="PATH",
        help="render the review page of importing PATH (planned only: nothing is committed)",
    )
    parser.add_argument(
        "--show",
        choices=("new", "duplicate", "update", "refused", "error", "skipped"),
        help="with --import: select the first record of this verdict",
    )
    parser.add_argument(
        "--consolidate",
        action="store_true",
        help="render the Consolidate… dialog with its plan (planned only: nothing is applied)",
    )


def _brain_or_address(given: str) -> str | Path:
    from memgui.core.shared_brain import is_postgres_address

    return given if is_postgres_address(given) else Path(given)


@command(
    "screenshot",
    "render the app's window for a brain to a PNG",
    configure=_configure_screenshot,
    on_shared_brains=True,  # the window opens a shared brain as it opens a file
)
def run_screenshot(ctx: CommandContext, args: argparse.Namespace) -> None:
    brain_path: str | Path
    if args.second is None:
        brain_path, out_png = ctx.brain_address or ctx.brain_path, Path(args.first)
    else:  # a shared brain's address as it is (a Path would mangle its //)
        brain_path, out_png = _brain_or_address(args.first), Path(args.second)
    # What the drawing would trip over, said as invalid input (exit 2) before Qt starts.
    if out_png.is_dir():
        raise InvalidArgument("out", f"is a folder, not a PNG file (got '{out_png}')", str(out_png))
    if args.select is not None:
        check_id("select", args.select)
    if args.import_path is not None and not Path(args.import_path).expanduser().exists():
        raise InvalidArgument(
            "import", f"does not exist (got '{args.import_path}')", args.import_path
        )
    if args.consolidate:
        from memgui.ui.consolidation.consolidation_screenshot import render_consolidation

        extra = {"size": args.size} if args.size is not None else {}
        counts = render_consolidation(brain_path, out_png, **extra)
        ctx.emit(
            {"screenshot": str(out_png), "brain": str(brain_path), "plan": counts},
            f"wrote {out_png} (" + ", ".join(f"{k} {v}" for k, v in counts.items()) + ")",
        )
        return
    if args.import_path is not None:
        from memgui.ui.importing.import_screenshot import render_import

        extra = {"size": args.size} if args.size is not None else {}
        counts = render_import(brain_path, out_png, args.import_path, show=args.show, **extra)
        ctx.emit(
            {"screenshot": str(out_png), "brain": str(brain_path), "plan": counts},
            f"wrote {out_png} (" + ", ".join(f"{v} {k}" for k, v in counts.items() if v) + ")",
        )
        return
    from memgui.ui.screenshot import render

    options: dict[str, Any] = {
        "select_id": args.select,
        "search": args.search or "",
        "tab": args.tab,
        "trash": args.trash,
    }
    if args.view == "graph":
        options["view"] = "graph"
        options["depth"] = args.depth
    elif args.view == "open-shared":
        options["view"] = "open-shared"
    if args.size is not None:
        options["size"] = args.size
    if args.activity:
        options["activity"] = True
    render(str(brain_path), str(out_png), **options)
    ctx.emit({"screenshot": str(out_png), "brain": str(brain_path)}, f"wrote {out_png}")
