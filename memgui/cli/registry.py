"""The `memgui` command's registry of subcommands and the context each one runs in.

A subcommand is one `Command`: a name, a `configure(parser)` that declares its arguments and
a `run(ctx, args)` that does the work. Modules register theirs with `@command(...)`; adding a
subcommand is one decorated function in a module of `memgui.cli.commands` that
`memgui.cli.main` imports; its `configure` declares every argument, id arguments with
`type=identifier(...)`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from memgui.core.model import check_id

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.search.embed import OllamaEmbedder
    from memgui.core.storage.engine import BrainStore

ACTOR = "cli"
EMBED_MODEL_ENV = "MEMGUI_EMBED_MODEL"
WRITE_WAIT_ENV = "MEMGUI_WRITE_WAIT"
DEFAULT_MODEL = "nomic-embed-text"

Configure = Callable[[argparse.ArgumentParser], None]
Handler = Callable[["CommandContext", argparse.Namespace], "int | None"]
# (a brain file's path, or a shared brain's postgresql:// address; the brain id)
AppOpener = Callable[["Path | str", "str | None"], "int | None"]
VersionReporter = Callable[[], "dict[str, str]"]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Configure
    run: Handler
    description: str = ""
    # Whether it runs on a shared brain (postgresql://…) too, through `CommandContext.store`.
    on_shared_brains: bool = False


REGISTRY: dict[str, Command] = {}
# What `memgui` without a command runs (`memgui [BRAIN]`): the app's window, registered by the
# app's package with `@opens_the_app`; the command line itself never imports the app.
app_opener: AppOpener | None = None
# What `memgui --version` adds to the core's versions (the app adds Qt's), registered with
# `@reports_versions`.
version_reporters: list[VersionReporter] = []


def command(
    name: str, help: str, *, configure: Configure | None = None, on_shared_brains: bool = False
) -> Callable[[Handler], Handler]:
    """Register the decorated handler as the subcommand `name`; `on_shared_brains`: it uses
    the brain only through `ctx.store`, so it runs on a PostgreSQL brain too."""

    def register(run: Handler) -> Handler:
        if name in REGISTRY:
            raise ValueError(f"memgui subcommand {name!r} is registered twice")
        REGISTRY[name] = Command(
            name=name,
            help=help,
            configure=configure or (lambda parser: None),
            run=run,
            description=(run.__doc__ or help).strip(),
            on_shared_brains=on_shared_brains,
        )
        return run

    return register


def opens_the_app(run: AppOpener) -> AppOpener:
    """Register `run(brain_path, brain_id)` as what `memgui` without a command does."""
    global app_opener
    if app_opener is not None:
        raise ValueError("the app of memgui is registered twice")
    app_opener = run
    return run


def reports_versions(report: VersionReporter) -> VersionReporter:
    """Register `report()` as a source of versions `memgui --version` prints."""
    version_reporters.append(report)
    return report


@dataclass
class CommandContext:
    """What a handler needs: the brain (opened on first use), output mode and streams."""

    brain_path: Path
    brain_id: str | None
    json: bool
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    operation: str = ""  # names the step in a storage-error message
    ollama_url: str | None = None
    embed_model: str | None = None
    # A shared brain's address (postgresql://…), which a Path would mangle; None: a file.
    brain_address: str | None = None
    _brain: Brain | None = None
    _shared: BrainStore | None = None

    @property
    def store(self) -> BrainStore:
        """The brain on either engine, for a command that works on both (traces, search,
        history, revert, info)."""
        if self.brain_address is None:
            return self.brain
        if self._shared is None:
            from memgui.core.shared_brain import SharedBrain

            previous, self.operation = self.operation, "open brain"
            self._shared = SharedBrain.open(self.brain_address, self.brain_id, actor=ACTOR)
            self._shared.use_embedder(self.embedder())
            self.operation = previous
        return self._shared

    @property
    def brain(self) -> Brain:
        """The brain file, for a command that SQLite alone serves yet."""
        if self.brain_address is not None:
            from memgui.core.errors import NotOnPostgres

            raise NotOnPostgres(f"memgui {self.operation}")
        if self._brain is None:
            from memgui.core.brain import Brain

            previous, self.operation = self.operation, "open brain"
            wait_s = write_wait_from_env()
            self._brain = Brain.open(str(self.brain_path), brain_id=self.brain_id, actor=ACTOR)
            if wait_s is not None:
                self._brain.write_wait_s = wait_s
            self._brain.use_embedder(self.embedder(), auto_embed=True)
            self.operation = previous
            _warn_of(self._brain)
        return self._brain

    def embedder(self, model: str | None = None) -> OllamaEmbedder:
        """The Ollama embedder the options and environment name (nothing is contacted yet)."""
        from memgui.core.search.embed import OllamaEmbedder

        chosen = model or self.embed_model or os.environ.get(EMBED_MODEL_ENV) or DEFAULT_MODEL
        return OllamaEmbedder(self.ollama_url, model=chosen)

    def emit(self, document: Any, text: str | Iterable[str]) -> None:
        """Print `document` as one JSON document with --json, else the readable `text`."""
        if self.json:
            print(json.dumps(jsonable(document), ensure_ascii=False), file=self.stdout)
            return
        lines = [text] if isinstance(text, str) else list(text)
        for line in lines:
            print(line, file=self.stdout)

    def close(self) -> None:
        if self._brain is not None:
            brain, self._brain = self._brain, None
            brain.close()
        if self._shared is not None:
            shared, self._shared = self._shared, None
            shared.close()


def write_wait_from_env() -> float | None:
    """`$MEMGUI_WRITE_WAIT`: how many seconds a write waits for another program's write lock
    before it says the brain is busy (None: the core's default)."""
    from memgui.core.brain import MAX_WRITE_WAIT_S
    from memgui.core.model import check_seconds

    text = os.environ.get(WRITE_WAIT_ENV, "").strip()
    if not text:
        return None
    value: float | str
    try:
        value = float(text)
    except ValueError:
        value = text  # refused below, named
    return check_seconds(WRITE_WAIT_ENV, value, MAX_WRITE_WAIT_S)


def _warn_of(brain: Brain) -> None:
    """What a person must know before a command uses the brain, on stderr."""
    if brain.foreign_triggers:
        print(
            f"memgui: warning: {brain.path} holds triggers memgui did not make "
            f"({', '.join(brain.foreign_triggers)}); they run on every write to the brain, "
            "memgui's included, and a SQLite export leaves them out",
            file=sys.stderr,
        )


def jsonable(value: Any) -> Any:
    """Turn core results (dataclasses with or without `to_json`, sets, tuples) into JSON."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted(jsonable(v) for v in value)
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def identifier(field: str, what: str = "trace id") -> Callable[[str], str]:
    """The `type=` of a positional id argument: an empty one is refused while parsing (exit 2,
    naming the field) by every command alike, rather than looked up and reported missing."""
    return lambda text: check_id(field, text, what)


def add_filter_options(parser: argparse.ArgumentParser, *, default_limit: int) -> None:
    """The filters `list` and `search` share (validated by the core, not here)."""
    parser.add_argument("--type", help="episodic, semantic, procedural, prospective, relational")
    parser.add_argument("--scope", help="thread, user, persona or organization")
    parser.add_argument("--scope-id", metavar="ID", help="the scope's id (e.g. a user id)")
    parser.add_argument("--category", help="DECISION, PATTERN, ERROR, TODO, ...")
    parser.add_argument("--tag", help="only traces carrying this exact tag (case-sensitive)")
    deleted = parser.add_mutually_exclusive_group()
    deleted.add_argument("--deleted", action="store_true", help="only forgotten traces")
    deleted.add_argument("--include-deleted", action="store_true", help="live and forgotten traces")
    parser.add_argument(
        "--limit",
        type=int,
        default=default_limit,
        metavar="N",
        help=f"1-200 (default {default_limit})",
    )
    parser.add_argument(
        "--expand-links", action="store_true", help="attach up to 10 linked traces to each result"
    )
