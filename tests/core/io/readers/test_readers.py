"""The registry of readers: one per format, each called as `reader(path, options=...)`."""

from __future__ import annotations

import inspect

from memgui.core.io.detect import FORMATS
from memgui.core.io.options import ImportOptions
from memgui.core.io.readers import READERS
from memgui.core.io.records import TRACE, ImportRecord
from tests.support.paths import FIXTURES


def traces(events) -> list[ImportRecord]:
    return [e for e in events if isinstance(e, ImportRecord) and e.kind == TRACE]


def ids(events) -> list[str]:
    return [record.fields["id"] for record in traces(events)]


def test_every_format_has_a_reader_taking_import_options() -> None:
    assert set(READERS) == set(FORMATS)
    for reader in READERS.values():
        options = inspect.signature(reader).parameters["options"]
        assert options.kind is inspect.Parameter.KEYWORD_ONLY
        assert options.default is None


def test_chatgpt_ids_are_those_of_the_brain_the_options_name() -> None:
    source = FIXTURES / "chatgpt" / "branching.json"
    read = READERS["chatgpt"]
    alpha = ids(read(source, options=ImportOptions(target_brain_id="alpha")))
    beta = ids(read(source, options=ImportOptions(target_brain_id="beta")))
    assert alpha and len(alpha) == len(beta) and not set(alpha) & set(beta)
    assert alpha == ids(read(source, brain_id="alpha"))


def test_the_csv_reader_takes_its_column_from_the_options(tmp_path) -> None:
    source = tmp_path / "notes.csv"
    source.write_text("text,tags\nfrom the text column,a\n", encoding="utf-8")
    records = traces(READERS["csv"](source, options=ImportOptions(content_column="text")))
    assert [r.fields["content"] for r in records] == ["from the text column"]
