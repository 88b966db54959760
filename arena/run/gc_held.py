"""Python's full garbage collections kept off what a run holds.

A run keeps the records it resumed from and every record it stores until it
ends, and a full collection walks every object held: at 100,000 records one
takes about 0.2 s, and they come the more often the more is added (the
driver's CPU per game in a 1,000-bot Swiss grew 1.6-1.9 times over its
10,000 games).  What the run holds is frozen instead (``gc.freeze``: a splice
of lists, no walk): refcounting still frees whatever is dropped, and a cycle
dropped meanwhile is collected once the run unfreezes at its end.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FREEZE_EVERY", "frozen", "read_uncollected", "stored"]

#: The records a run stores between two freezes of what it holds.
FREEZE_EVERY = 1000

# The frozen() scopes open: the outermost unfreezes (a Swiss plays its rounds within the run's).
_depth = 0


@contextmanager
def frozen() -> Iterator[None]:
    """What the process holds now out of full collections until the
    outermost of these scopes ends; :func:`gc.freeze` inside adds to it."""
    global _depth
    gc.freeze()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth:
            gc.unfreeze()


@contextmanager
def read_uncollected() -> Iterator[None]:
    """No collection while the records a run keeps are read (each would walk
    every record read so far, and the young ones again as they age: 15 % of a
    resume), and what was read frozen after; within :func:`frozen`."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def stored(count: int) -> None:
    """A run stored its ``count``-th record: every :data:`FREEZE_EVERY`, what
    it holds now is frozen too (within :func:`frozen`)."""
    if count % FREEZE_EVERY == 0:
        gc.freeze()
