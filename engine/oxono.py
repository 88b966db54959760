"""The OXONO rules engine.

Rules as implemented (the full text is in ``docs/engine.md``): a 6x6 board, two
totems X and O, seat 0 (pink) and seat 1 (black) with 8 X and 8 O pieces each.
A turn moves one totem whose symbol the mover still holds (slide; or, when the
totem is enclosed, jump to the first empty square past the run of occupied
squares next to it; or, when no jump lands, go to any empty square), then places
a piece of the mover's colour and the totem's symbol next to the totem (anywhere
when no neighbour is empty).  Four or more in a rank or file of one colour or one
symbol wins for the placer; 32 placements without a row is a draw.

The position is a handful of ints used as square sets (bit ``rank * 6 + file``),
so move generation is mostly table look-ups: rays, neighbour masks, move strings
and per-square lists of placements are all computed once at import.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from engine import Game, IllegalMove, InvalidState, Outcome

__all__ = ["Oxono", "OxonoState"]

SIZE = 6
N_SQUARES = SIZE * SIZE
FULL = (1 << N_SQUARES) - 1
FILES = "abcdef"
SYMBOLS = "XO"
PIECES_PER_SYMBOL = 8
MAX_PLIES = 2 * 2 * PIECES_PER_SYMBOL  # every piece of both players placed
COLORS = ("pink", "black")
# Totem squares of each opening: (X square, O square).
OPENINGS = ((2 * SIZE + 2, 3 * SIZE + 3), (3 * SIZE + 3, 2 * SIZE + 2))

_WIN = (Outcome(0, "alignment"), Outcome(1, "alignment"))
_DRAW = Outcome(None, "exhausted")


def _name(sq: int) -> str:
    return f"{FILES[sq % SIZE]}{sq // SIZE + 1}"


SQUARE_NAMES = tuple(_name(sq) for sq in range(N_SQUARES))


def _bits(mask: int) -> list[int]:
    """The squares of a square set, in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _names(mask: int) -> str:
    return ", ".join(SQUARE_NAMES[sq] for sq in _bits(mask))


def _build_rays() -> tuple[tuple[tuple[int, ...], ...], ...]:
    # Direction order (up, down, left, right) fixes the order of legal_moves.
    steps = ((0, 1), (0, -1), (-1, 0), (1, 0))
    rays = []
    for sq in range(N_SQUARES):
        f, r = sq % SIZE, sq // SIZE
        per_sq = []
        for df, dr in steps:
            ray = []
            nf, nr = f + df, r + dr
            while 0 <= nf < SIZE and 0 <= nr < SIZE:
                ray.append(nr * SIZE + nf)
                nf, nr = nf + df, nr + dr
            per_sq.append(tuple(ray))
        rays.append(tuple(per_sq))
    return tuple(rays)


#: RAYS[sq][d]: the squares met walking from ``sq`` in direction ``d``, nearest first.
RAYS = _build_rays()
#: NEIGHBOURS[sq]: the orthogonal neighbours of ``sq`` that exist, as a square set.
NEIGHBOURS = tuple(sum(1 << ray[0] for ray in RAYS[sq] if ray) for sq in range(N_SQUARES))
#: CROSS[sq]: every square in the rank and file of ``sq`` except itself.
CROSS = tuple(sum(1 << s for ray in RAYS[sq] for s in ray) for sq in range(N_SQUARES))


def _build_paths() -> tuple[tuple[int | None, ...], ...]:
    # PATHS[a][b]: the squares a slide from a to b crosses, b included; None when
    # b is not in a's rank or file.
    paths: list[list[int | None]] = [[None] * N_SQUARES for _ in range(N_SQUARES)]
    for a in range(N_SQUARES):
        for ray in RAYS[a]:
            mask = 0
            for b in ray:
                mask |= 1 << b
                paths[a][b] = mask
    return tuple(tuple(row) for row in paths)


PATHS = _build_paths()


