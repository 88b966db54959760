"""The viewer's board as SVG: every square one ``<g data-square="c4">`` element.

A square holds a ``<use class="pc">`` that shows its piece from the symbols in
``pieces.svg`` (``href="#pc-PX"``) and carries the protocol's cell code in
``data-piece`` when occupied.  The page's script moves pieces by changing only
these two attributes, so the board drawn here and the board the viewer shows
after any move are the same markup.  Squares that do not exist (YOXII's cut
corners, ``"#"`` in the state object) are not drawn at all.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Sequence
from importlib import resources

__all__ = ["board_svg", "pieces_svg", "square_name"]

_FILES = "abcdefg"
#: Pixels per square in the SVG's own units, and the margin that holds the coordinates.
_CELL = 60
_MARGIN = 22


def square_name(rank: int, file: int) -> str:
    return f"{_FILES[file]}{rank + 1}"


def pieces_svg() -> str:
    """The hidden SVG holding one symbol per cell code, included once per page."""
    return resources.files(__package__).joinpath("pieces.svg").read_text(encoding="utf-8")


def board_svg(game: str, board: Sequence[Sequence[str]], highlight: Collection[str] = ()) -> str:
    """The board of a protocol state object (``state["board"]``, rank 1 first) as an
    ``<svg>`` element.  Squares named in ``highlight`` (the last move's) get
    the class ``last``."""
    size = len(board)
    span = _MARGIN + size * _CELL + _MARGIN // 2
    parts = [
        f'<svg class="board board-{html.escape(game)}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {span} {span}" role="img" aria-label="{html.escape(game)} board">'
    ]
    for rank in range(size):
        y = _MARGIN // 2 + (size - 1 - rank) * _CELL
        for file in range(size):
            code = board[rank][file]
            if code == "#":
                continue
            name = square_name(rank, file)
            shade = "dark" if (rank + file) % 2 == 0 else "light"
            classes = "sq last" if name in highlight else "sq"
            piece = f' data-piece="{html.escape(code)}"' if code else ""
            href = f' href="#pc-{html.escape(code)}"' if code else ""
            parts.append(
                f'<g class="{classes}" data-square="{name}"{piece} transform="translate({_MARGIN + file * _CELL} {y})">'
                f'<rect class="{shade}" width="{_CELL}" height="{_CELL}"/>'
                f'<use class="pc"{href} width="{_CELL}" height="{_CELL}"/></g>'
            )
    # Coordinates: files under the board, ranks on its left.
    for file in range(size):
        x = _MARGIN + file * _CELL + _CELL // 2
        parts.append(f'<text class="coord" x="{x}" y="{span - 2}" text-anchor="middle">{_FILES[file]}</text>')
    for rank in range(size):
        y = _MARGIN // 2 + (size - 1 - rank) * _CELL + _CELL // 2
        parts.append(f'<text class="coord" x="{_MARGIN // 2}" y="{y}" text-anchor="middle" dominant-baseline="central">{rank + 1}</text>')
    parts.append("</svg>")
    return "".join(parts)
