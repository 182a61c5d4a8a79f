"""Server subcommands of `memgui`: serve-mcp (MCP over stdio) and serve-rest (HTTP).

Both serve the brain the options name — `--brain`, else `$MEMGUI_BRAIN`, else agent-memory's
`$AGENT_MEMORY_DB`, else memgui's default brain — so an agent-memory configuration keeps
working when `memgui serve-mcp` replaces `agent-memory serve`. The Ollama URL is read the
same way (`--ollama-url`, `$MEMGUI_OLLAMA_URL`, `$AGENT_MEMORY_OLLAMA_URL`). Logs go to stderr
and the log file, never stdout. A `postgresql://…?brain_id=NAME` address serves that shared
brain (docs/shared-brains.md).
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from memgui.cli.registry import DEFAULT_MODEL, EMBED_MODEL_ENV, CommandContext, command
from memgui.core.errors import InvalidArgument
from memgui.core.maintenance import DEFAULT_INTERVAL_S
from memgui.server import DEFAULT_PROFILE, DEFAULT_REST_ADDR, PROFILES

if TYPE_CHECKING:
    from memgui.server.runtime import ServerOptions


def _maintenance_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--maintenance-interval",
        type=float,
        default=DEFAULT_INTERVAL_S,
        metavar="SECS",
        help=f"seconds between TTL sweeps and embedding backfills (default {DEFAULT_INTERVAL_S:g};"
        " the first runs at start)",
    )


def _options(ctx: CommandContext, args: argparse.Namespace, **profile: object) -> ServerOptions:
    from memgui.server.runtime import ServerOptions, brain_path_from, ollama_url_from

    interval = args.maintenance_interval
    if not interval > 0 or interval != interval or interval == float("inf"):
        raise InvalidArgument(
            "maintenance_interval", f"must be a positive number of seconds (got {interval!r})"
        )
    return ServerOptions(
        brain_path=brain_path_from(getattr(args, "brain", None), ctx.brain_path),
        brain_address=ctx.brain_address,
        brain_id=ctx.brain_id,
        ollama_url=ollama_url_from(ctx.ollama_url),
        embed_model=ctx.embed_model or os.environ.get(EMBED_MODEL_ENV) or DEFAULT_MODEL,
        maintenance_interval=interval,
        **profile,  # type: ignore[arg-type]
    )


def _configure_mcp(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default=DEFAULT_PROFILE,
        help="agent-memory: agent-memory's seven tools (default); agentos: AgentOS's memory tools",
    )
    parser.add_argument(
        "--rehydrate",
        action="store_true",
        help="with --profile agentos, also offer rehydrate_memory",
    )
    parser.add_argument(
        "--chat-model",
        metavar="M",
        help="with --profile agentos, the Ollama chat model memory_reflect derives insights "
        "with (default: $MEMGUI_CHAT_MODEL, else llama3.2)",
    )
    _maintenance_option(parser)


@command(
    "serve-mcp",
    "serve the brain's memory tools to an MCP client over stdin/stdout",
    configure=_configure_mcp,
    on_shared_brains=True,
)
def run_serve_mcp(ctx: CommandContext, args: argparse.Namespace) -> None:
    """Serve the memory tools over MCP (stdio) until the client closes stdin."""
    from memgui.server.mcp import serve
    from memgui.server.runtime import log_to_stderr

    options = _options(
        ctx, args, profile=args.profile, rehydrate=args.rehydrate, chat_model=args.chat_model
    )
    log_to_stderr()
    serve(options)


def _configure_rest(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--addr",
        default=DEFAULT_REST_ADDR,
        metavar="HOST:PORT",
        help=f"where to listen (default {DEFAULT_REST_ADDR}; port 0 picks a free one)",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback address (the API has no authentication)",
    )
    _maintenance_option(parser)


@command(
    "serve-rest",
    "serve the brain over HTTP (agent-memory's REST API), loopback only by default",
    configure=_configure_rest,
    on_shared_brains=True,
)
def run_serve_rest(ctx: CommandContext, args: argparse.Namespace) -> None:
    """Serve agent-memory's REST API on the brain until interrupted."""
    from memgui.server.rest_listen import serve
    from memgui.server.runtime import log_to_stderr

    options = _options(ctx, args)
    log_to_stderr()
    serve(options, args.addr, args.allow_remote)
