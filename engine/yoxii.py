"""YOXII rules: one totem on a 37-square board, pieces valued 1 to 4.

Representation (python-chess style, for speed): squares are grid indexes
``rank * 7 + file`` on the 7x7 grid, sets of squares are ints used as bit
masks, and each square's neighbours and jump rays are precomputed.  A state
holds two colour masks, every piece's code packed four bits per square, the
totem square, both reserves packed four bits per (seat, value), the ply and
the result.  Legal-move lists are memoised per (destination, placement
squares, values in reserve), so a ply costs a few dict lookups.

Notation: ``<dest> <value><place>``, e.g. ``d5 3e6`` moves the totem to d5
and places a 3 on e6.
"""

from __future__ import annotations

import re
from typing import Any

from engine import Game, IllegalMove, InvalidState, Outcome

__all__ = ["Yoxii", "YoxiiState"]

_FILES = "abcdefg"
_SIZE = 7
_HOLE_NAMES = frozenset("a1 b1 a2 f1 g1 g2 a6 a7 b7 g6 f7 g7".split())
_COLORS = ("white", "red")
_LETTERS = ("W", "R")
_VALUES = (1, 2, 3, 4)
#: Pieces of each value a player starts with.
_START_COUNT = {1: 5, 2: 5, 3: 5, 4: 3}
_PIECES_PER_PLAYER = sum(_START_COUNT.values())
#: Both players' pieces fill the 36 squares around the totem's, and the
#: player to move then cannot move the totem: the game is over by then.
_MAX_PLIES = 2 * _PIECES_PER_PLAYER
_CENTRE = "d4"

_DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))

_NAME: list[str] = [f"{_FILES[i % _SIZE]}{i // _SIZE + 1}" for i in range(_SIZE * _SIZE)]
_INDEX: dict[str, int] = {name: i for i, name in enumerate(_NAME)}
_SQUARES: tuple[int, ...] = tuple(i for i, name in enumerate(_NAME) if name not in _HOLE_NAMES)
_EXISTS = sum(1 << i for i in _SQUARES)


def _on_board(rank: int, file: int) -> bool:
    return 0 <= rank < _SIZE and 0 <= file < _SIZE and (_EXISTS >> (rank * _SIZE + file)) & 1 == 1


def _ray(sq: int, dr: int, df: int) -> list[int]:
    """Squares from ``sq`` (exclusive) in one direction, up to a hole or the edge."""
    out = []
    rank, file = divmod(sq, _SIZE)
    rank, file = rank + dr, file + df
    while _on_board(rank, file):
        out.append(rank * _SIZE + file)
        rank, file = rank + dr, file + df
    return out


