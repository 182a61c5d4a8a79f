"""Tools, profiles and the one entry point every transport calls: `call`.

A tool is a name, a short description, its parameters (`params.Param`, which give both the
JSON Schema and the argument reader) and a function over the brain. A profile is the set of
tools one kind of agent expects (`agent-memory`, `agentos`). The MCP server, the REST API
and any other caller go through `call`, so they accept and refuse the same arguments with
the same messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument
from memgui.core.model import Changes
from memgui.core.tools.params import Args, Param, input_schema, read_params

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.shared_brain import SharedBrain


@dataclass(frozen=True)
class ToolResult:
    """What a tool answers: a JSON value, and how a transport should frame it."""

    data: Any
    text: str | None = None  # the text an MCP client reads, when not `data` as JSON
    found: bool = True  # False: a clean not-found (a normal result; REST answers 404)
    created: bool = False  # a new memory (REST answers 201)
    next_cursor: str | None = None  # a page with more after it
    # Bookkeeping the answer does not wait for (a search's recall), run after it is sent.
    after: Callable[[], None] | None = field(default=None, compare=False, repr=False)
    # What a write changed (the core's return); None for a read or a write that found nothing.
    changes: Changes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ToolContext:
    """The brain a call works on and who calls (`mcp:<client>`, `rest`): every write the
    call makes is journaled under this actor, one journal batch per write. A tool that
    needs what only a file serves yet asks for it with `shared.file_brain`."""

    brain: Brain | SharedBrain
    actor: str
    # How a search ranks: "auto" (by meaning too, when the brain has vectors and Ollama
    # answers), or "keyword" when the caller knows Ollama is down right now.
    search_mode: str = "auto"
    # The chat model a tool may ask (memory_reflect's derive step): core.llm.OllamaChat.
    llm: Any = None


Runner = Callable[[ToolContext, Args], ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    params: tuple[Param, ...]
    run: Runner
    writes: bool = False
    schema: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema", input_schema(self.params))

    def listing(self) -> dict[str, Any]:
        """The tool as `tools/list` shows it."""
        return {"name": self.name, "description": self.description, "inputSchema": self.schema}


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    tools: Mapping[str, Tool]

    def listing(self) -> list[dict[str, Any]]:
        return [tool.listing() for tool in self.tools.values()]


class UnknownTool(InvalidArgument):
    def __init__(self, name: object, profile: Profile) -> None:
        have = ", ".join(profile.tools)
        super().__init__(
            "name", f"names no tool of profile {profile.name} (got {name!r}; it has {have})", name
        )


def call(
    ctx: ToolContext, profile: Profile, name: object, arguments: object, *, defer: bool = False
) -> ToolResult:
    """Run one tool: check its arguments, then do what it does (one journal batch per write).

    Raises `InvalidArgument` (its subclass `ParameterError` for arguments of the wrong
    shape) for a refused call, in which case nothing was written; `Conflict` for a
    compare-and-set that lost; other core errors as the core raises them. With `defer`,
    the result's `after` is left for the caller to run once it has answered.
    """
    tool = profile.tools.get(name) if isinstance(name, str) else None
    if tool is None:
        raise UnknownTool(name, profile)
    result = tool.run(ctx, read_params(tool.params, arguments))
    if not defer and result.after is not None:
        result.after()
    return result


def make_profile(name: str, description: str, tools: list[Tool]) -> Profile:
    return Profile(name, description, {tool.name: tool for tool in tools})
