"""The type check of `make test`: mypy on the whole package, against a baseline that only shrinks.

mypy runs with the settings in pyproject.toml (`[tool.mypy]`: strict, every module of
memgui). Each error is reduced to `path: [code] message` — without its line number, so an
edit above an error does not make it new — and the errors are compared, as a multiset, with
the lines of `mypy-baseline.txt` beside this file:

- an error the baseline does not list fails the check: a module with no line there (every
  new module) is held to the whole of the settings;
- a listed error mypy no longer finds fails it too, until its line is removed
  (`--prune` removes them), so the list only ever gets shorter;
- only the UI may have lines there (`tests/test_type_baseline.py`).

    python -m tests.support.type_baseline            # the check (make test, make check)
    python -m tests.support.type_baseline --prune    # drop the lines of fixed errors
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from tests.support.paths import ROOT

BASELINE = ROOT / "tests" / "support" / "mypy-baseline.txt"
# "memgui/ui/x.py:12: error: Message  [code]"; notes and the summary are not errors.
_ERROR = re.compile(
    r"^(?P<path>[^:\s]+\.pyi?):\d+(?::\d+)?: error: (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$"
)
_ON_LINE = re.compile(r"\bline \d+\b")  # "already defined on line 12" moves with the code


def baseline_lines(mypy_output: str) -> list[str]:
    """Each error of mypy's output as a baseline line, in order."""
    lines = []
    for raw in mypy_output.splitlines():
        match = _ERROR.match(raw.strip())
        if match is None:
            continue
        message = _ON_LINE.sub("line N", match["message"])
        lines.append(f"{match['path']}: [{match['code'] or 'misc'}] {message}")
    return lines


@dataclass(frozen=True)
class Verdict:
    new: list[str]  # errors the baseline does not list
    fixed: list[str]  # listed errors mypy no longer reports

    @property
    def passed(self) -> bool:
        return not self.new and not self.fixed


def compare(found: Iterable[str], listed: Iterable[str]) -> Verdict:
    """The errors found against the baseline, each counted as often as it occurs."""
    found_count, listed_count = Counter(found), Counter(listed)
    return Verdict(
        new=sorted((found_count - listed_count).elements()),
        fixed=sorted((listed_count - found_count).elements()),
    )


def read_baseline() -> list[str]:
    text = BASELINE.read_text(encoding="utf-8") if BASELINE.exists() else ""
    return [line for line in text.splitlines() if line and not line.startswith("#")]


HEADER = (
    "# The mypy errors left to fix (tests/support/type_baseline.py); only the UI may have some.\n"
    "# Lines only ever go: fix an error, then `python -m tests.support.type_baseline --prune`.\n"
)


def write_baseline(lines: Iterable[str]) -> None:
    BASELINE.write_text(HEADER + "".join(f"{line}\n" for line in sorted(lines)), "utf-8")


def run_mypy() -> tuple[str, int]:
    """mypy's report on the package (settings from pyproject.toml) and its exit status."""
    from mypy import api

    os.chdir(ROOT)  # the settings name the package by its path from the project
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    if status not in (0, 1):  # 2: mypy itself failed (a syntax error, a bad setting)
        raise SystemExit(f"mypy failed:\n{stdout}{stderr}")
    return stdout, status


def main(argv: list[str]) -> int:
    prune = "--prune" in argv
    output, _status = run_mypy()
    found = baseline_lines(output)
    listed = read_baseline()
    verdict = compare(found, listed)
    if prune and verdict.fixed:
        write_baseline((Counter(listed) & Counter(found)).elements())
        print(f"type check: {len(verdict.fixed)} fixed errors removed from {BASELINE.name}")
        verdict = Verdict(verdict.new, [])
    if verdict.new:
        new = Counter(verdict.new)
        print("type check: errors that are not in the baseline:")
        for raw in output.splitlines():
            for line in baseline_lines(raw):
                if new[line] > 0:
                    print(f"  {raw}")
    if verdict.fixed:
        print(
            f"type check: {len(verdict.fixed)} errors of the baseline are fixed; remove their "
            "lines with `python -m tests.support.type_baseline --prune`:"
        )
        for line in verdict.fixed:
            print(f"  {line}")
    if verdict.passed:
        print(f"type check: passed ({len(found)} known errors left, none new)")
    return 0 if verdict.passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
