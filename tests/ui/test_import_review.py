"""The review page: verdict filters, un-accepting, fixing a refused record, options, report."""

from __future__ import annotations

import csv
import json

import pytest
from PySide6.QtCore import Qt

from memgui.core.model import TraceFilter
from memgui.ui.importing.import_record_editor import RecordEditor
from memgui.ui.models.import_plan_model import Column, ImportPlanModel, PlanFilterProxy
from tests.support.import_export import (
    WAIT_MS,
    apply_and_wait,
    commit_and_wait,
    open_and_plan,
    wait_for_plan,
    write_notes,
)
from tests.support.paths import FIXTURES

NOTES = {
    "alpha.md": "Alpha: the deploy key rotates monthly\n",
    "beta.md": "Beta: the staging database is read-only on Sundays\n",
    "gamma.md": "Gamma: backups live in the north bucket\n",
    "bogus.md": "---\nid: [1, 2]\n---\nDelta: the pager rota changes on Mondays\n",
    "again.md": "---\nscopeId: u1\n---\nThe build uses Python 3.11\n",  # in the brain already
}


@pytest.fixture
def notes(tmp_path):
    return write_notes(tmp_path / "notes", NOTES)


def rows_shown(review) -> list[str]:
    return [review.model.record(r).source for r in review.proxy.source_rows()]


def test_verdict_toggles_filter_the_table(qtbot, window, notes):
    review = open_and_plan(qtbot, window, notes).review
    counts = review.model.plan.counts
    assert (counts["new"], counts["duplicate"], counts["refused"]) == (3, 1, 1)
    assert review.toggles["duplicate"].text() == "duplicate 1"
    assert review.proxy.rowCount() == 5
    review.toggles["new"].setChecked(False)
    assert sorted(rows_shown(review)) == ["again.md:4", "bogus.md:2"]
    review.toggles["refused"].setChecked(False)
    assert rows_shown(review) == ["again.md:4"]
    review.table.selectRow(0)
    detail = review.detail
    assert detail.existing_pane.isVisibleTo(detail)
    assert detail.existing_text.toPlainText().startswith("The build uses Python 3.11")
    assert "Already in the brain: “The build uses Python 3.11” (mt_" in (
        detail.existing_title.full_text()
    )
    for verdict in ("new", "refused"):
        review.toggles[verdict].setChecked(True)
    assert review.proxy.rowCount() == 5


def test_unaccepting_records_changes_what_commit_writes(qtbot, window, notes):
    dialog = open_and_plan(qtbot, window, notes)
    review = dialog.review
    plan = review.model.plan
    alpha = next(i for i, r in enumerate(plan.records) if r.source.startswith("alpha"))
    index = review.model.index(alpha, Column.SOURCE)
    assert review.model.setData(index, Qt.CheckState.Unchecked.value, Qt.CheckStateRole)
    assert review.commit_button.text() == "Commit 2 records"
    # Un-accept by filter: show only "new", un-accept all shown, then accept beta again.
    for verdict, button in review.toggles.items():
        button.setChecked(verdict == "new")
    assert review.unaccept_shown() == 2
    beta = next(i for i, r in enumerate(plan.records) if r.source.startswith("beta"))
    review.model.setData(
        review.model.index(beta, 0), Qt.CheckState.Checked.value, Qt.CheckStateRole
    )
    assert review.commit_button.text() == "Commit 1 record"
    result = commit_and_wait(qtbot, dialog)
    assert result.imported == 1
    contents = {t.content for t in window.session.brain.list_traces(TraceFilter(), limit=200)}
    assert "Beta: the staging database is read-only on Sundays" in contents
    assert not any(c.startswith(("Alpha", "Gamma")) for c in contents)