def _squares_of(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


#: One direction's jump ray: the first square's bit, then the bits after it.
_Ray = tuple[int, tuple[int, ...]]


def _tables() -> tuple[list[int], list[tuple[int, ...]], list[tuple[_Ray, ...]], list[dict[int, int]]]:
    """Per-square tables, indexed by grid index (holes get empty entries):
    neighbour masks, neighbour lists, jump rays and jump paths."""
    cells = _SIZE * _SIZE
    neigh = [0] * cells
    neigh_sqs: list[tuple[int, ...]] = [()] * cells
    jump_rays: list[tuple[_Ray, ...]] = [()] * cells
    jump_path: list[dict[int, int]] = [{} for _ in range(cells)]
    for sq in _SQUARES:
        rays = [_ray(sq, dr, df) for dr, df in _DIRECTIONS]
        neigh[sq] = sum(1 << r[0] for r in rays if r)
        neigh_sqs[sq] = tuple(_squares_of(neigh[sq]))
        # Only rays long enough for a jump (a first square and a landing).
        jump_rays[sq] = tuple((1 << r[0], tuple(1 << s for s in r[1:])) for r in rays if len(r) >= 2)
        for ray in rays:
            for k in range(1, len(ray)):
                # A jump from sq to ray[k] passes over ray[:k].
                jump_path[sq][ray[k]] = sum(1 << s for s in ray[:k])
    return neigh, neigh_sqs, jump_rays, jump_path


_NEIGH, _NEIGH_SQS, _JUMP_RAYS, _JUMP_PATH = _tables()

# Every well-formed move on existing squares, decoded: string -> (dest, value, place).
_DECODE: dict[str, tuple[int, int, int]] = {
    f"{_NAME[d]} {v}{_NAME[p]}": (d, v, p)
    for d in _SQUARES
    for p in _SQUARES
    if p != d
    for v in _VALUES
}
_SHAPE = re.compile(r"([a-z]\d+) (\d)([a-z]\d+)")

_MOVES_MEMO: dict[int, list[str]] = {}
_VALUE_MASK: dict[int, int] = {}


def _reserve_shift(seat: int, value: int) -> int:
    return seat * 16 + (value - 1) * 4


_FULL_RESERVE = sum(
    _START_COUNT[v] << _reserve_shift(seat, v) for seat in (0, 1) for v in _VALUES
)


class YoxiiState:
    """An immutable YOXII position, built by :meth:`Yoxii.new_state`,
    :meth:`Yoxii.apply` or :meth:`Yoxii.from_json`.  Equal positions compare
    and hash equal."""

    __slots__ = ("white", "red", "codes", "totem", "reserve", "ply", "outcome")

    white: int  # mask of white pieces
    red: int  # mask of red pieces
    codes: int  # 4 bits per square: 0 empty, 1..4 white value, 5..8 red value (value + 4)
    totem: int  # grid index of the totem
    reserve: int  # 4 bits per (seat, value), see _reserve_shift
    ply: int
    outcome: Outcome | None

    def __init__(
        self, white: int, red: int, codes: int, totem: int, reserve: int, ply: int, outcome: Outcome | None
    ) -> None:
        init = object.__setattr__
        init(self, "white", white)
        init(self, "red", red)
        init(self, "codes", codes)
        init(self, "totem", totem)
        init(self, "reserve", reserve)
        init(self, "ply", ply)
        init(self, "outcome", outcome)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a YoxiiState is immutable; Yoxii.apply returns a new one")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a YoxiiState is immutable")

    def _key(self) -> tuple[int, int, int]:
        # The pieces with their values (codes), the totem and the ply fix the
        # whole position; masks, reserve and outcome follow from them.
        return (self.codes, self.totem, self.ply)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, YoxiiState):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<YoxiiState ply={self.ply} totem={_NAME[self.totem]}>"


def _code_at(codes: int, sq: int) -> int:
    return (codes >> (4 * sq)) & 15


def _value_mask(reserve: int, seat: int) -> int:
    """Bit v-1 set for each value v the seat still holds."""
    nibbles = (reserve >> (16 * seat)) & 0xFFFF
    mask = _VALUE_MASK.get(nibbles)
    if mask is None:
        mask = sum(1 << (v - 1) for v in _VALUES if (nibbles >> ((v - 1) * 4)) & 15)
        _VALUE_MASK[nibbles] = mask
    return mask


def _jump_landings(totem: int, own: int, empty: int) -> int:
    """The squares the totem can jump to over lines of ``own`` pieces."""
    landings = 0
    for first, rest in _JUMP_RAYS[totem]:
        if first & own:
            for bit in rest:
                if bit & own:
                    continue
                if bit & empty:
                    landings |= bit
                break
    return landings


