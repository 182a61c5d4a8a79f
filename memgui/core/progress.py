"""Progress events of long core work, and the garbage collector paused while it builds.

Long work in the core is a generator: it yields `Progress` and returns its result
(`StopIteration.value`). The app runs such generators as jobs and cancels them between
yields; the CLI simply drains them with `run_to_end`.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")
Y = TypeVar("Y")


@dataclass(frozen=True)
class Progress:
    done: int
    total: int | None = None  # None: unknown
    message: str = ""


class Cancelled(Exception):
    """Raised inside a job when its cancel flag was set; nothing was written."""


Job = Generator[Progress, None, T]


def run_to_end(job: Job[T], on_progress: Callable[[Progress], None] | None = None) -> T:
    """Drain a core generator and return its result. Interrupted between two steps (a
    signal, a failing `on_progress`), it closes the job, which undoes what it began."""
    try:
        while True:
            try:
                event = next(job)
            except StopIteration as stop:
                return stop.value
            if on_progress is not None:
                on_progress(event)
    finally:
        job.close()


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
