"""Edit ▸ Consolidate… on a shared brain (a real PostgreSQL), through the same dialog as on a
file: the plan reviewed (memories of one meaning listed as a cluster), applied as one batch
on the server, undone from the Edit menu and the dialog; a run cancelled while it waits for a
row writes nothing; a run while another program holds the brain's advisory lock (AgentOS's
key) writes nothing and says who."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from PySide6.QtCore import QModelIndex, Qt

from memgui.core.model import TraceFilter
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import parse_postgres_address
from memgui.ui.consolidation.consolidation_dialog import ConsolidateDialog, open_consolidation
from memgui.ui.consolidation.consolidation_model import Role
from tests.support.shared_window import open_shared_window
from tests.support.waiting import WAIT_MS

pytestmark = pytest.mark.slow  # a real server


@pytest.fixture
def address(pg_address: str) -> str:
    """Two weak memories, three copies of one, a fresh one."""
    with SharedBrain.open(pg_address, actor="test") as brain:
        brain.add("Lunch order for the offsite", strength=0.01)
        brain.add("The printer was out of toner", strength=0.01)
        for tag in ("a", "b", "c"):
            brain.add("Alice prefers short answers", scope_id="alice", tags=[tag])
        brain.add("The build uses Python 3.11")
    return pg_address


@pytest.fixture
def window(qtbot, tmp_path: Path, address: str) -> Iterator:
    opened = open_shared_window(qtbot, tmp_path, address)
    yield opened
    opened.close()


def state(address: str) -> dict[str, tuple]:
    with SharedBrain.open(address, actor="check") as check:
        found = check.list_traces(TraceFilter(include_deleted=True), limit=200)
        return {t.id: (t.content, t.tags, t.deleted) for t in found}


def planned(qtbot, window) -> ConsolidateDialog:
    assert window.consolidate_action.isEnabled()
    dialog = open_consolidation(window)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.run.plan is not None and not dialog.run.running, timeout=WAIT_MS)
    assert "postgresql://" in dialog.windowTitle()
    return dialog


def rows(model, parent: QModelIndex | None = None) -> list[QModelIndex]:
    parent = parent or QModelIndex()
    return [model.index(i, 0, parent) for i in range(model.rowCount(parent))]


def test_review_apply_and_undo_on_the_server(qtbot, window, address: str) -> None:
    before = state(address)
    dialog = planned(qtbot, window)
    model = dialog.model
    prune_step, merge_step = rows(model)[:2]
    assert prune_step.data() == "Prune weak memories (2)"
    first_prune, second_prune = rows(model, prune_step)
    kept = first_prune.data(Role.Candidate).trace_id
    pruned = second_prune.data(Role.Candidate).trace_id
    assert model.setData(first_prune, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    [cluster_index] = rows(model, merge_step)
    cluster = cluster_index.data(Role.Candidate)
    dialog.tree.setCurrentIndex(cluster_index)
    keep = cluster.members[1].trace_id
    dialog.detail.survivor.setCurrentIndex(dialog.detail.survivor.findData(keep))
    dialog.detail.text.setPlainText("Alice prefers short answers, code first")
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.run.result is not None, timeout=WAIT_MS)
    assert dialog.status.text().startswith("Applied: pruned 1, merged 2")
    after = state(address)
    assert after[keep][0] == "Alice prefers short answers, code first" and not after[keep][2]
    assert after[pruned][2] and not after[kept][2]
    assert sum(1 for t in after.values() if t[2]) == 3
    qtbot.waitUntil(lambda: window.session.undo_stack.canUndo(), timeout=WAIT_MS)
    window.window_actions.undo.trigger()
    assert state(address) == before
    assert dialog.status.text().startswith("Undone:")
    window.window_actions.redo.trigger()
    assert state(address) == after
    dialog.undo_button.click()  # the latest step: the same as Edit ▸ Undo
    assert state(address) == before
    window.window_actions.redo.trigger()
    # An edit after it: the dialog's Undo reverts the run as a new batch, the edit stays.
    fresh = next(i for i, t in after.items() if t[0] == "The build uses Python 3.11")
    assert window.select_id(fresh)
    window.detail.editor.content.setPlainText("The build uses Python 3.12")
    window.window_actions.save.trigger()
    dialog.undo_button.click()
    reverted = state(address)
    assert reverted[fresh][0] == "The build uses Python 3.12"
    assert {i: t for i, t in reverted.items() if i != fresh} == {
        i: t for i, t in before.items() if i != fresh
    }
    assert dialog.status.text().startswith("Undone:")


def test_a_run_cancelled_while_it_waits_writes_nothing(qtbot, window, address: str) -> None:
    before = state(address)
    dialog = planned(qtbot, window)
    candidate = rows(dialog.model, rows(dialog.model)[0])[0].data(Role.Candidate)
    conninfo = parse_postgres_address(address).conninfo
    # Another writer holds a row the run must change: the run waits for it, is cancelled,
    # and goes on once the row is let go (the signal is waited for after that).
    with (
        qtbot.waitSignal(dialog.run.cancelled, timeout=WAIT_MS) as cancelled,
        psycopg.connect(conninfo, autocommit=True) as other,
        other.transaction(),
    ):
        other.execute("SELECT 1 FROM memory_traces WHERE id = %s FOR UPDATE", (candidate.trace_id,))
        dialog.apply_button.click()
        qtbot.waitUntil(lambda: _waiting_for_a_row(other), timeout=WAIT_MS)
        assert dialog.cancel_button.isVisible() and dialog.progress.isVisible()
        dialog.cancel_button.click()
    assert cancelled.args == ["apply"]
    qtbot.waitUntil(lambda: not dialog.run.running, timeout=WAIT_MS)
    assert dialog.run.result is None and dialog.apply_button.isEnabled()
    assert state(address) == before and not window.session.undo_stack.canUndo()


def _waiting_for_a_row(conn: psycopg.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid != pg_backend_pid()"
    ).fetchone()
    return bool(row and row[0])


def test_a_run_while_agentos_holds_the_brain_writes_nothing(qtbot, window, address: str) -> None:
    before = state(address)
    dialog = planned(qtbot, window)
    conninfo = parse_postgres_address(address).conninfo
    with psycopg.connect(conninfo, autocommit=True) as other:
        other.execute("SET application_name = 'agentos reflect'")
        with other.transaction():
            other.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("agentos_brain:team",))
            dialog.apply_button.click()
            qtbot.waitUntil(lambda: dialog.run.result is not None, timeout=WAIT_MS)
    assert dialog.status.text().startswith("Nothing applied: another long operation")
    assert "'agentos reflect'" in dialog.status.text()
    assert state(address) == before


def graph_and_traces(address: str) -> tuple[dict[str, float], dict[str, tuple]]:
    with SharedBrain.open(address, actor="check") as check:
        edges = {e["id"]: e["weight"] for e in check.edges()}
    return edges, state(address)


def test_strengthen_and_derive_are_planned_applied_and_undone(
    qtbot, tmp_path: Path, pg_address: str, ollama_server, monkeypatch
) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        ids = [brain.add(f"Release note {n} mentions the installer").id for n in range(5)]
        for a, b in zip(ids, ids[1:], strict=False):
            brain.link(a, b, "relates_to")
        with brain.conn.transaction():
            for trace_id in ids[:2]:
                brain.conn.execute(
                    "INSERT INTO retrieval_feedback (brain_id, trace_id, signal, query, "
                    "created_at) VALUES ('team', %s, 'used', 'installer', 1)",
                    (trace_id,),
                )
    before = graph_and_traces(pg_address)
    monkeypatch.setenv("MEMGUI_OLLAMA_URL", ollama_server.url)
    window = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        dialog = planned(qtbot, window)
        steps = {index.data(): index for index in rows(dialog.model)}
        strengthen = steps["Strengthen co-used memories (1)"]
        derive = steps["Derive insights (1)"]
        for step in (strengthen, derive):  # planned here, not skipped with a note
            assert "skipped" not in (step.siblingAtColumn(1).data() or "")
        [query] = rows(dialog.model, strengthen)
        assert query.data() == "query “installer”: 1 edge(s)"
        [insight] = rows(dialog.model, derive)
        assert insight.data().startswith("new insight: “Insight: these memories are about")
        dialog.apply_button.click()
        qtbot.waitUntil(lambda: dialog.run.result is not None, timeout=WAIT_MS)
        assert dialog.status.text().startswith("Applied: pruned 0, merged 0, 1 insight(s), 1 st")
        edges, after = graph_and_traces(pg_address)
        assert len(edges) == len(before[0]) + 1 and len(after) == len(before[1]) + 1
        qtbot.waitUntil(lambda: window.session.undo_stack.canUndo(), timeout=WAIT_MS)
        window.window_actions.undo.trigger()
        assert graph_and_traces(pg_address) == before
    finally:
        window.close()


def test_a_cluster_by_meaning_is_listed_applied_and_undone(
    qtbot, tmp_path: Path, pg_address: str, ollama_server
) -> None:
    from memgui.core.progress import run_to_end
    from memgui.core.search.embed import OllamaEmbedder

    with SharedBrain.open(pg_address, actor="test") as brain:
        ids = [brain.add(text).id for text in ("The car broke", "The automobile failed")]
        brain.add("Coffee at dawn")
        brain.use_embedder(OllamaEmbedder(ollama_server.url, model="nomic-embed-text"))
        run_to_end(brain.backfill())
    before = state(pg_address)
    window = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        dialog = planned(qtbot, window)
        steps = {index.data(): index for index in rows(dialog.model)}
        merge_step = next(i for text, i in steps.items() if text.startswith("Merge"))
        assert merge_step.data() == "Merge duplicates (1)"
        [cluster_index] = rows(dialog.model, merge_step)
        assert cluster_index.data() == "2 into one: “The car broke”"
        assert cluster_index.siblingAtColumn(1).data().startswith("2 traces with cosine sim")
        dialog.tree.setCurrentIndex(cluster_index)
        cluster = cluster_index.data(Role.Candidate)
        assert cluster.basis == "similar" and [m.trace_id for m in cluster.members] == ids
        assert cluster.why.startswith("2 traces with cosine similarity > 0.95")
        dialog.apply_button.click()
        qtbot.waitUntil(lambda: dialog.run.result is not None, timeout=WAIT_MS)
        assert dialog.status.text().startswith("Applied: pruned 0, merged 1")
        after = state(pg_address)
        assert after[ids[1]][2] and not after[ids[0]][2]
        qtbot.waitUntil(lambda: window.session.undo_stack.canUndo(), timeout=WAIT_MS)
        window.window_actions.undo.trigger()
        assert state(pg_address) == before
    finally:
        window.close()
