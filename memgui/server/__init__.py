"""memgui's servers: MCP over stdio (`mcp.py`) and the REST API (`rest.py`), thin shells
over `memgui.core.tools`. Only constants live here: the `memgui` command reads them while it
builds its parser, without loading a server."""

PROFILES = ("agent-memory", "agentos")  # memgui.core.tools.PROFILES, named without loading it
DEFAULT_PROFILE = "agent-memory"
DEFAULT_REST_ADDR = "127.0.0.1:7437"
