"""The graph's kept positions: written off the caller's thread, atomically, never lost."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from memgui.core.graph_view import PositionStore
from memgui.core.graph_view import positions as positions_module


def _store(tmp_path: Path) -> PositionStore:
    return PositionStore(tmp_path / "positions", tmp_path / "brain.sqlite", "brain")


def test_save_writes_on_a_thread_of_its_own_and_a_new_store_reads_it(tmp_path, monkeypatch):
    writers: list[threading.Thread] = []
    write = PositionStore._write

    def spy(self, snapshot, placed):
        writers.append(threading.current_thread())
        write(self, snapshot, placed)

    monkeypatch.setattr(PositionStore, "_write", spy)
    store = _store(tmp_path)
    many = {f"mt_{k:06d}": (float(k), -k / 3) for k in range(12_345)}  # more than one slice
    store.update(many)
    store.save()
    assert store.flush(timeout=30)
    assert writers and all(t is not threading.current_thread() for t in writers)
    on_disk = json.loads(store.path.read_text(encoding="utf-8"))
    assert {k: tuple(v) for k, v in on_disk.items()} == many
    assert list(on_disk) == list(many)  # oldest first: the order the cap drops them in
    assert _store(tmp_path).get(["mt_000007", "nope"]) == {"mt_000007": (7.0, -7 / 3)}


def test_a_layouts_positions_are_folded_in_by_the_writer(tmp_path):
    store = _store(tmp_path)
    ids = ("a", "b", "c")
    xy = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    store.place(ids, xy)
    xy[:] = 0.0  # the caller's array is its own again at once: the store took a copy
    assert store.flush(timeout=30) and store.error is None
    assert _store(tmp_path).get(ids) == {"a": (1.0, 2.0), "b": (3.0, 4.0), "c": (5.0, 6.0)}
    store.place(("b",), np.array([[9.0, 9.0]]))
    assert store.get(["a", "b"]) == {"a": (1.0, 2.0), "b": (9.0, 9.0)}


def test_a_store_opening_the_file_waits_for_a_write_under_way(tmp_path):
    first = _store(tmp_path)
    first.update({"a": (1.0, 2.0)})
    first.save()  # no flush: the second store must not read the file before it is written
    assert _store(tmp_path).get(["a"]) == {"a": (1.0, 2.0)}


def test_two_stores_of_one_brain_keep_each_others_placements(tmp_path):
    first, second = _store(tmp_path), _store(tmp_path)
    first.update({"a": (1.0, 1.0)})
    second.update({"b": (2.0, 2.0)})
    first.save()
    second.save()
    assert first.flush(timeout=30) and second.flush(timeout=30)
    again = _store(tmp_path)
    assert again.get(["a", "b"]) == {"a": (1.0, 1.0), "b": (2.0, 2.0)}
    second.update({"a": (5.0, 5.0)})  # the newest placement of a node wins
    second.save()
    assert second.flush(timeout=30)
    assert _store(tmp_path).get(["a", "b"]) == {"a": (5.0, 5.0), "b": (2.0, 2.0)}


def test_writes_leave_no_temporary_file_and_each_has_its_own_name(tmp_path, monkeypatch):
    names: list[str] = []
    make = positions_module.tempfile.mkstemp

    def spy(*args, **kwargs):
        handle, name = make(*args, **kwargs)
        names.append(name)
        return handle, name

    monkeypatch.setattr(positions_module.tempfile, "mkstemp", spy)
    stores = [_store(tmp_path) for _ in range(3)]
    for k, store in enumerate(stores):
        store.update({f"n{k}": (float(k), 0.0)})
        store.save()
    assert all(store.flush(timeout=30) for store in stores)
    assert len(set(names)) == len(names) == 3
    assert all(Path(n).parent == stores[0].path.parent for n in names)  # same folder: rename
    assert [p.name for p in stores[0].path.parent.iterdir()] == [stores[0].path.name]
    assert _store(tmp_path).get(["n0", "n1", "n2"]) == {
        "n0": (0.0, 0.0),
        "n1": (1.0, 0.0),
        "n2": (2.0, 0.0),
    }


def test_a_failed_write_is_reported_and_leaves_nothing(tmp_path):
    blocker = tmp_path / "positions"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    store = _store(tmp_path)
    store.update({"a": (1.0, 2.0)})
    store.save()
    assert store.flush(timeout=30)
    assert isinstance(store.error, OSError)
    assert blocker.read_text(encoding="utf-8") == "a file where the folder should be"


def test_a_shared_brain_is_kept_by_its_address_never_its_password(tmp_path: Path) -> None:
    def store(address: str, brain_id: str = "team") -> PositionStore:
        return PositionStore(tmp_path, address, brain_id)

    plain = store("postgresql://bob@db.example:5432/mem?sslmode=require&brain_id=team")
    typed = store("postgresql://bob:s3cret@db.example:5432/mem?brain_id=team&sslmode=require")
    assert plain.path == typed.path  # the password and the options' order do not count
    assert "s3cret" not in str(typed.path) and typed.path.parent == tmp_path
    other_brain = store("postgresql://bob@db.example:5432/mem?sslmode=require&brain_id=ops", "ops")
    other_server = store("postgresql://bob@db2.example:5432/mem?sslmode=require&brain_id=team")
    assert len({plain.path, other_brain.path, other_server.path}) == 3
    plain.place(("a",), np.array([[1.0, 2.0]]))
    plain.flush()
    assert store("postgresql://bob:other@db.example:5432/mem?brain_id=team&sslmode=require").get(
        ["a"]
    ) == {"a": (1.0, 2.0)}