def _tally(codes: int, totem: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Each seat's ``(total, pieces)``: the values and the number of its
    pieces next to the totem, which decide the game when it ends."""
    totals = [0, 0]
    counts = [0, 0]
    for sq in _NEIGH_SQS[totem]:
        code = _code_at(codes, sq)
        if code:
            owner = 0 if code <= 4 else 1
            totals[owner] += code - 4 * owner
            counts[owner] += 1
    return (totals[0], counts[0]), (totals[1], counts[1])


def _blocked_outcome(white: int, red: int, codes: int, totem: int, seat: int) -> Outcome | None:
    """The result if ``seat``, to move, cannot move the totem; else ``None``."""
    empty = _EXISTS & ~(white | red) & ~(1 << totem)
    if _NEIGH[totem] & empty or _jump_landings(totem, red if seat else white, empty):
        return None
    # Higher total wins; equal totals, more pieces; equal counts, a draw.
    (white_total, white_count), (red_total, red_count) = _tally(codes, totem)
    if white_total != red_total:
        winner: int | None = 0 if white_total > red_total else 1
    elif white_count != red_count:
        winner = 0 if white_count > red_count else 1
    else:
        winner = None
    return Outcome(winner, "blocked", (white_total, red_total))


def totem_destinations(state: YoxiiState) -> tuple[int, int]:
    """Where the player to move may take the totem (a square set), and the
    squares free for the placement once it has left (its square included).
    Shared by ``legal_moves`` and the search bots' move-free tactics."""
    return destinations(state.white, state.red, state.totem, state.ply & 1)


def destinations(white: int, red: int, totem: int, seat: int) -> tuple[int, int]:
    """:func:`totem_destinations` on raw square sets, for searches that play
    on bitboards without building states."""
    own = red if seat else white
    free_after = _EXISTS & ~(white | red)
    empty = free_after & ~(1 << totem)
    dests = _NEIGH[totem] & empty
    if _NEIGH[totem] & own:
        dests |= _jump_landings(totem, own, empty)
    return dests, free_after


def _move_list(dest: int, places: int, values: int) -> list[str]:
    """Move strings for one destination, placement mask and value mask, in
    placement-square order then value order."""
    dname = _NAME[dest]
    vals = [v for v in _VALUES if values >> (v - 1) & 1]
    return [f"{dname} {v}{_NAME[p]}" for p in _squares_of(places) for v in vals]


class Yoxii(Game[YoxiiState]):
    """The YOXII rules, as written out in ``docs/engine.md``."""

    name = "yoxii"
    colors = ("white", "red")
    openings = 1
    max_game_length = _MAX_PLIES
    piece_letters = _LETTERS
    cell_legend = "W1..W4 white, R1..R4 red (by value); T the totem"

    def new_state(self, seed: int = 0, opening: int | None = None) -> YoxiiState:
        """The start position: totem on d4, full reserves, white to move.  YOXII
        has a single start position, so the seed does not change it."""
        if opening not in (None, 0):
            raise ValueError(f"yoxii has {self.openings} opening (0); got {opening!r}")
        return YoxiiState(0, 0, 0, _INDEX[_CENTRE], _FULL_RESERVE, 0, None)

    # -- moves ---------------------------------------------------------------

    def legal_moves(self, state: YoxiiState) -> list[str]:
        if state.outcome is not None:
            return []
        seat = state.ply & 1
        dests, free_after = totem_destinations(state)
        values = _value_mask(state.reserve, seat)
        moves: list[str] = []
        memo = _MOVES_MEMO
        while dests:
            low = dests & -dests
            dests ^= low
            dest = low.bit_length() - 1
            free = free_after ^ low
            places = _NEIGH[dest] & free
            if places:
                key = (places << 10) | (values << 6) | dest
                listed = memo.get(key)
                if listed is None:
                    listed = memo[key] = _move_list(dest, places, values)
                moves += listed
            else:
                # No free neighbour: any empty square.  Rare, and the masks
                # vary too much to be worth memoising.
                moves += _move_list(dest, free, values)
        return moves

    def apply(self, state: YoxiiState, move: str) -> YoxiiState:
        if state.outcome is not None:
            raise IllegalMove(f"the game is over; {move!r} cannot be played")
        try:
            decoded = _DECODE.get(move)
        except TypeError:  # an unhashable non-string
            decoded = None
        if decoded is None:
            raise IllegalMove(_malformed_reason(move))
        dest, value, place = decoded
        seat = state.ply & 1
        white, red = state.white, state.red
        own = red if seat else white
        totem = state.totem
        occupied = white | red
        dbit = 1 << dest
        if dest == totem:
            raise IllegalMove(f"{move!r}: the totem must move, and it already stands on {_NAME[dest]}")
        if dbit & occupied:
            raise IllegalMove(f"{move!r}: the totem cannot move to {_NAME[dest]}, a piece stands there")
        if not dbit & _NEIGH[totem]:
            path = _JUMP_PATH[totem].get(dest)
            if path is None:
                raise IllegalMove(
                    f"{move!r}: the totem on {_NAME[totem]} cannot reach {_NAME[dest]}: it is neither "
                    "a neighbour nor on a straight line from it"
                )
            if path & own != path:
                raise IllegalMove(
                    f"{move!r}: the totem on {_NAME[totem]} cannot jump to {_NAME[dest]}: the squares "
                    f"between are not all {_COLORS[seat]} pieces"
                )
        shift = _reserve_shift(seat, value)
        if not (state.reserve >> shift) & 15:
            raise IllegalMove(f"{move!r}: {_COLORS[seat]} has no piece of value {value} left")
        free = (_EXISTS & ~occupied) ^ dbit
        pbit = 1 << place
        if not pbit & free:
            raise IllegalMove(f"{move!r}: cannot place on {_NAME[place]}, it is not empty")
        if _NEIGH[dest] & free and not pbit & _NEIGH[dest]:
            raise IllegalMove(
                f"{move!r}: the piece must go next to the totem on {_NAME[dest]}, "
                f"and {_NAME[place]} is not a neighbour"
            )
        if seat:
            red |= pbit
        else:
            white |= pbit
        codes = state.codes | ((value + 4 * seat) << (4 * place))
        outcome = None
        if not _NEIGH[dest] & (free ^ pbit):
            outcome = _blocked_outcome(white, red, codes, dest, 1 - seat)
        return YoxiiState(white, red, codes, dest, state.reserve - (1 << shift), state.ply + 1, outcome)

    def normalise_move(self, text: str) -> str:
        """``D5  3E6`` -> ``d5 3e6``: all lower case."""
        return " ".join(text.split()).lower()

    # -- queries ---------------------------------------------------------------

    def outcome(self, state: YoxiiState) -> Outcome | None:
        return state.outcome

    def tally(self, state: YoxiiState) -> tuple[tuple[int, int], tuple[int, int]]:
        return _tally(state.codes, state.totem)

    def to_move(self, state: YoxiiState) -> int:
        return state.ply & 1

    def ply(self, state: YoxiiState) -> int:
        return state.ply

    def reserve(self, state: YoxiiState, seat: int) -> dict[str, int]:
        """Pieces ``seat`` still holds, by value: ``{"1": n1, "2": n2, "3": n3, "4": n4}``."""
        return {str(v): (state.reserve >> _reserve_shift(seat, v)) & 15 for v in _VALUES}

    def cell(self, state: YoxiiState, sq: int) -> str:
        """The protocol's cell code of grid index ``sq = rank * 7 + file`` (from 0;
        ``a1`` is 0, ``g7`` is 48): ``"#"``, ``""``, ``"T"``, ``"W1"``..``"R4"``."""
        return _cell(state, sq)

    # -- JSON ------------------------------------------------------------------

    def to_json(self, state: YoxiiState) -> dict[str, Any]:
        cells = _cells(state)
        return {
            "board": [cells[rank * _SIZE : rank * _SIZE + _SIZE] for rank in range(_SIZE)],
            "to_move": _COLORS[state.ply & 1],
            "ply": state.ply,
            "totem": _NAME[state.totem],
            "reserve": {color: self.reserve(state, seat) for seat, color in enumerate(_COLORS)},
        }

    def to_json_text(self, state: YoxiiState) -> str:
        # Cell codes, colours and square names need no JSON escapes, so the
        # text is joined directly from quoted cells (several times faster
        # than json.dumps): the referee sends one every ply.
        cells = _QUOTED_EMPTY_CELLS.copy()
        codes = state.codes
        mask = state.white | state.red
        while mask:
            low = mask & -mask
            sq = low.bit_length() - 1
            cells[sq] = _QUOTED_CODE_NAMES[(codes >> (4 * sq)) & 15]
            mask ^= low
        cells[state.totem] = '"T"'
        rows = "],[".join([",".join(cells[r : r + _SIZE]) for r in range(0, _SIZE * _SIZE, _SIZE)])
        r = state.reserve
        return (
            f'{{"board":[[{rows}]],"to_move":"{_COLORS[state.ply & 1]}","ply":{state.ply},'
            f'"totem":"{_NAME[state.totem]}","reserve":{{'
            f'"white":{{"1":{r & 15},"2":{r >> 4 & 15},"3":{r >> 8 & 15},"4":{r >> 12 & 15}}},'
            f'"red":{{"1":{r >> 16 & 15},"2":{r >> 20 & 15},"3":{r >> 24 & 15},"4":{r >> 28 & 15}}}}}}}'
        )

    def from_json(self, data: dict[str, Any]) -> YoxiiState:
        return _parse_state(data)

    def render(self, state: YoxiiState) -> str:
        lines = []
        for rank in reversed(range(_SIZE)):
            cells = []
            for file in range(_SIZE):
                cell = _cell(state, rank * _SIZE + file)
                cells.append({"#": "  ", "": " .", "T": " T"}.get(cell, cell))
            lines.append(f"{rank + 1} " + " ".join(cells).rstrip())
        lines.append("   " + "  ".join(_FILES))
        for seat, color in enumerate(_COLORS):
            held = "  ".join(f"{v}x{n}" for v, n in self.reserve(state, seat).items())
            lines.append(f"{color:>5} reserve: {held}")
        result = state.outcome
        if result is None:
            lines.append(f"ply {state.ply}, {_COLORS[state.ply & 1]} to move")
        else:
            assert result.scores is not None
            score = f"white {result.scores[0]}, red {result.scores[1]}"
            verdict = "draw" if result.winner is None else f"{_COLORS[result.winner]} wins"
            lines.append(f"ply {state.ply}, game over ({result.reason}): {verdict}; {score}")
        return "\n".join(lines)


#: Cell codes by 4-bit square code (0 empty, 1..4 white values, 5..8 red values).
_CODE_NAMES = ("",) + tuple(f"{letter}{v}" for letter in _LETTERS for v in _VALUES)
_EMPTY_CELLS = tuple("" if (_EXISTS >> sq) & 1 else "#" for sq in range(_SIZE * _SIZE))
_QUOTED_CODE_NAMES = tuple(f'"{name}"' for name in _CODE_NAMES)
_QUOTED_EMPTY_CELLS = [f'"{cell}"' for cell in _EMPTY_CELLS]


def _cells(state: YoxiiState) -> list[str]:
    """The protocol's cell codes of the 7x7 grid, ``a1`` first.  Fills only
    the occupied squares of an empty board: the referee needs this every ply."""
    cells = list(_EMPTY_CELLS)
    for sq in _squares_of(state.white | state.red):
        cells[sq] = _CODE_NAMES[_code_at(state.codes, sq)]
    cells[state.totem] = "T"
    return cells


def _cell(state: YoxiiState, sq: int) -> str:
    """The protocol's cell code for grid index ``sq``."""
    if not (_EXISTS >> sq) & 1:
        return "#"
    if sq == state.totem:
        return "T"
    code = _code_at(state.codes, sq)
    if not code:
        return ""
    seat = 0 if code <= 4 else 1
    return f"{_LETTERS[seat]}{code - 4 * seat}"


def _malformed_reason(move: object) -> str:
    """Why a string absent from the table of well-formed moves is refused."""
    expected = "expected '<dest> <value><place>' such as 'd5 3e6'"
    if not isinstance(move, str):
        return f"a move must be a string, not {type(move).__name__}; {expected}"
    shape = _SHAPE.fullmatch(move)
    if shape is None:
        return f"malformed move {move!r}: {expected}"
    dest, value, place = shape.groups()
    for square in (dest, place):
        if square not in _INDEX:
            return f"{move!r}: {square} is not a square (files a-g, ranks 1-7)"
        if square in _HOLE_NAMES:
            return f"{move!r}: {square} is a cut corner, not a square of the board"
    if value not in "1234":
        return f"{move!r}: piece values are 1 to 4, not {value}"
    # The only well-formed string left out of the table.
    return f"{move!r}: the piece cannot go on the square the totem moves to"


# -- from_json -------------------------------------------------------------------


def _parse_state(data: Any) -> YoxiiState:
    """Build a state from the protocol's state object, refusing anything inconsistent."""
    if not isinstance(data, dict):
        raise InvalidState(f"a yoxii state must be a JSON object, not {type(data).__name__}")
    missing = [k for k in ("board", "to_move", "ply", "totem", "reserve") if k not in data]
    if missing:
        raise InvalidState(f"yoxii state lacks {', '.join(missing)}")
    ply = data["ply"]
    if not isinstance(ply, int) or isinstance(ply, bool) or not 0 <= ply <= _MAX_PLIES:
        raise InvalidState(f"ply must be an integer from 0 to {_MAX_PLIES}, got {ply!r}")
    if data["to_move"] != _COLORS[ply & 1]:
        raise InvalidState(
            f"to_move is {data['to_move']!r} but at ply {ply} it must be {_COLORS[ply & 1]!r}"
        )
    white, red, codes, totem = _parse_board(data["board"])
    if data["totem"] != _NAME[totem]:
        raise InvalidState(f"totem is given as {data['totem']!r} but the board has it on {_NAME[totem]}")
    reserve = _parse_reserve(data["reserve"], codes)
    placed = (white.bit_count(), red.bit_count())
    if placed != ((ply + 1) // 2, ply // 2):
        raise InvalidState(
            f"after {ply} plies white must have {(ply + 1) // 2} pieces on the board and red "
            f"{ply // 2}, but there are {placed[0]} white and {placed[1]} red"
        )
    outcome = _blocked_outcome(white, red, codes, totem, ply & 1)
    return YoxiiState(white, red, codes, totem, reserve, ply, outcome)


def _parse_board(board: Any) -> tuple[int, int, int, int]:
    if not isinstance(board, list) or len(board) != _SIZE or any(
        not isinstance(row, list) or len(row) != _SIZE for row in board
    ):
        raise InvalidState("board must be 7 rows (ranks 1 to 7) of 7 cells (files a to g)")
    white = red = codes = 0
    totems = []
    for rank, row in enumerate(board):
        for file, cell in enumerate(row):
            sq = rank * _SIZE + file
            where = f"board[{rank}][{file}] ({_NAME[sq]})"
            exists = (_EXISTS >> sq) & 1
            if cell == "#":
                if exists:
                    raise InvalidState(f"{where} is a square of the board, not a hole '#'")
                continue
            if not exists:
                raise InvalidState(f"{where} is a cut corner and must be '#', got {cell!r}")
            if cell == "":
                continue
            if cell == "T":
                totems.append(sq)
                continue
            if not (isinstance(cell, str) and len(cell) == 2 and cell[0] in "WR" and cell[1] in "1234"):
                raise InvalidState(
                    f"{where} holds unknown cell {cell!r}; "
                    "expected '', 'T', 'W1'..'W4', 'R1'..'R4' or '#'"
                )
            seat = _LETTERS.index(cell[0])
            if seat:
                red |= 1 << sq
            else:
                white |= 1 << sq
            codes |= (int(cell[1]) + 4 * seat) << (4 * sq)
    if len(totems) != 1:
        where = ", ".join(_NAME[sq] for sq in totems) or "nowhere"
        raise InvalidState(f"the board must hold exactly one totem 'T', found {len(totems)} ({where})")
    return white, red, codes, totems[0]


def _parse_reserve(reserve: Any, codes: int) -> int:
    if not isinstance(reserve, dict) or set(reserve) != set(_COLORS):
        raise InvalidState("reserve must be an object with exactly the keys 'white' and 'red'")
    packed = 0
    for seat, color in enumerate(_COLORS):
        held = reserve[color]
        keys = [str(v) for v in _VALUES]
        if not isinstance(held, dict) or set(held) != set(keys):
            raise InvalidState(f"reserve.{color} must be an object with exactly the keys '1', '2', '3', '4'")
        for v in _VALUES:
            count = held[str(v)]
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise InvalidState(f"reserve.{color}.{v} must be a non-negative integer, got {count!r}")
            on_board = sum(1 for sq in _SQUARES if _code_at(codes, sq) == v + 4 * seat)
            if count + on_board != _START_COUNT[v]:
                raise InvalidState(
                    f"{color} has {on_board} piece(s) of value {v} on the board and {count} in reserve; "
                    f"together they must make {_START_COUNT[v]}"
                )
            packed |= count << _reserve_shift(seat, v)
    return packed
