"""The journal's actor for an MCP client: `mcp:` and the name it gave in `initialize`."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from memgui.server.mcp import client_actor


def initialized(name: object) -> SimpleNamespace:
    """What the SDK hands a handler: the session and the client's `initialize` params."""
    params = SimpleNamespace(client_info=SimpleNamespace(name=name))
    return SimpleNamespace(session=SimpleNamespace(client_params=params))


@pytest.mark.parametrize(
    ("name", "actor"),
    [
        ("claude-code", "mcp:claude-code"),
        ("Cursor Agent", "mcp:Cursor Agent"),
        ("  two\nlines\tand\x00nul  ", "mcp:two lines and nul"),  # one printable line
        ("x" * 300, "mcp:" + "x" * 64),  # bounded
        ("", "mcp:unknown"),
        ("\n\t", "mcp:unknown"),
        (None, "mcp:unknown"),
        (42, "mcp:unknown"),
    ],
)
def test_the_actor_names_the_client(name: object, actor: str) -> None:
    assert client_actor(initialized(name)) == actor


def test_a_client_that_sent_no_initialize_is_unknown() -> None:
    assert client_actor(SimpleNamespace(session=SimpleNamespace(client_params=None))) == (
        "mcp:unknown"
    )
