"""The `memgui` command.

`memgui [--brain PATH] [--brain-id ID] [--json] COMMAND ...` runs one subcommand against a
brain (a file, or a shared brain's `postgresql://…?brain_id=NAME` address for the commands
docs/shared-brains.md lists); `memgui` alone, or `memgui PATH` for a brain file, opens the
app. Subcommands live in `memgui.cli.commands` (see `memgui.cli.registry`). The app is not
this package's: it registers its part (opening the window, `screenshot`) with the registry,
and the `memgui` program (`memgui.__main__`) loads both.

Exit codes: 0 ok, 2 invalid input, 3 not found, 4 conflict, 5 busy (another program held the
brain's write lock longer than `$MEMGUI_WRITE_WAIT` seconds, default 200; nothing was written),
128 + N stopped by signal N (SIGTERM, SIGHUP; what the command began was undone), 1 anything
else. Messages go to stderr as `memgui: <message>`; a storage failure names the operation,
never SQL, and its detail goes to the log file in the user log folder.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from memgui.cli import registry
from memgui.cli.commands import (  # noqa: F401 - each registers its commands
    admin,
    consolidation,
    desktop,
    embed,
    exports,
    imports,
    ingest,
    serve,
    shared,
    traces,
)
from memgui.cli.log import failures_logged_to_file
from memgui.cli.registry import REGISTRY, CommandContext
from memgui.core.errors import InvalidArgument, MemguiError, NotOnPostgres, StorageError
from memgui.core.storage.engine import is_postgres_address, parse_postgres_address

APP_NAME = "memgui"
BRAIN_ENV = "MEMGUI_BRAIN"
BRAIN_SUFFIXES = (".sqlite", ".db", ".sqlite3")
EXIT_OK, EXIT_FAILURE = 0, 1
EXIT_INTERRUPTED = 130
EXIT_SIGNALLED = 128  # + the signal's number, as a shell reports a process a signal ended
OPTIONS_WITH_VALUES = ("--brain", "--brain-id", "--ollama-url", "--embed-model")

log = logging.getLogger("memgui.cli")


def default_brain_path() -> Path:
    """`$MEMGUI_BRAIN`, else `brain.sqlite` in the user data folder."""
    from_env = os.environ.get(BRAIN_ENV)
    if from_env:
        return Path(from_env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME)) / "brain.sqlite"


# --- parser ------------------------------------------------------------------------------


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """--brain, --brain-id and --json, before the command or (suppress=True) after it."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--brain",
        metavar="PATH",
        default=default,
        help=f"the brain file, or a shared brain's postgresql://…?brain_id=NAME address "
        f"(default: ${BRAIN_ENV} or the user data folder)",
    )
    parser.add_argument(
        "--brain-id", metavar="ID", default=default, help="which brain, when the file holds several"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="print one JSON document",
    )
    parser.add_argument(
        "--ollama-url",
        metavar="URL",
        default=default,
        help="Ollama for search by meaning (default: $MEMGUI_OLLAMA_URL or http://localhost:11434)",
    )
    parser.add_argument(
        "--embed-model",
        metavar="MODEL",
        default=default,
        help="embedding model (default: $MEMGUI_EMBED_MODEL or nomic-embed-text)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of every registered command, built once per set of commands (argparse
    spends most of it in gettext)."""
    return _parser(tuple(REGISTRY))


@functools.cache
def _parser(_commands: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=APP_NAME,
        description="Browse and edit an AI agent's long-term memory (a SQLite brain). "
        "Without a command, or with a brain file, opens the app.",
    )
    _global_options(parser, suppress=False)
    parser.add_argument(
        "--version",
        action="store_true",
        help="print the versions of memgui, the brain schemas it reads and writes, SQLite, "
        "sqlite-vec and Qt, and exit",
    )
    after_command = argparse.ArgumentParser(add_help=False)
    _global_options(after_command, suppress=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in REGISTRY.values():
        sub = subparsers.add_parser(
            cmd.name, help=cmd.help, description=cmd.description, parents=[after_command]
        )
        cmd.configure(sub)
        _check_integers(sub)
    return parser


def _check_integers(parser: argparse.ArgumentParser) -> None:
    """Give integer options checks that fail as `InvalidArgument`.

    argparse's own `type=int` failure prints the usage block and `invalid int value`; these
    raise the core's error instead (argparse lets it through), so the message names the
    field and the value like every other refusal. Commands keep declaring plain `type=int`.
    (Id arguments declare `type=identifier(...)` themselves.)
    """
    for action in parser._actions:  # argparse has no public list of a parser's actions
        if action.type is int:
            action.type = _integer(action.dest)


def _integer(field: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise InvalidArgument(field, f"must be an integer (got {text!r})", text) from None

    return parse


def _looks_like_brain(token: str) -> bool:
    return (
        is_postgres_address(token)
        or Path(token).suffix.lower() in BRAIN_SUFFIXES
        or Path(token).is_file()
    )


def _split_app_brain(argv: list[str]) -> tuple[str | None, list[str]]:
    """Find `memgui PATH`: a first positional that is no command but a brain file."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return None, argv
        if token in OPTIONS_WITH_VALUES:
            i += 2
            continue
        if token.startswith("-"):
            i += 1
            continue
        if token not in REGISTRY and _looks_like_brain(token):
            return token, argv[:i] + argv[i + 1 :]
        return None, argv
    return None, argv


