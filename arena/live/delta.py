"""What changed between two versions of the live page, as a recipe for the
new text made of pieces of the old one and the few new pieces.

After a game the page's text changes in a few places (the new game's entry,
the two players' rows, cells and sheets, a chart, the status line), and rows
move as the ranking changes; the rest stays as it was.  Both texts are cut
into pieces after every closing tag of a cell, a row, an item or a drawing,
and after every ``},`` and ``],`` of the page's JSON.  Each piece of the new
text is then either found in the old text (a copy: where it was) or new
(sent as it is): a few KB where the page is MBs, a moved row a copy.

A recipe is a list of steps: ``[start, end]`` copies the old text's code
units from ``start`` to ``end``, a string is itself.  Positions count
UTF-16 code units, as a browser's strings do (a name with an emoji is two).
"""

from __future__ import annotations

import re
from typing import Union

__all__ = ["Step", "pieces", "recipe"]

Step = Union[list[int], str]

#: Where a piece ends: after these (a cell, a row, a list item, an SVG element or group, a JSON entry).
_CUT = re.compile(r"(</td>|</tr>|</li>|</g>|/>|</h3>|</text>|</option>|</p>|\},|\],)")


def pieces(text: str) -> list[str]:
    """``text`` cut after each of :data:`_CUT`'s marks; joined again, the pieces are ``text``."""
    parts = _CUT.split(text)
    return [a + b for a, b in zip(parts[::2], [*parts[1::2], ""]) if a + b]


def recipe(old: list[str], new: list[str]) -> list[Step]:
    """The steps that make the text of pieces ``new`` from the text of pieces ``old``."""
    starts: list[int] = []
    first: dict[str, int] = {}
    at = 0
    for index, piece in enumerate(old):
        starts.append(at)
        first.setdefault(piece, index)
        at += _units(piece)
    starts.append(at)
    steps: list[Step] = []
    follows = -1  # the old piece after the last one copied: the next copy most likely starts there
    for piece in new:
        index = follows if follows < len(old) and old[follows] == piece else first.get(piece, -1)
        if index < 0:
            if steps and isinstance(steps[-1], str):
                steps[-1] += piece
            else:
                steps.append(piece)
            follows = -1
            continue
        last = steps[-1] if steps else None
        if isinstance(last, list) and last[1] == starts[index]:
            last[1] = starts[index + 1]
        else:
            steps.append([starts[index], starts[index + 1]])
        follows = index + 1
    return steps


def _units(text: str) -> int:
    """The length of ``text`` in UTF-16 code units: a character past U+FFFF is two."""
    return len(text) if text.isascii() else len(text) + sum(1 for char in text if ord(char) > 0xFFFF)
