"""YAML front matter that would make the reader work without end is refused, note by note."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from memgui.core.brain import Brain
from memgui.core.io.readers.front_matter_yaml import MAX_FRONT_MATTER_CHARS, MAX_FRONT_MATTER_DEPTH
from memgui.core.io.records import NEW, REFUSED
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.support.planning import plan_in_thread, traces_by_file

# libyaml stops at 1,000 levels itself; the Python parser's stack gives out first.
TOO_DEEP_FOR_THE_PARSER = (
    "front matter is not valid YAML: exceeded maximum nesting depth"
    if yaml.__with_libyaml__
    else f"front matter is nested more than {MAX_FRONT_MATTER_DEPTH} deep"
)


def alias_bomb(levels: int) -> list[str]:
    """`levels` levels of nine aliases each: 9**levels strings once expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        prev, name = chr(96 + level), chr(97 + level)
        lines.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    return lines


def note(folder: Path, name: str, front: list[str], body: str = "body text of the note") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = "---\n" + "\n".join(front) + "\n---\n" + body + "\n"
    (folder / name).write_text(text, encoding="utf-8")


def nested(depth: int) -> str:
    return "x: " + "[" * depth + "]" * depth


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    (folder / ".obsidian").mkdir(parents=True)
    note(folder, "ok.md", ["type: semantic"], "a normal note")
    return folder


@pytest.mark.parametrize("fmt", ["markdown", "obsidian"])
@pytest.mark.parametrize(
    ("front", "reason"),
    [
        (
            alias_bomb(9),  # 372 bytes; it hung the import
            f"front matter holds more than {MAX_FRONT_MATTER_CHARS:,} characters once its "
            "aliases are expanded",
        ),
        (
            alias_bomb(6),  # 267 bytes; it stored 7.4 MB
            f"front matter holds more than {MAX_FRONT_MATTER_CHARS:,} characters once its "
            "aliases are expanded",
        ),
        (
            ["a: &a [*a]"],  # RecursionError crashed the whole import
            "front matter refers to itself: the value an anchor names on line 1 holds an alias "
            "of it",
        ),
        (
            ["ok: 1", "a: &a", "  <<: *a"],  # the same through a merge key
            "front matter refers to itself: the value an anchor names on line 2 holds an alias "
            "of it",
        ),
        ([nested(500)], f"front matter is nested more than {MAX_FRONT_MATTER_DEPTH} deep"),
        ([nested(5000)], TOO_DEEP_FOR_THE_PARSER),
        (
            ["b: &b " + "[" * 20 + "]" * 20, "c: " + "[" * 20 + "*b" + "]" * 20],  # through one
            f"front matter is nested more than {MAX_FRONT_MATTER_DEPTH} deep",
        ),
        (
            ["x: " + "y" * MAX_FRONT_MATTER_CHARS],
            f"front matter is {MAX_FRONT_MATTER_CHARS + 4:,} characters; at most "
            f"{MAX_FRONT_MATTER_CHARS:,} are read",
        ),
    ],
    ids=[
        "bomb-9",
        "bomb-6",
        "self-alias",
        "self-merge",
        "deep-500",
        "deep-5000",
        "deep-alias",
        "big",
    ],
)
def test_a_front_matter_past_a_bound_refuses_its_note_alone(
    vault: Path, brain_path: Path, fmt: str, front: list[str], reason: str
) -> None:
    note(vault, "hostile.md", front)
    the_plan = plan_in_thread(brain_path, vault, format=fmt)
    read = traces_by_file(the_plan)
    assert read["ok.md"].verdict == NEW
    hostile = read["hostile.md"]
    assert (hostile.verdict, hostile.problem_field, hostile.reason) == (
        REFUSED,
        "front_matter",
        reason,
    )


def test_front_matter_within_the_bounds_is_kept(vault: Path, brain_path: Path) -> None:
    inner = "[" * (MAX_FRONT_MATTER_DEPTH - 1) + "]" * (MAX_FRONT_MATTER_DEPTH - 1)
    note(vault, "deep.md", [f"x: {inner}"], "as deep as is read")
    note(vault, "aliases.md", alias_bomb(3), "729 strings through aliases")
    the_plan = plan_in_thread(brain_path, vault, format="markdown")
    read = traces_by_file(the_plan)
    assert read["deep.md"].verdict == NEW and read["aliases.md"].verdict == NEW
    expanded = read["aliases.md"].fields["metadata"]["front_matter"]["c"]
    assert len(expanded) == 9 and expanded[0][0] == ["lol"] * 9
    with Brain.open(brain_path) as brain:
        result = run_to_end(commit(brain, the_plan))
    assert result.imported == 3 and not result.errors


def test_gsd_state_front_matter_never_stops_the_read(tmp_path: Path, brain_path: Path) -> None:
    state = tmp_path / "STATE.md"
    front = ["gsd_state_version: 1.0", "a: &a [*a]", *alias_bomb(9)[1:]]
    body = "# Project State\n\n## Accumulated Context\n\n### Decisions\n\n- a decision"
    state.write_text("---\n" + "\n".join(front) + "\n---\n" + body + "\n")
    the_plan = plan_in_thread(brain_path, state, format="gsd")
    assert [(r.verdict, r.fields["content"]) for r in the_plan.records] == [(NEW, "a decision")]
