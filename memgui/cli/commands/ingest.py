"""`memgui ingest`: the facts of one conversation turn, stored as memories (auto-ingest).

The turn is kept first (a conversation with its two messages); then an Ollama chat model
is asked for its facts, which Wunderland's filter (`--config agent.config.json`: its
`storage.autoIngest` and `personality`) keeps or skips. `--dry-run` writes nothing and says
what would be stored. A chat model that cannot answer stores no fact (exit 1, the turn kept).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

from memgui.cli.registry import CommandContext, command

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.shared_brain import SharedBrain


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user", required=True, metavar="TEXT", help="the user's message")
    parser.add_argument("--assistant", required=True, metavar="TEXT", help="the assistant's reply")
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="an agent.config.json (storage.autoIngest, personality); default: Wunderland's",
    )
    parser.add_argument("--dry-run", action="store_true", help="write nothing; show the facts")
    parser.add_argument("--conversation-id", metavar="ID", help="add the turn to this conversation")
    parser.add_argument("--scope-id", metavar="ID", default="", help="file the facts under it")
    parser.add_argument(
        "--chat-model",
        metavar="M",
        help="the Ollama chat model ($MEMGUI_CHAT_MODEL, else llama3.2)",
    )


@command(
    "ingest",
    "store the facts of a user message and the assistant's reply (auto-ingest)",
    configure=_configure,
    on_shared_brains=True,
)
def run_ingest(ctx: CommandContext, args: argparse.Namespace) -> int:
    """Keep the turn, ask the chat model for its facts, store those the filter keeps."""
    from memgui.core.ingest import ingest_turn
    from memgui.core.ingest_config import load_agent_config
    from memgui.core.llm import OllamaChat

    config = load_agent_config(args.config)
    llm = OllamaChat(ctx.ollama_url, args.chat_model)
    try:
        result = ingest_turn(
            cast("Brain | SharedBrain", ctx.store),  # the store is one of the two engines
            args.user,
            args.assistant,
            config,
            llm,
            conversation_id=args.conversation_id,
            scope_id=args.scope_id,
            dry_run=args.dry_run,
            actor="cli",
        )
    finally:
        llm.close()
    document = dict(result.to_json(), config=config.to_json())
    verb = "would store" if result.dry_run else "stored"
    lines = [
        f"{len(result.facts)} facts extracted, {result.stored} {verb}, {result.skipped} skipped"
        + ("" if result.dry_run else f"; the turn is conversation {result.conversation_id}")
    ]
    for fact in result.facts:
        shown = fact.trace_id or fact.verdict
        lines.append(f"{shown:<40}  {fact.category:<16} {fact.importance:.2f}  {fact.content}")
        if fact.reason and fact.verdict != "stored":
            lines.append(f"{'':<40}  ({fact.reason})")
    if result.error:
        lines.append(f"note: {result.error}")
    ctx.emit(document, lines)
    return 1 if result.failed else 0
