"""Bad input for every `memgui` command: the exit code, a message naming what was wrong, and
nothing written to the brain."""

from __future__ import annotations

import argparse
import shutil
import uuid
from pathlib import Path

import apsw
import pytest

from memgui.__main__ import main
from memgui.cli.main import build_parser
from memgui.cli.registry import REGISTRY
from memgui.core.brain import Brain
from memgui.core.shared_brain import SharedBrain
from tests.support.cli import add, isolate_user_dirs, run_cli, snapshot
from tests.support.postgres import PostgresServer


@pytest.fixture(autouse=True)
def user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_user_dirs(tmp_path, monkeypatch)


USAGE, NOT_FOUND, CONFLICT = 2, 3, 4
LIMIT_MESSAGE = "invalid argument: limit must be between 1 and 200 (got {})"
TTL_MESSAGE = "invalid argument: ttl_secs must be between 1 and 3155760000 (got {})"
INT_MESSAGE = "invalid argument: {} must be an integer (got '{}')"
ID_MESSAGE = "invalid argument: {} must be a non-empty trace id (got '')"
# Python reads the invalid UTF-8 byte 0xff in argv as the lone surrogate U+DCFF.
BAD = "bad\udcff"
UNICODE_MESSAGE = "invalid argument: {} must be valid Unicode text (got 'bad\\udcff')"

