"""The type check's baseline (tests/support/type_baseline.py): new errors fail, fixed ones
must leave the list, a moved line is the same error, and only the UI may have errors listed."""

from __future__ import annotations

from tests.support import type_baseline as tb

OUTPUT = """\
memgui/ui/a.py:12: error: Item "None" of "X | None" has no attribute "y"  [union-attr]
memgui/ui/a.py:12: note: See https://mypy.rtfd.io
memgui/ui/b.py:3:5: error: Name "n" already defined on line 2  [no-redef]
memgui/ui/b.py:9: error: Something without a code
Found 3 errors in 2 files (checked 2 source files)
"""


def test_each_error_is_its_file_code_and_message_without_its_line() -> None:
    assert tb.baseline_lines(OUTPUT) == [
        'memgui/ui/a.py: [union-attr] Item "None" of "X | None" has no attribute "y"',
        'memgui/ui/b.py: [no-redef] Name "n" already defined on line N',
        "memgui/ui/b.py: [misc] Something without a code",
    ]


def test_an_error_moved_to_another_line_is_still_the_listed_one() -> None:
    listed = tb.baseline_lines(OUTPUT)
    moved = tb.baseline_lines(OUTPUT.replace(":12:", ":40:").replace(":3:5:", ":7:1:"))
    assert tb.compare(moved, listed) == tb.Verdict(new=[], fixed=[])


def test_an_error_the_baseline_does_not_list_fails_even_beside_a_listed_one() -> None:
    listed = tb.baseline_lines(OUTPUT)
    found = [*listed, listed[0]]  # the same message once more: a new occurrence
    verdict = tb.compare(found, listed)
    assert verdict.new == [listed[0]] and verdict.fixed == []
    assert not verdict.passed


def test_a_fixed_error_fails_until_its_line_is_removed() -> None:
    listed = tb.baseline_lines(OUTPUT)
    verdict = tb.compare(listed[1:], listed)
    assert verdict.new == [] and verdict.fixed == [listed[0]]
    assert not verdict.passed


def test_a_module_the_baseline_does_not_name_is_checked_in_full() -> None:
    found = ['memgui/ui/graph/new_view.py: [arg-type] Argument 1 has incompatible type "int"']
    assert tb.compare(found, tb.read_baseline()).new == found


def test_only_the_ui_has_errors_in_the_baseline() -> None:
    paths = {line.split(":", 1)[0] for line in tb.read_baseline()}
    outside = sorted(p for p in paths if not p.startswith("memgui/ui/"))
    assert outside == []


def test_the_baseline_lists_its_lines_in_order_once_written() -> None:
    lines = tb.read_baseline()
    assert lines == sorted(lines)
