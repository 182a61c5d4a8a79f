"""The app names its colours in one module, ui/theme/colours.py."""

from __future__ import annotations

import re

from memgui.core.io import Verdict
from memgui.ui.theme import colours
from tests.support.paths import ROOT

HEX_COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b")


def test_no_colour_is_written_outside_the_theme() -> None:
    ui = ROOT / "memgui" / "ui"
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted(ui.rglob("*.py"))
        if path.parent.name != "theme"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HEX_COLOUR.search(line)
    ]
    assert found == []


def test_every_verdict_has_its_colour() -> None:
    assert set(colours.VERDICTS) == set(Verdict)
