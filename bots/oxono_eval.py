"""OXONO knowledge for the search bots: immediate wins found on the engine's
bitboards (without trying every move), and a static evaluation.

Both read :class:`engine.oxono.OxonoState` fields directly: square sets with
bit ``rank * 6 + file``.
"""

from __future__ import annotations

from engine.oxono import (
    ALL_WINDOWS,
    FULL,
    MOVE_STRINGS,
    NEIGHBOURS,
    PIECES_PER_SYMBOL,
    OxonoState,
    _bits,
    _destinations,
)

__all__ = ["winning_moves", "has_winning_move", "evaluate", "WIN"]

#: Score of a won position; wins sooner score higher (``WIN - plies``).
WIN = 100_000

# Squares where a row of four may start: files a-c going right, ranks 1-3 going up.
_RIGHT_STARTS = sum(1 << (r * 6 + f) for r in range(6) for f in range(3))
_UP_STARTS = sum(1 << (r * 6 + f) for r in range(3) for f in range(6))
_DIRECTIONS = ((1, _RIGHT_STARTS), (6, _UP_STARTS))


def _gaps(mask: int) -> int:
    """Squares that would complete a row of four with three squares of ``mask``
    (bit-parallel over all rows at once: each term keeps the starts whose
    other three squares are in ``mask`` and shifts them onto the gap)."""
    found = 0
    for d, starts in _DIRECTIONS:
        s1, s2, s3 = mask >> d, mask >> 2 * d, mask >> 3 * d
        found |= starts & s1 & s2 & s3
        found |= (starts & mask & s2 & s3) << d
        found |= (starts & mask & s1 & s3) << 2 * d
        found |= (starts & mask & s1 & s2) << 3 * d
    return found


def _win_squares(state: OxonoState) -> tuple[int, int]:
    """For the player to move, the squares where a piece of symbol X (first)
    or O (second) would complete a row.  A symbol the player no longer holds
    gives 0.  The square a totem leaves may take the piece; the other totem's
    may not, and occupied squares never."""
    pink, black, xs, tx, to, ply, _ = state
    own = black if ply & 1 else pink
    pieces = pink | black
    os_ = pieces & ~xs
    colour = _gaps(own)
    free = FULL & ~pieces
    x_wins = o_wins = 0
    if (own & xs).bit_count() < PIECES_PER_SYMBOL:
        x_wins = (colour | _gaps(xs)) & free & ~(1 << to)
    if (own & os_).bit_count() < PIECES_PER_SYMBOL:
        o_wins = (colour | _gaps(os_)) & free & ~(1 << tx)
    return x_wins, o_wins


def _scan(state: OxonoState, first_only: bool) -> list[str]:
    pink, black, xs, tx, to, ply, result = state
    if result is not None:
        return []
    wins = _win_squares(state)
    pieces = pink | black
    moves: list[str] = []
    for t, pos, other in ((0, tx, to), (1, to, tx)):
        targets = wins[t]
        if not targets:
            continue
        occ = pieces | 1 << other
        empty = FULL & ~occ
        strings = MOVE_STRINGS[t]
        for dest in _destinations(pos, occ):
            free = NEIGHBOURS[dest] & empty & ~(1 << dest)
            hits = (free or empty & ~(1 << dest)) & targets
            if hits:
                for place in _bits(hits):
                    moves.append(strings[dest][place])
                    if first_only:
                        return moves
    return moves


def winning_moves(state: OxonoState) -> list[str]:
    """The moves that win at once for the player to move."""
    return _scan(state, False)


def has_winning_move(state: OxonoState) -> bool:
    return bool(_scan(state, True))


# Weights of a row of four still open to one side, by pieces already in it.
_OWN_ROW = (0, 2, 9, 40, 0)
# A row of one symbol is open to both players: worth a little to the one who moves next.
_SYMBOL_ROW = (0, 1, 3, 12, 0)


def evaluate(state: OxonoState) -> int:
    """The position from the point of view of the player to move, in rough
    hundredths of a piece: rows of four still open to each colour weighted by
    how few pieces they miss, rows of one symbol, the totems' mobility and the
    pieces left in each reserve."""
    pink, black, xs, tx, to, ply, _ = state
    me = ply & 1
    own, opp = (black, pink) if me else (pink, black)
    pieces = pink | black
    os_ = pieces & ~xs
    totems = 1 << tx | 1 << to
    score = 0
    for w in ALL_WINDOWS:
        if w & totems:
            continue
        o = w & own
        p = w & opp
        if not p:
            score += _OWN_ROW[o.bit_count()]
        if not o:
            score -= _OWN_ROW[p.bit_count()]
        x = w & xs
        if not w & os_:
            score += _SYMBOL_ROW[x.bit_count()]
        elif not x:
            score += _SYMBOL_ROW[(w & os_).bit_count()]
    # Mobility: how many totem moves each side has, given the symbols it holds.
    mobility = 0
    for seat, holder in ((me, own), (1 - me, opp)):
        sign = 1 if seat == me else -1
        for t, pos, other in ((0, tx, to), (1, to, tx)):
            held = PIECES_PER_SYMBOL - (holder & (xs if t == 0 else os_)).bit_count()
            if held:
                mobility += sign * min(len(_destinations(pos, pieces | 1 << other)), 8)
            # A player down to one symbol lets the opponent steer that totem alone.
            elif sign > 0:
                score -= 6
            else:
                score += 6
    return score + mobility