def _build_windows() -> tuple[tuple[int, ...], ...]:
    # Every run of four squares in a rank or file, listed under each of its squares.
    windows: list[list[int]] = [[] for _ in range(N_SQUARES)]
    for line in range(SIZE):
        for start in range(SIZE - 3):
            rank = [line * SIZE + start + k for k in range(4)]
            file = [(start + k) * SIZE + line for k in range(4)]
            for squares in (rank, file):
                mask = sum(1 << s for s in squares)
                for s in squares:
                    windows[s].append(mask)
    return tuple(tuple(w) for w in windows)


#: WINDOWS[sq]: the four-square runs (rank or file) that contain ``sq``.
WINDOWS = _build_windows()
ALL_WINDOWS = tuple(sorted({w for ws in WINDOWS for w in ws}))

#: MOVE_STRINGS[t][dest][place]: notation of every (totem, destination, placement) triple.
MOVE_STRINGS = tuple(
    tuple(tuple(f"{SYMBOLS[t]}{SQUARE_NAMES[d]} {SQUARE_NAMES[p]}" for p in range(N_SQUARES)) for d in range(N_SQUARES))
    for t in range(2)
)
#: Decodes notation back to (totem, destination, placement); only well-formed strings are keys.
MOVE_DECODE = {
    MOVE_STRINGS[t][d][p]: (t, d, p) for t in range(2) for d in range(N_SQUARES) for p in range(N_SQUARES)
}


def _build_placements() -> tuple[tuple[dict[int, list[str]], ...], ...]:
    # For each totem and destination, the moves for every non-empty set of free
    # neighbours: the common case of move generation becomes one dict look-up.
    table = []
    for t in range(2):
        per_dest = []
        for d in range(N_SQUARES):
            nbrs = _bits(NEIGHBOURS[d])
            lists: dict[int, list[str]] = {}
            for subset in range(1, 1 << len(nbrs)):
                chosen = [nbrs[i] for i in range(len(nbrs)) if subset >> i & 1]
                lists[sum(1 << s for s in chosen)] = [MOVE_STRINGS[t][d][p] for p in chosen]
            per_dest.append(lists)
        table.append(tuple(per_dest))
    return tuple(table)


PLACEMENTS = _build_placements()

# Slide destinations depend only on the occupancy of the totem's rank and file,
# so they are memoised under that (at most 2**10 keys per square).
_slide_cache: dict[int, tuple[int, ...]] = {}


def _slides(pos: int, occ: int) -> tuple[int, ...]:
    key = (occ & CROSS[pos]) << 6 | pos
    dests = _slide_cache.get(key)
    if dests is None:
        found = []
        for ray in RAYS[pos]:
            for sq in ray:
                if occ >> sq & 1:
                    break
                found.append(sq)
        dests = _slide_cache[key] = tuple(found)
    return dests


def _jumps(pos: int, occ: int) -> list[int]:
    """Landing squares of an enclosed totem: first empty square past the run, per direction."""
    landings = []
    for ray in RAYS[pos]:
        for sq in ray:
            if not occ >> sq & 1:
                landings.append(sq)
                break
    return landings


def _destinations(pos: int, occ: int) -> tuple[int, ...] | list[int]:
    """Where a totem on ``pos`` may go; ``occ`` holds every piece and the other totem."""
    if NEIGHBOURS[pos] & ~occ:
        return _slides(pos, occ)
    landings = _jumps(pos, occ)
    if landings:
        return landings
    return _bits(FULL & ~occ & ~(1 << pos))


class OxonoState(NamedTuple):
    """An OXONO position; an immutable value (equal positions compare and hash equal).

    The fields are square sets (bit ``rank * 6 + file``, ``a1`` is bit 0) and
    counters; treat them as read-only and use :class:`Oxono` to read the game.
    """

    pink: int  #: squares holding pink pieces
    black: int  #: squares holding black pieces
    xs: int  #: squares holding pieces with symbol X (either colour)
    totem_x: int  #: square of totem X
    totem_o: int  #: square of totem O
    ply: int  #: placements so far
    result: Outcome | None  #: set by the move that ended the game


