"""The fuzz suite's summary: how many cases each format ran, how long, how they ended."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis.configuration import set_hypothesis_home_dir

from tests.support.fuzz.harness import CASES, LONG_RUN, TALLIES

# Hypothesis keeps caches in `.hypothesis` of the current folder: not in the project.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "memgui-hypothesis")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TALLIES:
        return
    run = "a longer run, from a random seed" if LONG_RUN else "a fixed seed"
    terminalreporter.section(f"fuzzing the importers ({CASES} cases a format, {run})")
    total_cases, total_seconds = 0, 0.0
    for fmt, tally in sorted(TALLIES.items()):
        total_cases += tally.cases
        total_seconds += tally.seconds
        ends = ", ".join(f"{count} {outcome}" for outcome, count in tally.outcomes.most_common())
        terminalreporter.write_line(
            f"{fmt:>9}: {tally.cases:>5} cases in {tally.seconds:6.1f} s, "
            f"peak memory +{tally.peak_growth / 2**20:4.0f} MiB; {ends}"
        )
    terminalreporter.write_line(f"{'all':>9}: {total_cases:>5} cases in {total_seconds:6.1f} s")
