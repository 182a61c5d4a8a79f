"""No test waits for a fixed time: it waits for the signal or state it needs.

A wait for a time passes on an idle machine and fails on a loaded one, where the app's
workers may get a few percent of a core. So, in every test module: no `qtbot.wait(ms)`; every
`qtbot.waitUntil`/`waitSignal`/… names its timeout (a safety net of at least 10 s, such as
`tests.support.waiting.WAIT_MS`, never the 5 s default); and a `sleep` only between two looks
at a condition, inside a `while` loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SKIPPED = ("bench", "fixtures")  # benchmarks measure time; fixtures are data
QTBOT_WAITS = {"waitUntil", "waitSignal", "waitSignals", "waitExposed", "waitActive"}
QTBOT_WAITS |= {"waitCallback", "wait_until", "wait_signal", "wait_signals", "wait_callback"}
SAFETY_NET_MS = 10_000


def _modules() -> list[Path]:
    return [
        path
        for path in sorted(TESTS.rglob("*.py"))
        if not set(path.relative_to(TESTS).parts[:-1]) & set(SKIPPED)
    ]


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def fixed_waits(source: str) -> list[str]:
    """Each fixed wait in `source`, as 'line: what'."""
    found: list[str] = []

    def visit(node: ast.AST, in_while: bool) -> None:
        if isinstance(node, ast.Call):
            name = _name(node.func)
            method = name.rsplit(".", 1)[-1]
            if name.endswith("qtbot.wait"):
                found.append(f"{node.lineno}: qtbot.wait()")
            elif name.startswith("qtbot.") and method in QTBOT_WAITS:
                timeout = next((k.value for k in node.keywords if k.arg == "timeout"), None)
                if timeout is None:
                    found.append(f"{node.lineno}: {method} without a timeout")
                elif isinstance(timeout, ast.Constant) and timeout.value < SAFETY_NET_MS:
                    found.append(f"{node.lineno}: {method} gives up after {timeout.value} ms")
            elif method == "sleep" and not in_while:
                found.append(f"{node.lineno}: {name}() outside a loop that looks for a state")
        for child in ast.iter_child_nodes(node):
            nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            visit(child, False if nested else in_while or isinstance(node, ast.While))

    visit(ast.parse(source), False)
    return found


def test_the_check_finds_each_kind_of_fixed_wait() -> None:
    source = (
        "def test_a(qtbot):\n"
        "    qtbot.wait(300)\n"
        "    qtbot.waitUntil(lambda: ready)\n"
        "    qtbot.waitSignal(done, timeout=3000)\n"
        "    time.sleep(1.05)\n"
        "    while not ready():\n"
        "        time.sleep(0.01)\n"
        "    qtbot.waitUntil(lambda: ready, timeout=WAIT_MS)\n"
    )
    assert fixed_waits(source) == [
        "2: qtbot.wait()",
        "3: waitUntil without a timeout",
        "4: waitSignal gives up after 3000 ms",
        "5: time.sleep() outside a loop that looks for a state",
    ]


def test_no_test_waits_for_a_fixed_time() -> None:
    found = {
        str(path.relative_to(TESTS)): waits
        for path in _modules()
        if (waits := fixed_waits(path.read_text(encoding="utf-8")))
    }
    assert found == {}
