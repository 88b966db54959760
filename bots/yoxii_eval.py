"""YOXII knowledge for the search bots: the moves that end the game at once
(found without trying every move), and a static evaluation.

A YOXII game ends when the player to move cannot move the totem, so a move
can only end it if it leaves the totem's new square without an empty
neighbour: the totem lands where at most one neighbour is free and the piece
fills it.  Only those few moves are played out to see who wins.
"""

from __future__ import annotations

from engine.yoxii import (
    _EXISTS,
    _NAME,
    _NEIGH,
    _NEIGH_SQS,
    _VALUES,
    YoxiiState,
    _blocked_outcome,
    _jump_landings,
    _reserve_shift,
    _squares_of,
    destinations,
    totem_destinations,
)

__all__ = ["winning_moves", "has_winning_move", "ending_moves", "extreme_values", "evaluate", "playout", "WIN"]

WIN = 100_000


#: The highest value held, by a seat's 16 reserve bits (4 per value, 1 to 4).
_TOP = {
    n1 | n2 << 4 | n3 << 8 | n4 << 12: 4 if n4 else 3 if n3 else 2 if n2 else 1 if n1 else 0
    for n1 in range(6)
    for n2 in range(6)
    for n3 in range(6)
    for n4 in range(4)
}


def _top_value(reserve: int, seat: int) -> int:
    """The highest value ``seat`` still holds (0 when none)."""
    return _TOP[(reserve >> (16 * seat)) & 0xFFFF]


def ending_moves(state: YoxiiState) -> list[str]:
    """Every move after which the game may be over (the totem's new square has
    no empty neighbour); the caller applies them to see the outcome."""
    if state.outcome is not None:
        return []
    dests, free_after = totem_destinations(state)
    seat = state.ply & 1
    values = [v for v in _VALUES if (state.reserve >> _reserve_shift(seat, v)) & 15]
    moves = []
    while dests:
        low = dests & -dests
        dests ^= low
        dest = low.bit_length() - 1
        free = free_after ^ low
        around = _NEIGH[dest] & free
        if around and not around & (around - 1):
            place = around.bit_length() - 1
            moves += [f"{_NAME[dest]} {v}{_NAME[place]}" for v in values]
        elif not around and values:
            # Placed anywhere, away from the totem: its value does not count,
            # but where it goes may close a jump line of the opponent.
            moves += [f"{_NAME[dest]} {values[0]}{_NAME[sq]}" for sq in _squares_of(free)]
    return moves


def winning_moves(state: YoxiiState, game) -> list[str]:  # type: ignore[no-untyped-def]
    """The moves that end the game at once with a win for the player to move."""
    if not has_winning_move(state, game):
        return []
    me = state.ply & 1
    wins = []
    for move in ending_moves(state):
        outcome = game.apply(state, move).outcome
        if outcome is not None and outcome.winner == me:
            wins.append(move)
    return wins


def has_winning_move(state: YoxiiState, game) -> bool:  # type: ignore[no-untyped-def]
    """Whether the player to move can end the game with a win, decided on the
    bitboards (see :func:`_can_win`)."""
    if state.outcome is not None:
        return False
    return _can_win(state.white, state.red, state.codes, state.totem, state.reserve, state.ply & 1)


def _can_win(white: int, red: int, codes: int, totem: int, reserve: int, me: int) -> bool:
    """Whether ``me``, to move, can end the game with a win: a destination with
    one free neighbour is closed with the highest value in reserve (the best
    for the closer), and one with none ends the game if the piece, placed
    anywhere, leaves the opponent no jump."""
    value = _top_value(reserve, me)
    if not value:
        return False
    dests, free_after = destinations(white, red, totem, me)
    code = value + 4 * me
    while dests:
        low = dests & -dests
        dests ^= low
        dest = low.bit_length() - 1
        free = free_after ^ low
        around = _NEIGH[dest] & free
        if around & (around - 1):
            continue  # two or more free neighbours: the game goes on
        places = [around.bit_length() - 1] if around else _squares_of(free)
        for place in places:
            bit = 1 << place
            outcome = _blocked_outcome(
                white if me else white | bit, red | bit if me else red, codes | (code << (4 * place)), dest, 1 - me
            )
            if outcome is not None and outcome.winner == me:
                return True
    return False


#: Random moves a playout draws before it accepts one that lets the opponent win (as bots.mcts).
_REDRAWS = 3


