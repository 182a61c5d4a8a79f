"""Every importer, fed damaged copies of valid input: no uncaught exception, no hang, bounded
memory, and what a plan accepts the commit writes (see `harness.py`).

`make test` runs `harness.DEFAULT_CASES` cases a format from a fixed seed; set
`MEMGUI_FUZZ_CASES=N` for N cases a format from a random seed (a failure prints how to
reproduce it). The summary at the end of the run gives the counts and times.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.support.fuzz import seeds
from tests.support.fuzz.harness import CASES, LONG_RUN, CaseRunner, case_folder
from tests.support.fuzz.mutate import (
    DEEP,
    HUGE,
    ODD_NUMBERS,
    ODD_TEXTS,
    mutated_bytes,
    mutated_tree,
    to_json,
    utf8,
)

# pytest's own limit for a test (5 minutes), raised for a longer run: ~40 ms a case here.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(max(300, CASES // 5))]
FUZZ = settings(
    max_examples=CASES,
    derandomize=not LONG_RUN,
    database=None,  # nothing written into the project
    deadline=None,  # the harness has its own, for hangs; a slow machine is no failure
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


@pytest.fixture(scope="module")
def runners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, CaseRunner]]:
    made: dict[str, CaseRunner] = {}
    yield made
    for runner in made.values():
        runner.close()


def runner_for(
    runners: dict[str, CaseRunner], tmp: pytest.TempPathFactory, fmt: str, seed: Path
) -> CaseRunner:
    """The format's runner, on a brain that holds the seed's import (for duplicates)."""
    if fmt not in runners:
        base = tmp.mktemp(f"fuzz-{fmt}")
        brain_path = base / "brain.sqlite"
        with Brain.open(brain_path) as brain:
            run_to_end(
                commit(brain, run_to_end(plan(brain, seed, options=ImportOptions(format=fmt))))
            )
        runners[fmt] = CaseRunner(fmt, brain_path, case_folder(fmt))
    return runners[fmt]


def seed_folder(tmp: pytest.TempPathFactory, fmt: str, files: dict[str, bytes]) -> Path:
    folder = tmp.mktemp(f"seed-{fmt}")
    write_files(folder, files)
    return folder


# --- Markdown and Obsidian --------------------------------------------------------------


@st.composite
def vault(draw: st.DrawFn) -> dict[str, bytes]:
    files = seeds.notes()
    names = draw(st.lists(st.sampled_from(sorted(files)), min_size=1, max_size=2, unique=True))
    for name in names:
        files[name] = draw(mutated_bytes(files[name], seeds.NOTE_TOKENS))
    return files


@pytest.mark.parametrize("fmt", ["markdown", "obsidian"])
@FUZZ
@given(data=st.data())
def test_notes(
    runners: dict, tmp_path_factory: pytest.TempPathFactory, fmt: str, data: Any
) -> None:
    extra = {".obsidian/app.json": b"{}"} if fmt == "obsidian" else {}
    seed = (
        seed_folder(tmp_path_factory, fmt, {**seeds.notes(), **extra})
        if fmt not in runners
        else None
    )
    runner = runner_for(runners, tmp_path_factory, fmt, seed)  # type: ignore[arg-type]
    folder = runner.folder()
    write_files(folder, {**data.draw(vault()), **extra})
    runner.run(folder, dedup=data.draw(st.booleans()))


# --- GSD ----------------------------------------------------------------------------------


@FUZZ
@given(data=st.data())
def test_gsd(runners: dict, tmp_path_factory: pytest.TempPathFactory, data: Any) -> None:
    seed = None
    if "gsd" not in runners:
        seed = seed_folder(tmp_path_factory, "gsd", {".planning/STATE.md": seeds.state_file()})
        seed = seed / ".planning" / "STATE.md"
    runner = runner_for(runners, tmp_path_factory, "gsd", seed)  # type: ignore[arg-type]
    folder = runner.folder()
    state = data.draw(mutated_bytes(seeds.state_file(), seeds.STATE_TOKENS, most=4))
    write_files(folder, {".planning/STATE.md": state})
    runner.run(folder / ".planning" / "STATE.md", dedup=data.draw(st.booleans()))


# --- CSV ----------------------------------------------------------------------------------

csv_cells = st.one_of(
    st.sampled_from(ODD_TEXTS),
    st.text(max_size=30),
    st.sampled_from([str(n) for n in ODD_NUMBERS]),
    st.sampled_from([to_json(v) for v in DEEP]),
    st.sampled_from(['["a", 1]', "[]", '{"scopeId": 5}', '{"scopeId": "s"}', "null", '"x"']),
    st.sampled_from([h.text[:2000] for h in HUGE]),
)


@st.composite
def csv_file(draw: st.DrawFn) -> bytes:
    rows = seeds.csv_rows()
    for _ in range(draw(st.integers(1, 4))):
        row = draw(st.integers(0, len(rows) - 1))
        if not rows[row]:
            continue
        column = draw(st.integers(0, len(rows[row]) - 1))
        rows[row][column] = draw(csv_cells)
    data = utf8(seeds.csv_text(rows))
    return draw(mutated_bytes(data, seeds.CSV_TOKENS)) if draw(st.booleans()) else data


@FUZZ
@given(data=st.data())
def test_csv(runners: dict, tmp_path_factory: pytest.TempPathFactory, data: Any) -> None:
    seed = None
    if "csv" not in runners:
        seed = seed_folder(
            tmp_path_factory, "csv", {"traces.csv": utf8(seeds.csv_text(seeds.csv_rows()))}
        )
        seed = seed / "traces.csv"
    runner = runner_for(runners, tmp_path_factory, "csv", seed)  # type: ignore[arg-type]
    folder = runner.folder()
    write_files(folder, {"traces.csv": data.draw(csv_file())})
    runner.run(folder / "traces.csv", dedup=data.draw(st.booleans()))


# --- JSON-shaped formats: agent-memory JSONL, AgentOS JSON, ChatGPT -------------------------


def _json_case(draw: Any, tree: Any, tokens: list[bytes]) -> bytes:
    data = utf8(to_json(draw(mutated_tree(tree))))
    if draw(st.integers(0, 3)) == 0:  # mostly valid JSON, so the readers get past parsing
        data = draw(mutated_bytes(data, tokens))
    return data


def _jsonl_case(draw: Any) -> bytes:
    lines = draw(mutated_tree(seeds.jsonl_lines()))
    lines = lines if isinstance(lines, list) else [lines]
    data = utf8("\n".join(to_json(line) for line in lines))
    if draw(st.integers(0, 3)) == 0:
        data = draw(mutated_bytes(data, seeds.JSONL_TOKENS))
    return data


def _chatgpt_case(draw: Any) -> bytes:
    export: Any = seeds.chatgpt_export()
    shape = draw(st.sampled_from(["array", "array", "object", "one"]))
    export = (
        {"conversations": export} if shape == "object" else export[0] if shape == "one" else export
    )
    return _json_case(draw, export, seeds.JSON_TOKENS)


JSON_FORMATS = {
    "jsonl": (
        "export.jsonl",
        lambda: utf8("\n".join(to_json(x) for x in seeds.jsonl_lines())),
        _jsonl_case,
    ),
    "json": (
        "export.json",
        lambda: utf8(to_json(seeds.agentos_export())),
        lambda draw: _json_case(draw, seeds.agentos_export(), seeds.JSON_TOKENS),
    ),
    "chatgpt": ("conversations.json", lambda: utf8(to_json(seeds.chatgpt_export())), _chatgpt_case),
}


@pytest.mark.parametrize("fmt", sorted(JSON_FORMATS))
@FUZZ
@given(data=st.data())
def test_json_formats(
    runners: dict, tmp_path_factory: pytest.TempPathFactory, fmt: str, data: Any
) -> None:
    name, seed_bytes, case = JSON_FORMATS[fmt]
    seed = None
    if fmt not in runners:
        seed = seed_folder(tmp_path_factory, fmt, {name: seed_bytes()}) / name
    runner = runner_for(runners, tmp_path_factory, fmt, seed)  # type: ignore[arg-type]
    folder = runner.folder()
    write_files(folder, {name: case(data.draw)})
    runner.run(folder / name, dedup=data.draw(st.booleans()))


# --- AgentOS SQLite -----------------------------------------------------------------------

sqlite_values = st.one_of(
    st.none(),
    st.sampled_from([n for n in ODD_NUMBERS if isinstance(n, float) or -(2**63) <= n < 2**63]),
    st.sampled_from(ODD_TEXTS[:-1]).map(lambda t: t if "\ud800" not in t else b"\xed\xa0\x80"),
    st.sampled_from([to_json(v) for v in DEEP]),
    st.sampled_from(["[1, 2]", '{"a": 1}', '["t", ""]', "not json", '"x"', "[]", "{}"]),
    st.binary(max_size=12),
    st.sampled_from([b"\xff\xfe", b"\xc3"]).map(lambda b: ("text", b)),  # text that is not UTF-8
    st.just("y" * 200_000),
)


@st.composite
def sqlite_file(draw: st.DrawFn, seed: Path, cells: list[tuple[str, str, int]], into: Path) -> Path:
    path = into / "source.sqlite"
    shutil.copyfile(seed, path)
    connection = apsw.Connection(str(path))
    connection.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
    for _ in range(draw(st.integers(1, 3))):
        table, column, rowid = draw(st.sampled_from(cells))
        value = draw(sqlite_values)
        cast = "?"
        if isinstance(value, tuple):  # bytes stored as TEXT
            cast, value = "CAST(? AS TEXT)", value[1]
        try:
            connection.execute(
                f'UPDATE "{table}" SET "{column}" = {cast} WHERE rowid = ?', (value, rowid)
            )
        except apsw.ConstraintError:
            pass  # NOT NULL, a unique key: the file keeps its value
    connection.close()
    if draw(st.integers(0, 2)) == 0:  # damage the file itself
        data = bytearray(path.read_bytes())
        page = draw(st.integers(1, len(data) // 4096)) - 1
        at = page * 4096 + draw(st.integers(0, 4095))
        noise = draw(st.binary(min_size=1, max_size=16))
        data[at : at + len(noise)] = noise
        path.write_bytes(bytes(data))
    return path


@FUZZ
@given(data=st.data())
def test_sqlite(runners: dict, tmp_path_factory: pytest.TempPathFactory, data: Any) -> None:
    seed = seeds.sqlite_seed(tmp_path_factory.getbasetemp())
    runner = runner_for(runners, tmp_path_factory, "sqlite", seed)
    folder = runner.folder()
    source = data.draw(sqlite_file(seed, seeds.sqlite_cells(seed), folder))
    runner.run(source, dedup=data.draw(st.booleans()))