# (argv with {a}/{b}/{gone} standing for trace ids, exit code, words stderr must hold)
REJECTIONS: list[tuple[list[str], int, list[str]]] = [
    # add
    (["add"], USAGE, ["content"]),
    (["add", ""], USAGE, ["content", "empty"]),
    (["add", "   "], USAGE, ["content must not be empty (got '   ')"]),
    (["add", "x", "--type", "bogus"], USAGE, ["type", "bogus", "episodic"]),
    (["add", "x", "--scope", "bogus"], USAGE, ["scope", "bogus", "organization"]),
    (["add", "x", "--category", "bogus"], USAGE, ["category", "bogus", "DECISION"]),
    (["add", "x", "--category", "decision"], USAGE, ["category", "decision"]),
    (["add", "x", "--tag", ""], USAGE, ["tags[0]", "non-empty"]),
    (["add", "x", "--tag", "ok", "--tag", " "], USAGE, ["tags[1]"]),
    (["add", BAD], USAGE, [UNICODE_MESSAGE.format("content")]),
    (["add", "x", "--tag", BAD], USAGE, [UNICODE_MESSAGE.format("tags[0]")]),
    (["add", "x", "--scope-id", BAD], USAGE, [UNICODE_MESSAGE.format("scope_id")]),
    (["add", "x", "--ttl-secs", "0"], USAGE, [TTL_MESSAGE.format(0)]),
    (["add", "x", "--ttl-secs", "-1"], USAGE, [TTL_MESSAGE.format(-1)]),
    (["add", "x", "--ttl-secs", "3155760001"], USAGE, [TTL_MESSAGE.format(3155760001)]),
    (["add", "x", "--ttl-secs", "soon"], USAGE, [INT_MESSAGE.format("ttl_secs", "soon")]),
    (["add", "x", "--ttl-secs", "1.5"], USAGE, [INT_MESSAGE.format("ttl_secs", "1.5")]),
    (["add", "x", "--bogus-option"], USAGE, ["unrecognized arguments", "--bogus-option"]),
    # get, forget, restore, purge, history
    (["get"], USAGE, ["id"]),
    (["get", "mt_nope"], NOT_FOUND, ["not found", "mt_nope"]),
    (["forget"], USAGE, ["id"]),
    (["forget", "mt_nope"], NOT_FOUND, ["mt_nope"]),
    (["restore"], USAGE, ["id"]),
    (["restore", "mt_nope"], NOT_FOUND, ["mt_nope"]),
    (["purge"], USAGE, ["id"]),
    (["purge", "mt_nope"], NOT_FOUND, ["mt_nope"]),
    (["history"], USAGE, ["id"]),
    (["history", "mt_nope"], NOT_FOUND, ["mt_nope"]),
    # an empty id is invalid input for every command that takes one, never a missing id
    (["get", ""], USAGE, [ID_MESSAGE.format("id")]),
    (["forget", ""], USAGE, [ID_MESSAGE.format("id")]),
    (["restore", ""], USAGE, [ID_MESSAGE.format("id")]),
    (["purge", ""], USAGE, [ID_MESSAGE.format("id")]),
    (["history", ""], USAGE, [ID_MESSAGE.format("id")]),
    (["update", "", "--content", "x"], USAGE, [ID_MESSAGE.format("id")]),
    (["merge", "{a}", ""], USAGE, [ID_MESSAGE.format("ids")]),
    (["link", "", "{a}", "relates_to"], USAGE, [ID_MESSAGE.format("from_id")]),
    (["unlink", "{a}", "", "relates_to"], USAGE, [ID_MESSAGE.format("to_id")]),
    (["neighbours", ""], USAGE, ["id must be a non-empty trace or node id (got '')"]),
    (["similar", ""], USAGE, [ID_MESSAGE.format("id")]),
    (["revert", ""], USAGE, ["batch must be a non-empty journal batch id (got '')"]),
    # list
    (["list", "--limit", "0"], USAGE, [LIMIT_MESSAGE.format(0)]),
    (["list", "--limit", "201"], USAGE, [LIMIT_MESSAGE.format(201)]),
    (["list", "--limit", "-1"], USAGE, [LIMIT_MESSAGE.format(-1)]),
    (["list", "--limit", "many"], USAGE, [INT_MESSAGE.format("limit", "many")]),
    (["list", "--offset", "1e3"], USAGE, [INT_MESSAGE.format("offset", "1e3")]),
    (["list", "--type", "bogus"], USAGE, ["type", "bogus"]),
    (["list", "--scope", "bogus"], USAGE, ["scope", "bogus"]),
    (["list", "--category", "bogus"], USAGE, ["category", "bogus"]),
    (["list", "--tag", ""], USAGE, ["tag must be a non-empty string (got '')"]),
    (["list", "--deleted", "--include-deleted"], USAGE, ["not allowed with"]),
    (["list", "--offset", "-1"], USAGE, ["offset", "-1"]),
    (["list", "extra"], USAGE, ["unrecognized arguments", "extra"]),
    # search
    (["search"], USAGE, ["query"]),
    (["search", BAD], USAGE, [UNICODE_MESSAGE.format("query")]),
    (["search", "x", "--tag", BAD], USAGE, [UNICODE_MESSAGE.format("tag")]),
    (["list", "--scope-id", BAD], USAGE, [UNICODE_MESSAGE.format("scope_id")]),
    (["get", BAD], USAGE, [UNICODE_MESSAGE.format("id")]),
    (["search", "x", "--limit", "0"], USAGE, [LIMIT_MESSAGE.format(0)]),
    (["search", "x", "--limit", "201"], USAGE, [LIMIT_MESSAGE.format(201)]),
    (["search", "x", "--limit", "-1"], USAGE, [LIMIT_MESSAGE.format(-1)]),
    (["search", "x", "--mode", "fuzzy"], USAGE, ["--mode", "fuzzy"]),
    (["search", "x", "--type", "bogus"], USAGE, ["type", "bogus"]),
    (["search", "x", "--scope", "bogus"], USAGE, ["scope", "bogus"]),
    (["search", "x", "--category", "bogus"], USAGE, ["category", "bogus"]),
    (["search", "x", "--tag", ""], USAGE, ["tag must be a non-empty string (got '')"]),
    (["search", "x", "--limit", "ten"], USAGE, [INT_MESSAGE.format("limit", "ten")]),
    # update
    (["update"], USAGE, ["id"]),
    (["update", "{a}"], USAGE, ["patch", "at least one field"]),
    (["update", "mt_nope", "--content", "x"], NOT_FOUND, ["mt_nope"]),
    (["update", "{a}", "--content", ""], USAGE, ["content", "empty"]),
    (["update", "{a}", "--content", "  "], USAGE, ["content must not be empty (got '  ')"]),
    (["update", "{a}", "--type", "bogus"], USAGE, ["type", "bogus"]),
    (["update", "{a}", "--scope", "bogus"], USAGE, ["scope", "bogus"]),
    (["update", "{a}", "--category", "bogus"], USAGE, ["category", "bogus"]),
    (["update", "{a}", "--tag", ""], USAGE, ["tags[0]"]),
    (["update", "{a}", "--ttl-secs", "0"], USAGE, [TTL_MESSAGE.format(0)]),
    (["update", "{a}", "--ttl-secs", "3155760001"], USAGE, [TTL_MESSAGE.format(3155760001)]),
    (["update", "{a}", "--ttl-secs", "5", "--no-ttl"], USAGE, ["not allowed with"]),
    (["update", "{a}", "--tag", "x", "--clear-tags"], USAGE, ["not allowed with"]),
    (["update", "{a}", "--category", "TODO", "--no-category"], USAGE, ["not allowed with"]),
    (
        ["update", "{a}", "--content", "x", "--expect-version", "v1"],
        USAGE,
        [INT_MESSAGE.format("expect_version", "v1")],
    ),
    (["update", "{a}", "--ttl-secs", "x"], USAGE, [INT_MESSAGE.format("ttl_secs", "x")]),
    (["update", "{a}", "--content", "x", "--expect-version", "99"], CONFLICT, ["{a}", "99"]),
    (
        ["update", "{a}", "--content", "x", "--expect-version", "-1"],
        USAGE,
        ["expect_version must be 0 or more (got -1)"],
    ),
    # merge
    (["merge"], USAGE, ["ID"]),
    (["merge", "{a}"], USAGE, ["ids", "at least 2"]),
    (["merge", "{a}", "{a}"], USAGE, ["ids", "at least 2"]),
    (["merge", "{a}", "mt_nope"], NOT_FOUND, ["mt_nope"]),
    (["merge", "{a}", "{gone}"], USAGE, ["live", "{gone}"]),
    (["merge", "{a}", "{b}", "--content", ""], USAGE, ["content"]),
    (["merge", "{a}", "{b}", "--content", "  "], USAGE, ["content must not be empty (got '  ')"]),
    # link, unlink, neighbours
    (["link"], USAGE, ["FROM"]),
    (["link", "{a}", "{b}"], USAGE, ["KIND"]),
    (["link", "{a}", "{a}", "relates_to"], USAGE, ["{a}"]),
    (["link", "{a}", "{b}", "likes"], USAGE, ["kind", "likes", "relates_to"]),
    (["link", "{a}", "mt_nope", "relates_to"], NOT_FOUND, ["missing_id", "mt_nope"]),
    (["link", "mt_nope", "{a}", "supersedes"], NOT_FOUND, ["mt_nope"]),
    (["unlink", "{a}"], USAGE, ["TO"]),
    (["unlink", "{a}", "{b}", "likes"], USAGE, ["kind", "likes"]),
    (["unlink", "{a}", "mt_nope", "relates_to"], NOT_FOUND, ["mt_nope"]),
    (["neighbours"], USAGE, ["id"]),
    (["neighbours", "mt_nope"], NOT_FOUND, ["mt_nope"]),
    (["neighbours", "{a}", "--depth", "0"], USAGE, ["depth", "between 1 and 3", "0"]),
    (["neighbours", "{a}", "--depth", "4"], USAGE, ["depth", "between 1 and 3", "4"]),
    (["neighbours", "{a}", "--depth", "deep"], USAGE, [INT_MESSAGE.format("depth", "deep")]),
    (["neighbours", "{a}", "--limit", "0"], USAGE, ["limit", "between 1 and 5000", "0"]),
    (["neighbours", "{a}", "--limit", "5001"], USAGE, ["limit", "between 1 and 5000", "5001"]),
    (["neighbours", "{a}", "--limit", "x"], USAGE, [INT_MESSAGE.format("limit", "x")]),
    # similar
    (["similar", "{a}", "--limit", "abc"], USAGE, [INT_MESSAGE.format("limit", "abc")]),
    # journal
    (["revert"], USAGE, ["BATCH"]),
    (["revert", "b_nope"], NOT_FOUND, ["b_nope"]),
    # sweep, info
    (["sweep", "now"], USAGE, ["unrecognized arguments", "now"]),
    (["info", "all"], USAGE, ["unrecognized arguments", "all"]),
    # scopes
    (["scope-delete"], USAGE, ["SCOPE"]),
    (["scope-delete", "user"], USAGE, ["SCOPE_ID"]),
    (["scope-delete", "user", ""], USAGE, ["scope_id"]),
    (["scope-delete", "bogus", "u1"], USAGE, ["scope", "bogus"]),
    (["scope-delete", "user", "u1", "--user", ""], USAGE, ["user"]),
    (["scope-refile", "user", "u1"], USAGE, ["TO_ID"]),
    (["scope-refile", "user", "", "u2"], USAGE, ["scope_id"]),
    (["scope-refile", "user", "u1", ""], USAGE, ["scope_id"]),
    (["scope-refile", "bogus", "u1", "u2"], USAGE, ["scope", "bogus"]),
    # text that is not Unicode (invalid UTF-8 bytes in argv), wherever text goes in
    (["scope-delete", "user", "bad\udcff"], USAGE, ["scope_id must be valid Unicode"]),
    (["scope-delete", "user", "u1", "--user", "bad\udcff"], USAGE, ["user_id must be valid"]),
    (["scope-refile", "user", "u1", "bad\udcff"], USAGE, ["to_scope_id must be valid"]),
    (["export", "out.json", "--id", "bad\udcff"], USAGE, ["selection[0] must be valid"]),
    (["export", "bad\udcff.json"], USAGE, ["path must be valid Unicode"]),
    (["import", "nowhere.json", "--scope-id", "bad\udcff"], USAGE, ["scope_id must be valid"]),
    (["revert", "b_bad\udcff"], USAGE, ["must be valid Unicode"]),
    (["export", ""], USAGE, ["path must name a file or folder"]),
    (["import", ""], USAGE, ["path must name a file or folder"]),
    # screenshot (argument errors come before the app is needed)
    (["screenshot"], USAGE, ["BRAIN"]),
    (["screenshot", "a.sqlite", "b.png", "c.png"], USAGE, ["unrecognized arguments"]),
    (["screenshot", "out.png", "--size", "0x10"], USAGE, ["WIDTHxHEIGHT", "0x10"]),
    (["screenshot", "out.png", "--size", "big"], USAGE, ["WIDTHxHEIGHT", "big"]),
    (["screenshot", "out.png", "--size", "1x1"], USAGE, ["between 200x200 and 10000x10000"]),
    (["screenshot", "out.png", "--select", ""], USAGE, ["select must be a non-empty"]),
    (["screenshot", "out.png", "--import", "nowhere.json"], USAGE, ["import does not exist"]),
    # the command itself
    (["frobnicate"], USAGE, ["invalid choice", "frobnicate"]),
    (["--brain-id"], USAGE, ["--brain-id", "expected one argument"]),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A brain with two live traces (a, b) and a forgotten one (gone), made once."""
    path = tmp_path_factory.mktemp("template") / "brain.sqlite"
    with Brain.open(path, actor="cli") as brain:
        ids = {name: brain.add(f"trace {name}", scope_id="u1").id for name in "ab"}
        ids["gone"] = brain.add("trace gone").id
        brain.forget(ids["gone"])
    assert not Path(f"{path}-wal").exists()  # closing checkpointed: one file holds it all
    return path, ids


@pytest.fixture
def populated(template, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh copy of the template brain for one test."""
    source, ids = template
    brain = tmp_path / "brain.sqlite"
    shutil.copyfile(source, brain)
    return brain, ids


@pytest.mark.parametrize(
    ("argv", "code", "words"), REJECTIONS, ids=[" ".join(r[0]) or "-" for r in REJECTIONS]
)
def test_rejected_input_writes_nothing(capsys, populated, argv, code, words):
    brain, ids = populated
    before = snapshot(brain)
    argv = [arg.format(**ids) for arg in argv]
    result = run_cli(capsys, brain, *argv)
    assert result.code == code, result.err
    assert result.out == ""
    for word in words:
        assert word.format(**ids) in result.err
    assert "Traceback" not in result.err
    assert snapshot(brain) == before


# The rejections of the commands that work on a shared brain, and of no command at all.
SHARED_REJECTIONS = [
    r for r in REJECTIONS if r[0][0] not in REGISTRY or REGISTRY[r[0][0]].on_shared_brains
]


@pytest.fixture(scope="module")
def pg_database(pg_server: PostgresServer) -> str:
    """One database for the module; each test fills a brain id of its own."""
    return pg_server.create_database()


@pytest.fixture
def pg_populated(
    pg_server: PostgresServer, pg_database: str, request: pytest.FixtureRequest
) -> tuple[str, dict[str, str]]:
    """A new shared brain holding what the template file holds."""
    address = pg_server.address(pg_database, brain_id=f"b{uuid.uuid4().hex[:12]}")
    with SharedBrain.open(address, actor="cli") as brain:
        ids = {name: brain.add(f"trace {name}", scope_id="u1").id for name in "ab"}
        ids["gone"] = brain.add("trace gone").id
        brain.forget(ids["gone"])
    return address, ids


@pytest.mark.slow  # a real server
@pytest.mark.parametrize(
    ("argv", "code", "words"),
    SHARED_REJECTIONS,
    ids=[" ".join(r[0]) or "-" for r in SHARED_REJECTIONS],
)
def test_rejected_input_writes_nothing_on_postgres(capsys, pg_populated, argv, code, words):
    """The same refusals, by the same words, on a shared brain: nothing written there."""
    test_rejected_input_writes_nothing(capsys, pg_populated, argv, code, words)


def test_stale_expect_version_names_the_trace_and_both_versions(capsys, populated):
    brain, ids = populated
    fresh = run_cli(capsys, brain, "update", ids["a"], "--content", "v2", "--expect-version", "1")
    assert fresh.code == 0, fresh.err
    before = snapshot(brain)
    stale = run_cli(capsys, brain, "update", ids["a"], "--content", "v3", "--expect-version", "1")
    assert stale.code == CONFLICT
    assert f"conflict: trace {ids['a']} is at version 2, not 1" in stale.err
    assert snapshot(brain) == before


@pytest.mark.parametrize(
    "query", ['"unbalanced', "AND OR", "a AND", "(", ")(", "NEAR(", "*", "col:thing", "^x"]
)
def test_malformed_fts_query_is_handled(capsys, populated, query):
    brain, _ = populated
    result = run_cli(capsys, brain, "search", query)
    assert result.code in (0, USAGE), result.err
    assert "Traceback" not in result.err and "storage error" not in result.err
    if result.code == 0:
        assert isinstance(result.json()["results"], list)
    else:
        assert "query" in result.err


def test_fts_query_rewritten_still_finds_words(capsys, populated):
    brain, ids = populated
    result = run_cli(capsys, brain, "search", '"trace a')
    assert result.code == 0, result.err
    assert ids["a"] in [r["id"] for r in result.json()["results"]]


def _two_brain_file(capsys, tmp_path: Path) -> Path:
    brain = tmp_path / "shared.sqlite"
    add(capsys, brain, "in the first brain")
    conn = apsw.Connection(str(brain))
    conn.execute("INSERT INTO brain_meta SELECT 'team', key, value FROM brain_meta")
    conn.close()
    return brain


@pytest.mark.parametrize("argv", [["info"], ["list"], ["add", "x"], ["search", "x"]])
def test_several_brains_need_a_brain_id(capsys, tmp_path, argv):
    brain = _two_brain_file(capsys, tmp_path)
    before = snapshot(brain)
    result = run_cli(capsys, brain, *argv)
    assert result.code == USAGE
    assert "shared, team" in result.err and "--brain-id" in result.err
    assert snapshot(brain) == before


def test_unknown_brain_id_lists_the_ones_held(capsys, tmp_path):
    brain = _two_brain_file(capsys, tmp_path)
    before = snapshot(brain)
    result = run_cli(capsys, brain, "--brain-id", "nobody", "add", "x")
    assert result.code == USAGE
    assert "nobody" in result.err and "shared, team" in result.err
    assert snapshot(brain) == before


def test_argparse_usage_errors_go_to_stderr(capsys, tmp_path):
    code = main(["--brain", str(tmp_path / "b.sqlite"), "list", "--limit"])
    captured = capsys.readouterr()
    assert code == USAGE and captured.out == ""
    assert "usage: memgui list" in captured.err
    assert not (tmp_path / "b.sqlite").exists()  # rejected before the brain was opened


def test_no_option_keeps_argparse_int(capsys):
    """Every integer option of every command reports a bad value as `invalid argument`."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        plain = [a.dest for a in sub._actions if a.type is int]
        assert plain == [], f"{name}: {plain} would print argparse's usage block"


def test_bad_integer_is_one_line_without_usage(capsys, tmp_path):
    code = main(["--brain", str(tmp_path / "b.sqlite"), "list", "--limit", "abc"])
    captured = capsys.readouterr()
    assert code == USAGE and captured.out == ""
    assert captured.err == "memgui: invalid argument: limit must be an integer (got 'abc')\n"
    assert not (tmp_path / "b.sqlite").exists()  # rejected before the brain was opened


def test_help_exits_zero(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("add", "search", "scope-refile", "screenshot"):
        assert name in out


@pytest.mark.parametrize("brain_id", ["", "  ", "bad\udcff"])
def test_a_blank_or_broken_brain_id_is_refused_before_a_file_is_made(
    capsys, tmp_path: Path, brain_id: str
) -> None:
    path = tmp_path / "new.sqlite"
    code = main(["--brain", str(path), "--brain-id", brain_id, "add", "x"])
    assert code == 2 and "brain_id" in capsys.readouterr().err
    assert not path.exists()


def test_a_brain_path_that_is_a_folder_or_below_a_file_is_named(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "adir"
    folder.mkdir()
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    for path, words in (
        (folder, "is a folder, not a brain file"),
        (afile / "brain.sqlite", "is below"),
    ):
        code = main(["--brain", str(path), "info"])
        err = capsys.readouterr().err
        assert code == 2 and words in err and str(path) in err, err
    assert afile.read_text() == "mine" and list(folder.iterdir()) == []
