"""`memgui screenshot BRAIN OUT.png --import PATH`: the review page drawn, nothing committed."""

from __future__ import annotations

import json

from PySide6.QtGui import QImage

from memgui.__main__ import main
from memgui.ui.models.import_plan_model import short_source
from tests.support.import_export import CORPORA, brain_digest

CHATGPT = CORPORA / "chatgpt" / "chatlore__fixture-conversations.json"


def test_the_screenshot_renders_the_review_page_and_writes_nothing(
    qapp, brain_path, tmp_path, capsys
):
    before = brain_digest(brain_path)
    out = tmp_path / "shots" / "review.png"
    code = main(
        ["--brain", str(brain_path), "--json", "screenshot", str(out), "--import", str(CHATGPT)]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["plan"]["refused"] == 2 and report["plan"]["new"] > 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1180, 760)
    assert brain_digest(brain_path) == before


def test_the_screenshot_refuses_a_missing_source(qapp, brain_path, tmp_path, capsys):
    code = main(
        [
            "--brain",
            str(brain_path),
            "screenshot",
            str(tmp_path / "x.png"),
            "--import",
            str(tmp_path / "nowhere.json"),
        ]
    )
    assert code != 0
    assert "nowhere.json" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_sources_lose_what_every_record_shares():
    plan_file = "/data/conversations.json"
    assert short_source(f"{plan_file}#abc/u1", plan_file) == "abc/u1"
    assert short_source("notes/a.md:3", "/vault") == "notes/a.md:3"
    assert short_source("/data/other.json", plan_file) == "other.json"
