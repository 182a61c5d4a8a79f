"""Every `memgui` command — the command line's and the app's — is documented in docs/cli.md,
and it and each of its arguments has help text (as sqlite-utils' test_docs checks its own)."""

from __future__ import annotations

import argparse
import re

import pytest

import memgui.__main__  # noqa: F401 - the program: the command line and the app's commands
from memgui.cli.main import build_parser
from memgui.cli.registry import REGISTRY
from tests.support.paths import ROOT

CLI_DOC = ROOT / "docs" / "cli.md"
APP_COMMANDS = {"screenshot"}  # registered from memgui/ui/command_line.py


def documented_names(markdown: str) -> set[str]:
    """The names docs/cli.md describes: words of its headings, and the first word of each
    code span and each line of a code block (a synopsis: `link FROM TO KIND`)."""
    names: set[str] = set()
    in_block = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_block = not in_block
            continue
        if in_block:
            words = line.split()
            if words and words[0] not in ("$", "memgui", "python"):  # a console example
                names.add(words[0])
            continue
        if line.startswith("#"):
            names.update(word.strip(",`") for word in line.lstrip("#").split())
        names.update(span.split()[0] for span in re.findall(r"`([^`]+)`", line) if span.strip())
    return names


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_the_program_has_the_command_lines_commands_and_the_apps() -> None:
    assert set(REGISTRY) >= APP_COMMANDS
    assert {"add", "search", "import", "export", "serve-mcp"} <= set(REGISTRY)
    assert set(subparsers()) == set(REGISTRY)


def test_the_names_of_a_page_are_its_headings_and_synopses() -> None:
    page = "## Links\n\n`link FROM TO KIND` and `unlink`\n\n```\nembed [--status]\n"
    page += "$ memgui get\n```\n"
    assert documented_names(page) == {"Links", "link", "unlink", "embed"}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_command_is_documented_in_cli_md(name: str) -> None:
    assert name in documented_names(CLI_DOC.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_command_and_each_of_its_arguments_has_help(name: str) -> None:
    assert REGISTRY[name].help.strip()
    parser = subparsers()[name]
    silent = [
        action.option_strings[0] if action.option_strings else action.dest
        for action in parser._actions
        if not (action.help and action.help.strip())
    ]
    assert silent == []
