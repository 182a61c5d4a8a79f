"""`make bench` runs tests/bench/run_all.py, and that runs every benchmark there is."""

from __future__ import annotations

import pytest

from tests.bench import run_all
from tests.support.paths import ROOT, TESTS


def test_every_benchmark_is_in_the_runner_and_every_name_there_is_a_benchmark() -> None:
    modules = {path.stem for path in (TESTS / "bench").glob("bench_*.py")}
    assert modules == set(run_all.BENCHMARKS)


def test_make_bench_runs_the_runner() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    assert "-m tests.bench.run_all" in recipe
    assert (TESTS / "bench" / "run_all.py").is_file()


def test_the_runner_lists_what_it_would_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_all.main(["--list", "--only", "bench_core", "bench_ui"]) == 0
    assert capsys.readouterr().out.split() == ["bench_core", "bench_ui"]