def _alignment(own: int, sym: int, place: int) -> bool:
    for w in WINDOWS[place]:
        if own & w == w or sym & w == w:
            return True
    return False


def _cells(state: OxonoState) -> list[str]:
    """The protocol's cell codes of all 36 squares, ``a1`` first.  Fills only
    the occupied squares: the referee needs this every ply."""
    cells = [""] * N_SQUARES
    for mask, code in (
        (state.pink & state.xs, "PX"),
        (state.pink & ~state.xs, "PO"),
        (state.black & state.xs, "BX"),
        (state.black & ~state.xs, "BO"),
    ):
        for sq in _bits(mask):
            cells[sq] = code
    cells[state.totem_x] = "TX"
    cells[state.totem_o] = "TO"
    return cells


_QUOTED_EMPTY = ['""'] * N_SQUARES


class Oxono(Game[OxonoState]):
    """OXONO: seat 0 is pink, seat 1 is black; moves look like ``Xc5 c6``."""

    name = "oxono"
    colors = COLORS
    openings = 2
    max_game_length = MAX_PLIES
    piece_letters = ("P", "B")
    cell_legend = "PX/PO pink, BX/BO black; TX/TO the totems"

    def new_state(self, seed: int = 0, opening: int | None = None) -> OxonoState:
        """Opening 0 has totem X on c3 and O on d4, opening 1 the reverse."""
        if opening is None:
            opening = self.opening_of(seed)
        if type(opening) is not int or opening not in (0, 1):
            raise ValueError(f"oxono has openings 0 and 1, not {opening!r}")
        tx, to = OPENINGS[opening]
        return OxonoState(0, 0, 0, tx, to, 0, None)

    def legal_moves(self, state: OxonoState) -> list[str]:
        pink, black, xs, tx, to, ply, result = state
        if result is not None:
            return []
        pieces = pink | black
        own = black if ply & 1 else pink
        moves: list[str] = []
        # Reserve rule: a totem moves only if the mover still holds its symbol.
        for t, pos, other, placed in (
            (0, tx, to, (own & xs).bit_count()),
            (1, to, tx, (own & ~xs).bit_count()),
        ):
            if placed == PIECES_PER_SYMBOL:
                continue
            occ = pieces | 1 << other
            empty = FULL & ~occ  # the square the totem leaves is empty again
            lists = PLACEMENTS[t]
            strings = MOVE_STRINGS[t]
            for dest in _destinations(pos, occ):
                free = NEIGHBOURS[dest] & empty
                if free:
                    moves += lists[dest][free]
                else:
                    row = strings[dest]
                    moves += [row[p] for p in _bits(empty & ~(1 << dest))]
        return moves

    def apply(self, state: OxonoState, move: str) -> OxonoState:
        pink, black, xs, tx, to, ply, result = state
        if result is not None:
            raise IllegalMove(f"the game is over ({self._describe(result)}); no move {move!r} is possible")
        decoded = MOVE_DECODE.get(move) if isinstance(move, str) else None
        if decoded is None:
            raise IllegalMove(
                f"malformed move {move!r}: expected a totem letter X or O, its destination square, "
                "a space and the placement square, like 'Xc5 c6'"
            )
        t, dest, place = decoded
        seat = ply & 1
        own = black if seat else pink
        symbol = SYMBOLS[t]
        placed = (own & xs).bit_count() if t == 0 else (own & ~xs).bit_count()
        if placed == PIECES_PER_SYMBOL:
            raise IllegalMove(
                f"{move!r}: {COLORS[seat]} has no {symbol} piece left, so totem {symbol} cannot be moved"
            )
        pos, other = (tx, to) if t == 0 else (to, tx)
        occ = pink | black | 1 << other
        self._check_destination(move, symbol, pos, dest, occ)
        empty = FULL & ~occ & ~(1 << dest)
        bit = 1 << place
        if not empty & bit:
            what = "where the totem lands" if place == dest else "occupied"
            raise IllegalMove(f"{move!r}: placement square {SQUARE_NAMES[place]} is {what}")
        free = NEIGHBOURS[dest] & empty
        if free and not free & bit:
            raise IllegalMove(
                f"{move!r}: the piece must go on an empty square next to totem {symbol} "
                f"on {SQUARE_NAMES[dest]} ({_names(free)})"
            )
        if seat:
            black |= bit
            own = black
        else:
            pink |= bit
            own = pink
        if t == 0:
            xs |= bit
            sym = xs
            tx = dest
        else:
            sym = (pink | black) & ~xs
            to = dest
        ply += 1
        if _alignment(own, sym, place):
            result = _WIN[seat]
        elif ply == MAX_PLIES:
            result = _DRAW
        return OxonoState(pink, black, xs, tx, to, ply, result)

    @staticmethod
    def _check_destination(move: str, symbol: str, pos: int, dest: int, occ: int) -> None:
        """Raise IllegalMove unless totem ``symbol`` on ``pos`` may move to ``dest``."""
        here = f"totem {symbol} on {SQUARE_NAMES[pos]}"
        if dest == pos:
            raise IllegalMove(f"{move!r}: {here} must move; it cannot stay on {SQUARE_NAMES[dest]}")
        if occ >> dest & 1:
            raise IllegalMove(f"{move!r}: {here} cannot move to {SQUARE_NAMES[dest]}, which is occupied")
        if NEIGHBOURS[pos] & ~occ:
            path = PATHS[pos][dest]
            if path is None:
                raise IllegalMove(
                    f"{move!r}: {here} slides in a straight line along its rank or file; "
                    f"{SQUARE_NAMES[dest]} is not on either"
                )
            blocked = path & occ
            if blocked:
                raise IllegalMove(
                    f"{move!r}: {here} cannot slide to {SQUARE_NAMES[dest]}: the way is blocked at {_names(blocked)}"
                )
            return
        landings = _jumps(pos, occ)
        if landings and dest not in landings:
            where = ", ".join(SQUARE_NAMES[sq] for sq in landings)
            raise IllegalMove(f"{move!r}: {here} is enclosed and may only jump to {where}")

    def normalise_move(self, text: str) -> str:
        """``xc5  C6`` -> ``Xc5 c6``: the totem's letter upper case, the squares lower case."""
        text = " ".join(text.split())
        return text[:1].upper() + text[1:].lower()

    def outcome(self, state: OxonoState) -> Outcome | None:
        return state.result

    def to_move(self, state: OxonoState) -> int:
        return state.ply & 1

    def ply(self, state: OxonoState) -> int:
        return state.ply

    def reserve(self, state: OxonoState, seat: int) -> dict[str, int]:
        """Pieces ``seat`` still holds, by symbol: ``{"X": n, "O": m}``."""
        own = state.black if seat else state.pink
        return {
            "X": PIECES_PER_SYMBOL - (own & state.xs).bit_count(),
            "O": PIECES_PER_SYMBOL - (own & ~state.xs).bit_count(),
        }

    def cell(self, state: OxonoState, sq: int) -> str:
        """The protocol's cell code of square ``sq`` (``""``, ``"TX"``, ``"PO"``, ...)."""
        if sq == state.totem_x:
            return "TX"
        if sq == state.totem_o:
            return "TO"
        symbol = "X" if state.xs >> sq & 1 else "O"
        if state.pink >> sq & 1:
            return "P" + symbol
        if state.black >> sq & 1:
            return "B" + symbol
        return ""

    def to_json(self, state: OxonoState) -> dict[str, Any]:
        cells = _cells(state)
        return {
            "board": [cells[r * SIZE : r * SIZE + SIZE] for r in range(SIZE)],
            "to_move": COLORS[state.ply & 1],
            "ply": state.ply,
            "totems": {"X": SQUARE_NAMES[state.totem_x], "O": SQUARE_NAMES[state.totem_o]},
            "reserve": {COLORS[seat]: self.reserve(state, seat) for seat in (0, 1)},
        }

    def to_json_text(self, state: OxonoState) -> str:
        # Cell codes, colours and square names need no JSON escapes, so the
        # text is joined directly from quoted cells (several times faster
        # than json.dumps): the referee sends one every ply.
        pink, black, xs, tx, to, ply, _ = state
        cells = _QUOTED_EMPTY.copy()
        for mask, code in ((pink & xs, '"PX"'), (pink & ~xs, '"PO"'), (black & xs, '"BX"'), (black & ~xs, '"BO"')):
            while mask:
                low = mask & -mask
                cells[low.bit_length() - 1] = code
                mask ^= low
        cells[tx] = '"TX"'
        cells[to] = '"TO"'
        rows = "],[".join([",".join(cells[r : r + SIZE]) for r in range(0, N_SQUARES, SIZE)])
        n = PIECES_PER_SYMBOL
        return (
            f'{{"board":[[{rows}]],"to_move":"{COLORS[ply & 1]}","ply":{ply},'
            f'"totems":{{"X":"{SQUARE_NAMES[tx]}","O":"{SQUARE_NAMES[to]}"}},'
            f'"reserve":{{"pink":{{"X":{n - (pink & xs).bit_count()},"O":{n - (pink & ~xs).bit_count()}}},'
            f'"black":{{"X":{n - (black & xs).bit_count()},"O":{n - (black & ~xs).bit_count()}}}}}}}'
        )

    def from_json(self, data: dict[str, Any]) -> OxonoState:
        if not isinstance(data, dict):
            raise InvalidState(f"an oxono state must be a JSON object, not {type(data).__name__}")
        missing = [k for k in ("board", "to_move", "ply", "totems", "reserve") if k not in data]
        if missing:
            raise InvalidState(f"oxono state lacks {', '.join(missing)}")
        pink, black, xs, totems = _read_board(data["board"])
        ply = data["ply"]
        if type(ply) is not int or not 0 <= ply <= MAX_PLIES:
            raise InvalidState(f"ply must be an integer from 0 to {MAX_PLIES}, not {ply!r}")
        if data["to_move"] not in COLORS:
            raise InvalidState(f"to_move must be 'pink' or 'black', not {data['to_move']!r}")
        if data["to_move"] != COLORS[ply & 1]:
            raise InvalidState(f"to_move is {data['to_move']!r} but at ply {ply} {COLORS[ply & 1]} moves")
        _check_totems(data["totems"], totems)
        state = OxonoState(pink, black, xs, totems["X"], totems["O"], ply, None)
        _check_counts(self, state, data["reserve"])
        return state._replace(result=_settled_result(pink, black, xs, ply))

    def render(self, state: OxonoState) -> str:
        files = "   " + " ".join(f" {f}" for f in FILES)
        lines = [files]
        for r in reversed(range(SIZE)):
            cells = " ".join(self.cell(state, r * SIZE + f) or " ." for f in range(SIZE))
            lines.append(f"{r + 1}  {cells}  {r + 1}")
        lines.append(files)
        lines.append("PX/PO pink pieces, BX/BO black pieces, TX/TO totems")
        res = {c: self.reserve(state, s) for s, c in enumerate(COLORS)}
        lines.append(
            "reserve: " + ", ".join(f"{c} X{res[c]['X']} O{res[c]['O']}" for c in COLORS) + f"; ply {state.ply}"
        )
        if state.result is None:
            lines.append(f"{COLORS[state.ply & 1]} to move")
        else:
            lines.append(f"game over: {self._describe(state.result)}")
        return "\n".join(lines)

    @staticmethod
    def _describe(result: Outcome) -> str:
        if result.winner is None:
            return f"draw ({result.reason})"
        return f"{COLORS[result.winner]} won by {result.reason}"


