"""A sequence whose items are loaded only when something looks at them.

The readers of a large results directory hand on sequences (a record's
moves, the records a resumed run keeps) whose length is known without
their items; the items are read from the log on first use.  A subclass
gives :meth:`load` and ``__len__``; looking at an item, iterating or
comparing loads the whole sequence once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class LoadedOnUse(Sequence[T]):
    __slots__ = ()

    def load(self) -> list[T]:
        """The items, loaded on the first call (the subclass keeps them)."""
        raise NotImplementedError

    @overload
    def __getitem__(self, item: int) -> T: ...
    @overload
    def __getitem__(self, item: slice) -> list[T]: ...
    def __getitem__(self, item: int | slice) -> T | list[T]:
        return self.load()[item]

    def __iter__(self) -> Iterator[T]:
        return iter(self.load())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)
