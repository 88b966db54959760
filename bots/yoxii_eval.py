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
    _jump_landings,
    _reserve_shift,
    _squares_of,
    totem_destinations,
)

__all__ = ["winning_moves", "has_winning_move", "ending_moves", "extreme_values", "evaluate", "WIN"]

WIN = 100_000


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
    me = state.ply & 1
    wins = []
    for move in ending_moves(state):
        outcome = game.apply(state, move).outcome
        if outcome is not None and outcome.winner == me:
            wins.append(move)
    return wins


def has_winning_move(state: YoxiiState, game) -> bool:  # type: ignore[no-untyped-def]
    me = state.ply & 1
    for move in ending_moves(state):
        outcome = game.apply(state, move).outcome
        if outcome is not None and outcome.winner == me:
            return True
    return False


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
