"""Every agent operation as one tool with its JSON Schema, validated once, here.

    from memgui.core.tools import ToolContext, call, profile

    tools = profile("agent-memory")            # or "agentos" (rehydrate=True adds one more)
    result = call(ToolContext(brain, actor="rest"), tools, "memory_store",
                  {"content": "…", "type": "DECISION"})
    result.data                                # {"id": "mt_…"}

The MCP server, the REST API and any other caller go through `call`: the same arguments are
accepted and refused with the same messages everywhere (docs/agents.md).
"""

from __future__ import annotations

from memgui.core.tools import agent_memory, agentos
from memgui.core.tools.params import ParameterError
from memgui.core.tools.registry import (
    Profile,
    Tool,
    ToolContext,
    ToolResult,
    UnknownTool,
    call,
)

PROFILES = ("agent-memory", "agentos")  # memgui.server names them too, for the CLI's parser
DEFAULT_PROFILE = "agent-memory"

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "ParameterError",
    "Profile",
    "Tool",
    "ToolContext",
    "ToolResult",
    "UnknownTool",
    "call",
    "profile",
]


def profile(name: str = DEFAULT_PROFILE, *, rehydrate: bool = False) -> Profile:
    """The tools of profile `name`; `rehydrate` adds agentos's opt-in `rehydrate_memory`."""
    if name == "agent-memory":
        return agent_memory.profile()
    if name == "agentos":
        return agentos.profile(rehydrate=rehydrate)
    from memgui.core.errors import InvalidArgument

    raise InvalidArgument("profile", f"must be one of {', '.join(PROFILES)} (got {name!r})", name)