def test_fixing_a_refused_record_revalidates_it(qtbot, window, notes):
    dialog = open_and_plan(qtbot, window, notes)
    review = dialog.review
    plan = review.model.plan
    row = next(i for i, r in enumerate(plan.records) if r.verdict == "refused")
    editor = RecordEditor(
        plan.records[row],
        lambda _r, done, failed: dialog.run.check_record(row, done, failed),
        dialog,
    )
    qtbot.addWidget(editor)
    assert "id must be a text" in editor.problem.text()
    editor.fields.setPlainText("[1, 2]")
    assert not apply_and_wait(qtbot, editor)
    assert "must be a JSON object" in editor.problem.text()
    editor.fields.setPlainText('{"type": "bogus"}')
    editor.content.setPlainText("Delta: the pager rota changes on Mondays")
    assert not apply_and_wait(qtbot, editor)
    assert plan.records[row].verdict == "refused"
    assert "type" in editor.problem.text() and "bogus" in editor.problem.text()
    editor.fields.setPlainText('{"type": "semantic", "tags": ["ops"]}')
    assert apply_and_wait(qtbot, editor)
    review.record_fixed(row)
    assert plan.records[row].verdict == "new"
    assert review.toggles["new"].text() == "new 4"
    assert review.commit_button.text() == "Commit 4 records"
    commit_and_wait(qtbot, dialog)
    found = window.session.brain.search("pager rota").traces
    assert [(t.content, t.tags) for t in found] == [
        ("Delta: the pager rota changes on Mondays", ("ops",))
    ]


def test_changing_options_replans_in_the_background(qtbot, window, notes):
    dialog = open_and_plan(qtbot, window, notes)
    bar = dialog.review.options_bar
    bar.scope_box.setCurrentIndex(bar.scope_box.findData("organization"))
    wait_for_plan(qtbot, dialog)
    bar.scope_id_edit.setText("acme")
    bar.scope_id_edit.editingFinished.emit()
    wait_for_plan(qtbot, dialog)
    plan = dialog.run.plan
    assert (plan.options.scope, plan.options.scope_id) == ("organization", "acme")
    traces = [r for r in plan.records if r.verdict == "new"]
    assert {(r.fields["scope"], r.fields["scope_id"]) for r in traces} == {("organization", "acme")}
    # In another scope the brain's "Python 3.11" memory is no duplicate.
    assert plan.counts["duplicate"] == 0
    bar.dedup_check.setChecked(False)
    wait_for_plan(qtbot, dialog)
    assert dialog.run.plan.options.dedup is False


def test_the_refusal_report_saves_as_csv_and_json(qtbot, window, notes, tmp_path):
    dialog = open_and_plan(qtbot, window, notes)
    (notes / "photo.png").write_bytes(b"\x89PNG")
    dialog.replan(dialog.run.plan.options)
    wait_for_plan(qtbot, dialog)
    saved = dialog.save_report(str(tmp_path / "refused.csv"))
    with saved.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["source"], r["verdict"], r["field"]) for r in rows] == [
        ("bogus.md:2", "refused", "id"),
        ("photo.png", "not read", ""),
    ]
    data = json.loads(dialog.save_report(str(tmp_path / "refused.json")).read_text())
    assert data[0]["reason"].startswith("id must be a text (got [1, 2])")
    assert dialog.save_report(str(tmp_path / "refused.txt")) is None
    assert "must end in .csv or .json" in window.statusBar().currentMessage()
    assert not (tmp_path / "refused.txt").exists()


def test_plan_model_passes_the_model_tester(qtbot, window, notes, qtmodeltester):
    plan = open_and_plan(qtbot, window, notes).run.plan
    model = ImportPlanModel()
    model.set_plan(plan)
    qtmodeltester.check(model)
    proxy = PlanFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_shown_verdicts({"refused", "duplicate"})
    qtmodeltester.check(proxy)
    assert proxy.rowCount() == 2
    proxy.set_shown_verdicts(set())
    assert proxy.rowCount() == 0


