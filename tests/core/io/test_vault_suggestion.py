"""A folder of notes that link with [[wikilinks]] but has no .obsidian folder is offered as
an Obsidian vault: read as Markdown, its plan suggests the Obsidian reader."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.io import plan
from memgui.core.io.detect import looks_like_vault
from memgui.core.progress import run_to_end


def notes(folder, texts):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_wikilinks_without_an_obsidian_folder_suggest_a_vault(tmp_path):
    vault = notes(
        tmp_path / "vault",
        {"a.md": "See [[b]] and [[c|the third]].", "b.md": "Back to [[a]].", "c.md": "plain"},
    )
    blog = notes(
        tmp_path / "blog",
        {"post.md": "Run `[[ -f x ]] && echo yes` in bash.", "other.md": "No links [here](x)."},
    )
    assert looks_like_vault(vault)
    assert not looks_like_vault(blog)
    (vault / ".obsidian").mkdir()
    assert not looks_like_vault(vault)  # a vault already: detected as one
    (vault / ".obsidian").rmdir()
    with Brain.open(tmp_path / "b.sqlite") as brain:
        planned = run_to_end(plan(brain, vault))
        assert planned.format == "markdown" and planned.suggested_format == "obsidian"
        assert run_to_end(plan(brain, blog)).suggested_format is None
        chosen = run_to_end(plan(brain, vault, format="markdown"))
        assert chosen.suggested_format is None  # a format named by hand is not second-guessed
