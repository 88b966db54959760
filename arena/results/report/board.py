"""The viewer's board as SVG: every square one ``<g data-square="c4">`` element.

A square holds a ``<use class="pc">`` that shows its piece from the symbols in
``pieces.svg`` (``href="#pc-PX"``) and carries the protocol's cell code in
``data-piece`` when occupied.  The page's script moves pieces by changing only
these two attributes, so the board drawn here and the board the viewer shows
after any move are the same markup.  Squares that do not exist (YOXII's cut
corners, ``"#"`` in the state object) are not drawn at all.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from importlib import resources

from arena.results.pages import Markup, render

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


def board_svg(game: str, board: Sequence[Sequence[str]], highlight: Collection[str] = ()) -> Markup:
    """The board of a protocol state object (``state["board"]``, rank 1 first) as an
    ``<svg>`` element (``templates/board.svg``).  Squares named in
    ``highlight`` (the last move's) get the class ``last``."""
    size = len(board)
    span = _MARGIN + size * _CELL + _MARGIN // 2
    squares = [
        {"name": name, "code": board[rank][file], "classes": "sq last" if name in highlight else "sq",
         "shade": "dark" if (rank + file) % 2 == 0 else "light",
         "x": _MARGIN + file * _CELL, "y": _MARGIN // 2 + (size - 1 - rank) * _CELL}
        for rank in range(size) for file in range(size)
        if board[rank][file] != "#" and (name := square_name(rank, file))
    ]
    files = [(_MARGIN + file * _CELL + _CELL // 2, _FILES[file]) for file in range(size)]
    ranks = [(_MARGIN // 2 + (size - 1 - rank) * _CELL + _CELL // 2, rank + 1) for rank in range(size)]
    return Markup(render("board.svg", game=game, span=span, squares=squares, files=files, ranks=ranks, cell=_CELL,
                         margin=_MARGIN))
