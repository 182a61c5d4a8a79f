"""Records refused for one reason, fixed the way a person fixed one of them."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.io import fix_alike, fix_changes, plan, revalidate
from memgui.core.progress import run_to_end


def test_the_others_get_the_same_field_changes_and_their_own_text(tmp_path):
    folder = tmp_path / "vault"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / f"{name}.md").write_text(f"---\ncreated: {{{{date}}}}\n---\nNote {name}\n")
    with Brain.open(tmp_path / "b.sqlite") as brain:
        planned = run_to_end(plan(brain, folder))
        refused = [i for i, r in enumerate(planned.records) if r.verdict == "refused"]
        assert len(refused) == 3
        first, *others = refused
        before = dict(planned.records[first].fields)
        planned.records[first].fields = {**before, "content": "Note a, fixed", "tags": ["t"]}
        assert revalidate(brain, planned, first).verdict == "new"
        changes = fix_changes(before, planned.records[first].fields)
        assert changes == {"tags": ["t"]}  # the text stays each record's own
        texts = {i: f"own text {i}" for i in others}
        counts = run_to_end(
            fix_alike(brain, planned, others, changes, lambda r: texts[planned.records.index(r)])
        )
        assert counts == (2, 0)
        for i in others:
            record = planned.records[i]
            assert record.verdict == "new"
            assert record.fields["tags"] == ["t"] and record.fields["content"] == texts[i]
