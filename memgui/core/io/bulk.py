"""Helpers of bulk import work: the garbage collector paused, taken ids asked in few queries.

An import writes its new traces in bulk (`store.insert_traces`); before that it checks, in
the same transaction, that the ids it planned are still free (another process may have
written since planning).
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from memgui.core.io.planning.brain_index import chunks
from memgui.core.storage.db import Database

Y = TypeVar("Y")

_lock = threading.Lock()
_pauses = 0
_was_enabled = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while bulk work builds objects that live on.

    The collector runs every 700 new container objects and walks ever more of the old ones:
    reading and planning 100k records spent a third of its time in it. Import work makes
    no reference cycles worth collecting meanwhile (reference counting still frees what it
    drops). Pauses nest and may overlap across threads; the last one to end restores the
    collector as it was before the first.
    """
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()


def paused_steps(job: Iterator[Y]) -> Generator[Y, None, Any]:
    """Run each step of a generator job with the collector paused; give out what it yields.

    The pause never outlives a step: a job that is suspended, abandoned or kept alive by a
    traceback leaves the collector running. An exception thrown in (a cancel) is thrown
    into the job, and closing closes it, so it unwinds its own transaction as before.
    """
    generator = cast(Generator[Y, None, Any], job)
    step: Callable[[], Y] = generator.__next__
    while True:
        with gc_paused():
            try:
                event = step()
            except StopIteration as stop:
                return stop.value
        try:
            yield event
        except GeneratorExit:
            generator.close()
            raise
        except BaseException as thrown:  # handed to the job, which decides
            step = functools.partial(generator.throw, thrown)
        else:
            step = generator.__next__


def taken_ids(
    db: Database, brain_id: str, ids: Iterable[str], table: str = "memory_traces"
) -> set[str]:
    found: set[str] = set()
    for batch in chunks(ids):
        marks = ",".join("?" * len(batch))
        found.update(
            r[0]
            for r in db.conn.execute(
                f"SELECT id FROM {table} WHERE brain_id = ? AND id IN ({marks})",
                (brain_id, *batch),
            )
        )
    return found
