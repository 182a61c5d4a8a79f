"""Progress events of long core work.

Long work in the core is a generator: it yields `Progress` and returns its result
(`StopIteration.value`). The app runs such generators as jobs and cancels them between
yields; the CLI simply drains them with `run_to_end`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


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