def playout(state: YoxiiState, rng, trace: list[str] | None = None) -> int | None:  # type: ignore[no-untyped-def]
    """Play ``state`` to its end on raw bitboards, as ``bots.mcts`` plays a
    playout (take a win on the move; redraw a move that hands the opponent
    one), about twice as fast as through the engine's move strings.  A random
    move is a random destination, then a random free neighbour of it (any
    free square when it has none), then a random value in reserve.  Returns
    the winning seat, or None for a draw; ``trace`` (a list) receives the
    moves played, the last one excepted when it is a win found on the move."""
    if state.outcome is not None:
        return state.outcome.winner
    white, red, codes, totem, reserve, ply = state.white, state.red, state.codes, state.totem, state.reserve, state.ply
    random = rng.random
    while True:
        me = ply & 1
        if _can_win(white, red, codes, totem, reserve, me):
            return me
        dests, free_after = destinations(white, red, totem, me)
        dest_list = _squares_of(dests)
        nibbles = (reserve >> (16 * me)) & 0xFFFF
        values = [v for v in _VALUES if (nibbles >> ((v - 1) * 4)) & 15]
        for attempt in range(_REDRAWS + 1):
            dest = dest_list[int(random() * len(dest_list))]
            free = free_after & ~(1 << dest)
            places = _placements(dest, free)
            place = places[int(random() * len(places))]
            value = values[int(random() * len(values))]
            bit = 1 << place
            n_white = white if me else white | bit
            n_red = red | bit if me else red
            n_codes = codes | ((value + 4 * me) << (4 * place))
            n_reserve = reserve - (1 << _reserve_shift(me, value))
            outcome = None
            if not _NEIGH[dest] & (free ^ bit):
                outcome = _blocked_outcome(n_white, n_red, n_codes, dest, 1 - me)
            if attempt == _REDRAWS:
                break
            if outcome is None:
                if not _can_win(n_white, n_red, n_codes, dest, n_reserve, 1 - me):
                    break
            elif outcome.winner != 1 - me:
                break
        if trace is not None:
            trace.append(f"{_NAME[dest]} {value}{_NAME[place]}")
        if outcome is not None:
            return outcome.winner
        white, red, codes, totem, reserve, ply = n_white, n_red, n_codes, dest, n_reserve, ply + 1


def _placements(dest: int, free: int) -> list[int]:
    """Where a piece may go once the totem stands on ``dest``."""
    around = _NEIGH[dest] & free
    return _squares_of(around or free)


def extreme_values(moves: list[str]) -> list[str]:
    """The moves placing the lowest or the highest value on offer: the real
    choice is between spending a big piece now and keeping it, so the middle
    values are left out of the search below the root (halves the branching)."""
    values = {move[3] for move in moves}  # "<dest> <value><place>"
    if len(values) <= 2:
        return moves
    keep = (min(values), max(values))
    return [move for move in moves if move[3] in keep]


def evaluate(state: YoxiiState) -> int:
    """The position from the point of view of the player to move: the score
    around the totem as it stands (values, then piece count as tie-break),
    how many squares the totem can reach for each side (empty neighbours and
    jump lines of their own pieces), and how close it is to being enclosed,
    which favours whoever holds the score around it when it happens."""
    me = state.ply & 1
    totem = state.totem
    codes = state.codes
    white, red = state.white, state.red
    around = [0, 0]
    count = [0, 0]
    for sq in _NEIGH_SQS[totem]:
        code = (codes >> (4 * sq)) & 15
        if code:
            owner = 0 if code <= 4 else 1
            around[owner] += code - 4 * owner
            count[owner] += 1
    free = _EXISTS & ~(white | red) & ~(1 << totem)
    open_around = (_NEIGH[totem] & free).bit_count()
    lead = (around[me] - around[1 - me]) * 10 + (count[me] - count[1 - me]) * 3
    # The fewer free squares around the totem, the more the present score is the final one.
    urgency = 4 if open_around <= 2 else 2 if open_around <= 4 else 1
    own, opp = (red, white) if me else (white, red)
    jumps_me = _jump_landings(totem, own, free).bit_count()
    jumps_opp = _jump_landings(totem, opp, free).bit_count()
    # Reserve: high pieces kept for the end are worth more than high pieces spent far from the totem.
    reserve = 0
    for v in (3, 4):
        reserve += v * (((state.reserve >> _reserve_shift(me, v)) & 15) - ((state.reserve >> _reserve_shift(1 - me, v)) & 15))
    return lead * urgency + 4 * (jumps_me - jumps_opp) + reserve