_CELLS = {"": None, "TX": None, "TO": None, "PX": (0, 0), "PO": (0, 1), "BX": (1, 0), "BO": (1, 1)}


def _read_board(board: Any) -> tuple[int, int, int, dict[str, int]]:
    """Square sets (pink, black, X symbol) and totem squares from the protocol board."""
    if not isinstance(board, list) or len(board) != SIZE:
        raise InvalidState(f"board must be a list of {SIZE} ranks")
    pink = black = xs = 0
    totems: dict[str, list[int]] = {"X": [], "O": []}
    for r, rank in enumerate(board):
        if not isinstance(rank, list) or len(rank) != SIZE:
            raise InvalidState(f"board rank {r + 1} must be a list of {SIZE} cells")
        for f, code in enumerate(rank):
            sq = r * SIZE + f
            if not isinstance(code, str) or code not in _CELLS:
                raise InvalidState(
                    f"unknown cell code {code!r} on {SQUARE_NAMES[sq]}; expected one of {sorted(_CELLS)}"
                )
            if code in ("TX", "TO"):
                totems[code[1]].append(sq)
            elif code:
                seat, t = _CELLS[code]  # type: ignore[misc]
                if seat:
                    black |= 1 << sq
                else:
                    pink |= 1 << sq
                if t == 0:
                    xs |= 1 << sq
    for symbol, squares in totems.items():
        if len(squares) != 1:
            where = f" (on {', '.join(SQUARE_NAMES[s] for s in squares)})" if squares else ""
            raise InvalidState(f"the board must hold exactly one totem {symbol}, found {len(squares)}{where}")
    return pink, black, xs, {s: sq[0] for s, sq in totems.items()}