def test_closing_the_window_while_a_job_runs_asks_first(qtbot, window):
    import threading

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from memgui.core.progress import Progress

    release = threading.Event()

    def slow():
        while not release.wait(0.01):
            yield Progress(0, None, "waiting")

    job = window.runner.start("import", slow)
    answers = iter([QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes])
    asked: list[str] = []

    def answer():
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, answer)
            return
        asked.append(box.text())
        box.button(next(answers)).click()

    QTimer.singleShot(20, answer)
    assert not window.close()
    assert window.isVisible() and not job.cancel_requested
    assert "Still running: import" in asked[0]
    QTimer.singleShot(20, answer)
    assert window.close()
    qtbot.waitUntil(lambda: job.done, timeout=WAIT_MS)
    assert job.cancel_requested
    release.set()


def test_a_format_that_does_not_fit_says_why_and_goes_back(qtbot, window, notes):
    dialog = open_and_plan(qtbot, window, notes)
    bar = dialog.review.options_bar
    with qtbot.waitSignal(dialog.run.failed, timeout=WAIT_MS) as blocker:
        bar.format_box.setCurrentIndex(bar.format_box.findData("csv"))
    assert "is a folder" in blocker.args[0]
    working = dialog.working
    assert dialog.pages.currentWidget() is working
    assert working.message.text().startswith("Could not go on: ")
    assert working.back_button.isVisibleTo(dialog)
    working.back_button.click()
    assert dialog.pages.currentWidget() is dialog.review
    assert bar.format_box.currentData() == "auto"
    assert dialog.run.plan.format == "markdown"


def test_a_chatgpt_plan_shows_and_writes_its_texts(qtbot, window):
    source = FIXTURES / "chatgpt" / "branching.json"
    dialog = open_and_plan(qtbot, window, source)
    review = dialog.review
    plan = review.model.plan
    assert plan.format == "chatgpt"
    texts = [review.model.index(r, Column.CONTENT).data() for r in range(len(plan.records))]
    assert "user: Where should we hike on Saturday?" in texts
    assert "[user]: Where should we hike on Saturday?" in texts
    row = texts.index("[user]: Where should we hike on Saturday?")
    review.table.selectRow(review.proxy.mapFromSource(review.model.index(row, 0)).row())
    detail = review.detail
    assert detail.record_text.toPlainText() == plan.records[row].fields["content"]
    shown = json.loads(detail.fields_text.toPlainText())
    assert shown["fields"]["metadata"]["source"] == "chatgpt_export"
    editor = RecordEditor(plan.records[row], lambda record, done, _failed: done(record), dialog)
    qtbot.addWidget(editor)
    editor.content.setPlainText("[user]: Where should we swim?")
    assert apply_and_wait(qtbot, editor)
    commit_and_wait(qtbot, dialog)
    assert window.session.brain.get(plan.trace_id(row)).content == "[user]: Where should we swim?"


def test_a_paint_asks_each_cell_once_and_no_role_carries_over(qtbot, window, notes, monkeypatch):
    # One call into Python per cell (each takes the GIL the commit's worker holds in
    # bursts); the span Qt reuses from cell to cell must not keep the last cell's values.
    review = open_and_plan(qtbot, window, notes).review
    model = review.model
    calls = {"data": 0, "multiData": 0}
    data, multi = ImportPlanModel.data, ImportPlanModel.multiData

    def counted_data(self, *args):
        calls["data"] += 1
        return data(self, *args)

    def counted_multi(self, *args):
        calls["multiData"] += 1
        return multi(self, *args)

    monkeypatch.setattr(ImportPlanModel, "data", counted_data)
    monkeypatch.setattr(ImportPlanModel, "multiData", counted_multi)
    review.table.resize(800, 300)
    review.table.grab()
    assert calls["multiData"] > 0 and calls["data"] == 0
    verdict = model.index(0, Column.VERDICT)
    content = model.index(0, Column.CONTENT)
    assert model.data(verdict, Qt.ItemDataRole.ForegroundRole) is not None
    assert model.data(content, Qt.ItemDataRole.ForegroundRole) is None
