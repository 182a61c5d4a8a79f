"""Planning an import in tests; in a thread, where a reader that waits forever fails the
test, not the suite."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.io.options import ImportOptions
from memgui.core.io.planning.plan import ImportPlan, plan
from memgui.core.io.records import TRACE
from memgui.core.progress import run_to_end

WAIT_S = 120  # far beyond what planning a few small files takes, however busy the machine


def planned(brain: Brain, source: Path, fmt: str, **options: Any) -> ImportPlan:
    """The plan of `source` read as `fmt`, against `brain`."""
    return run_to_end(plan(brain, source, options=ImportOptions(format=fmt, **options)))


def plan_in_thread(brain_path: Path, source: Path, **options: Any) -> ImportPlan:
    """Plan `source` on its own connection in a thread; fail if it never ends."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            with Brain.open(brain_path) as brain:
                job = plan(brain, source, options=ImportOptions(**options))
                outcome["plan"] = run_to_end(job)
        except BaseException as exc:  # reported to the test below
            outcome["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(WAIT_S)
    assert not thread.is_alive(), f"planning {source} never ended (a read that blocks)"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["plan"]


def traces_by_file(the_plan: ImportPlan) -> dict[str, Any]:
    """The plan's trace records by file (`notes/a.md:3` -> `notes/a.md`)."""
    return {r.source.rsplit(":", 1)[0]: r for r in the_plan.records if r.kind == TRACE}