def _check_totems(field: Any, on_board: dict[str, int]) -> None:
    if not isinstance(field, dict) or set(field) != {"X", "O"}:
        raise InvalidState(f"totems must map 'X' and 'O' to squares, not {field!r}")
    for symbol, sq in on_board.items():
        if field[symbol] != SQUARE_NAMES[sq]:
            raise InvalidState(
                f"totems says {symbol} is on {field[symbol]!r} but the board has it on {SQUARE_NAMES[sq]}"
            )


def _check_counts(game: Oxono, state: OxonoState, reserve: Any) -> None:
    """Board, reserve and ply must agree: one piece of the mover's colour per ply."""
    if not isinstance(reserve, dict) or set(reserve) != set(COLORS):
        raise InvalidState(f"reserve must map 'pink' and 'black' to piece counts, not {reserve!r}")
    for seat, color in enumerate(COLORS):
        given = reserve[color]
        if not isinstance(given, dict) or set(given) != {"X", "O"}:
            raise InvalidState(f"reserve of {color} must map 'X' and 'O' to counts, not {given!r}")
        actual = game.reserve(state, seat)
        for symbol in SYMBOLS:
            n = given[symbol]
            if type(n) is not int or not 0 <= n <= PIECES_PER_SYMBOL:
                raise InvalidState(f"reserve {color} {symbol} must be an integer from 0 to 8, not {n!r}")
            if n != actual[symbol]:
                raise InvalidState(
                    f"reserve {color} {symbol} is {n} but the board holds {PIECES_PER_SYMBOL - actual[symbol]} "
                    f"such pieces; board and reserve must add up to {PIECES_PER_SYMBOL}"
                )
        on_board = (state.black if seat else state.pink).bit_count()
        expected = (state.ply + 1 - seat) // 2
        if on_board != expected:
            raise InvalidState(f"at ply {state.ply} {color} has placed {expected} pieces, but the board holds {on_board}")


def _settled_result(pink: int, black: int, xs: int, ply: int) -> Outcome | None:
    """The outcome of a position read from JSON, refusing rows the last move cannot explain."""
    rows = [
        w for w in ALL_WINDOWS
        if pink & w == w or black & w == w or xs & w == w or (pink | black) & ~xs & w == w
    ]
    if not rows:
        return _DRAW if ply == MAX_PLIES else None
    last = (ply - 1) & 1
    common = black if last else pink
    for w in rows:
        common &= w
    if not common:
        raise InvalidState(
            f"the board holds rows of four that the last move ({COLORS[last]}, ply {ply}) cannot "
            "have completed together; the game would have ended earlier"
        )
    return _WIN[last]