# --- running -----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run `memgui` with `argv` (default: the process's arguments); return the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    app_brain, args_list = _split_app_brain(args_list)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as stop:  # argparse has printed usage and the message to stderr
        return _exit_status(stop)
    except InvalidArgument as error:  # a value an argument's type refused
        _say(str(error))
        return error.exit_code
    if args.version:
        return _print_versions(json_output=args.json)
    from_env = os.environ.get(BRAIN_ENV, "")
    address = app_brain or args.brain or (from_env if is_postgres_address(from_env) else None)
    shared_address = address if address is not None and is_postgres_address(address) else None
    brain_path = Path(shared_address or address or default_brain_path()).expanduser()
    ctx = CommandContext(
        brain_path=brain_path,
        brain_id=args.brain_id,
        json=args.json,
        ollama_url=args.ollama_url,
        embed_model=args.embed_model,
        brain_address=shared_address,
    )
    with failures_logged_to_file() as log_path:
        if args.command is None:
            ctx.operation = "open the app"
            if shared_address is not None:
                address = shared_address
                return _guarded(ctx, lambda: _open_shared_app(address, args.brain_id), log_path)
            return _guarded(ctx, lambda: _open_app(brain_path, args.brain_id), log_path)
        cmd = REGISTRY[args.command]
        ctx.operation = cmd.name
        if shared_address is not None and not cmd.on_shared_brains:
            # Refused before it runs: it would take the address for a file's path.
            return _guarded(ctx, functools.partial(_not_on_postgres, cmd.name), log_path)
        with stopped_by_signals():
            return _guarded(ctx, lambda: cmd.run(ctx, args), log_path)


def _open_shared_app(address: str, brain_id: str | None) -> int:
    """The app on a shared brain: the address checked first (a missing brain id, or one
    --brain-id disagrees with, is refused here), its brain id put in it when given apart."""
    checked = parse_postgres_address(address, brain_id)
    if "brain_id=" not in address:
        address = f"{address}{'&' if '?' in address else '?'}brain_id={checked.brain_id}"
    return _open_app(address, brain_id)


def _not_on_postgres(name: str) -> int:
    raise NotOnPostgres(f"memgui {name}")


def _print_versions(*, json_output: bool) -> int:
    """`memgui --version`: no brain is opened, and Qt is asked without starting the app."""
    from memgui.core.versions import version_lines, versions

    found = versions()
    for report in registry.version_reporters:
        found.update(report())
    text = json.dumps(found, ensure_ascii=False) if json_output else "\n".join(version_lines(found))
    print(text)
    return EXIT_OK


def _guarded(ctx: CommandContext, work: Callable[[], int | None], log_path: Path) -> int:
    """Run `work`, turning every failure into a message on stderr and an exit code."""
    try:
        try:
            code = work()
        finally:
            ctx.close()
        sys.stdout.flush()
        return EXIT_OK if code is None else int(code)
    except StorageError as error:
        return _logged_failure(error, f"{error.operation} failed due to a storage error", log_path)
    except MemguiError as error:
        _say(str(error))
        return error.exit_code
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPTED
    except Stopped as stop:
        _say(f"stopped by {stop.name}; what the command had begun was undone")
        return EXIT_SIGNALLED + stop.signum
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop writing, quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILURE
    except Exception as error:
        if _is_damage(error):  # a page SQLite found damaged, read where the core did not wrap it
            message = (
                f"{ctx.operation} failed: {ctx.brain_path} is damaged (SQLite says: {error}); "
                "nothing was written"
            )
        elif _is_sqlite_error(error):  # raised where the core did not wrap it
            message = f"{ctx.operation} failed due to a storage error"
        else:
            message = f"{ctx.operation} failed unexpectedly ({type(error).__name__}: {error})"
        return _logged_failure(error, message, log_path)


class Stopped(BaseException):
    """SIGTERM (`timeout`, systemd, `kill`) or SIGHUP (the terminal closed) stopped the
    command. Raised where the command is, like an interrupt, so that what it began is undone
    on the way out: a transaction rolled back, an export's temporary files removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name


STOPPING_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _stop(signum: int, _frame: object) -> None:
    for each in STOPPING_SIGNALS:  # a second signal must not cut the clean-up short
        signal.signal(each, signal.SIG_IGN)
    raise Stopped(signum)


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """Around a command: SIGTERM and SIGHUP raise `Stopped` in it instead of ending the
    process where it stands (the main thread only: elsewhere signals cannot be caught)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {each: signal.signal(each, _stop) for each in STOPPING_SIGNALS}
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


def _is_sqlite_error(error: BaseException) -> bool:
    apsw = sys.modules.get("apsw")
    return apsw is not None and isinstance(error, apsw.Error)


def _is_damage(error: BaseException) -> bool:
    apsw = sys.modules.get("apsw")
    return apsw is not None and isinstance(error, apsw.CorruptError | apsw.NotADBError)


def _logged_failure(error: BaseException, message: str, log_path: Path) -> int:
    """Say `message`; the detail (traceback, SQLite's words) goes to the log file only."""
    log.error("%s", message, exc_info=error)
    _say(message)
    if log_path.exists():
        _say(f"details were logged to {log_path}")
    return EXIT_FAILURE


def _say(message: str) -> None:
    try:
        print(f"{APP_NAME}: {message}", file=sys.stderr)
    except OSError:
        pass  # the terminal went (SIGHUP): nobody is there to read it


def _exit_status(stop: SystemExit) -> int:
    if stop.code is None:
        return EXIT_OK
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return EXIT_FAILURE


# --- the app (registered by the ui package) -----------------------------------------------


def _open_app(brain_path: Path | str, brain_id: str | None) -> int:
    if registry.app_opener is None:
        raise MemguiError("this memgui has no app; name a command (memgui --help lists them)")
    result = registry.app_opener(brain_path, brain_id)
    return result if isinstance(result, int) else EXIT_OK
