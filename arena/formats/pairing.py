"""Who meets whom in a large field: Swiss rounds and knockout brackets.

Every function here is pure and deterministic: the same standing, the same
meetings and the same seeding give the same pairs, so a resumed run, a rerun
of the standings and another machine can rebuild a round exactly.  Bots are
any hashable, orderable-by-position values (names in the arena); where two
bots are otherwise equal, their position in the list given (the seeding)
decides.

A *meeting* is one pairing (a game pair in the arena); ``points[(a, b)]`` is
the points ``a`` scored against ``b`` over all their games, the
representation ``arena.results.standings`` uses for its Sonneborn–Berger.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar


Bot = TypeVar("Bot", bound=Hashable)


class PairingError(ValueError):
    """No pairing satisfies the rules (for instance more rounds than a field
    of that size can play without a rematch)."""


def opponents_of(played: Iterable[Collection[Bot]]) -> dict[Bot, set[Bot]]:
    """Each bot's opponents in the meetings ``played`` (pairs of bots)."""
    opponents: dict[Bot, set[Bot]] = {}
    for pair in played:
        if len(pair) == 2:
            a, b = pair
            opponents.setdefault(a, set()).add(b)
            opponents.setdefault(b, set()).add(a)
    return opponents


def swiss_round(
    standing: Sequence[tuple[Bot, float]],
    opponents: Mapping[Bot, Collection[Bot]],
    byes: Iterable[Bot] = (),
    withdrawn: Iterable[Bot] = (),
    *,
    rematches: bool = False,
) -> tuple[list[tuple[Bot, Bot]], Bot | None]:
    """The pairs of the next Swiss round and the bot that gets the bye (None
    for an even field).

    ``standing`` is every bot with its score, in seeding order (the order
    breaks ties of score).  ``opponents`` holds each bot's opponents so far
    (see :func:`opponents_of`), ``byes`` the bots that have had a bye,
    ``withdrawn`` the bots not to pair.

    Rules: no rematch; each bot, from the top of the standing down, meets the
    unpaired bot of nearest score (the highest-ranked of equals) that keeps
    the rest of the round pairable, found by depth-first search with the
    failed remainders remembered (the search is then fast even late in a
    128-bot Swiss); an odd field's bye goes to the lowest-ranked bot without
    one, or the next one up when the rest cannot be paired around it.
    Raises :class:`PairingError` when no legal round exists.  With
    ``rematches`` a pair that has met is allowed, but each bot takes a
    partner it has not met whenever it can (fewest rematches, greedily).
    """
    gone = set(withdrawn)
    had_bye = set(byes)
    # Sorting is stable: equal scores keep the seeding order.
    ranked = sorted((b for b in standing if b[0] not in gone), key=lambda b: -b[1])
    bots = [b for b, _ in ranked]
    if len(set(bots)) != len(bots):
        raise PairingError("a bot appears twice in the standing")
    if len(bots) % 2 == 0:
        pairs = _pair_all(bots, opponents, rematches)
        if pairs is None:
            raise PairingError(f"no Swiss round of {len(bots)} bots avoids a rematch")
        return pairs, None
    for bye in reversed(bots):
        if bye in had_bye:
            continue
        pairs = _pair_all([b for b in bots if b != bye], opponents, rematches)
        if pairs is not None:
            return pairs, bye
    raise PairingError(f"no Swiss round of {len(bots)} bots avoids a rematch and a second bye")


#: The most bots the failed remainders of one search may hold in all: past
#: it no more are stored (the search stays exact, only slower), so a field
#: of 10,000 late in a Swiss cannot fill the memory with them.
MEMO_LIMIT = 4_000_000


def _pair_all(bots: list[Bot], opponents: Mapping[Bot, Collection[Bot]], rematches: bool = False,
              ) -> list[tuple[Bot, Bot]] | None:
    """A perfect matching of ``bots`` (in rank order: score descending, then
    seeding) without rematches, each top bot taking the nearest-scored partner
    it can; None if none exists.

    Since the bots still unpaired stay in rank order and the top one has the
    best score of them, "nearest score, then highest rank" is simply the
    first of them after it it has not met (with ``rematches``, then the first
    it has met).  The search is depth-first over a doubly linked list of the
    unpaired bots, with an explicit stack of the pairs taken: a pair is
    unlinked in O(1) and linked back on backtracking, and no Python frame is
    spent per pair (a recursion would end in RecursionError past about 2,000
    bots)."""
    n = len(bots)
    met = [opponents.get(b, set()) for b in bots]
    end = n  # the list's head and tail: nxt[end] is the top bot unpaired
    nxt = [*range(1, n + 1), 0]
    prv = [n, *range(n)]
    # Whether a set of bots can be paired depends on that set alone, so a
    # remainder that failed once is never searched again.  It is found by a
    # Zobrist hash of the bots unpaired (kept up to date in O(1)) and checked
    # exactly against the stored set, so a collision costs time, not truth.
    rng = random.Random(n)
    mark = [rng.getrandbits(64) for _ in range(n)]
    failed: dict[int, list[frozenset[int]]] = {}
    stored = 0
    current = 0
    for k in mark:
        current ^= k

    def unlink(x: int) -> None:
        nxt[prv[x]] = nxt[x]
        prv[nxt[x]] = prv[x]

    def relink(x: int) -> None:  # exactly in the reverse order of the unlinking
        nxt[prv[x]] = x
        prv[nxt[x]] = x

    def unpaired() -> frozenset[int]:
        out, x = [], nxt[end]
        while x != end:
            out.append(x)
            x = nxt[x]
        return frozenset(out)

    def partner(top: int, start: int, rematch: bool) -> int:
        """The first bot from ``start`` on that ``top`` has met (``rematch``) or not; ``end`` if none."""
        seen = met[top]
        x = start
        while x != end and ((bots[x] in seen) != rematch):
            x = nxt[x]
        return x

    # Each entry: (top bot, its partner, whether a rematch, the hash of the bots unpaired before it).
    stack: list[tuple[int, int, bool, int]] = []
    going_down = True
    while True:
        if going_down:
            if nxt[end] == end:
                return [(bots[top], bots[other]) for top, other, _, _ in stack]
            if current in failed and unpaired() in failed[current]:
                going_down = False
                continue
            top, entry, rematch = nxt[end], current, False
            unlink(top)
            other = partner(top, nxt[end], False)
        else:
            if not stack:
                return None
            top, other, rematch, entry = stack.pop()
            relink(other)
            other = partner(top, nxt[other], rematch)
        if other == end and rematches and not rematch:
            rematch, other = True, partner(top, nxt[end], True)
        if other == end:
            relink(top)
            current = entry
            if stored < MEMO_LIMIT:
                remainder = unpaired()
                failed.setdefault(current, []).append(remainder)
                stored += len(remainder)
            going_down = False
            continue
        unlink(other)
        current = entry ^ mark[top] ^ mark[other]
        stack.append((top, other, rematch, entry))
        going_down = True


def knockout_bracket(seeds: Sequence[Bot]) -> list[tuple[Bot, Bot | None]]:
    """The first round of a single-elimination bracket, in bracket order: a
    match's winner meets the winner of the match beside it (0 with 1, 2 with
    3, ...; see :func:`knockout_next_round`).

    Standard placement: in a bracket of 2^k slots, seed 1 meets seed 2^k, and
    each half, quarter, ... holds seeds so that the best two seeds can meet
    only in the final, the best four only in the semi-finals (for 16:
    1–16, 8–9, 4–13, 5–12, 2–15, 7–10, 3–14, 6–11).  When the field is not a
    power of two the missing lowest seeds are byes, so the byes go to the
    top seeds: ``(bot, None)``.
    """
    if len(set(seeds)) != len(seeds):
        raise PairingError("a bot appears twice in the seeding")
    if len(seeds) < 2:
        raise PairingError(f"a knockout needs at least 2 bots, not {len(seeds)}")
    order = bracket_slots(len(seeds))
    slot = lambda s: seeds[s - 1] if s <= len(seeds) else None  # noqa: E731
    return [(slot(order[i]), slot(order[i + 1])) for i in range(0, len(order), 2)]  # type: ignore[misc]


def knockout_next_round(winners: Sequence[Bot]) -> list[tuple[Bot, Bot]]:
    """The next round's matches from the previous round's winners, in
    bracket order."""
    if len(winners) < 2 or len(winners) % 2:
        raise PairingError(f"{len(winners)} winners cannot make a knockout round")
    return [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]


def bracket_slots(field_size: int) -> list[int]:
    """The seeds (from 1) of a single-elimination bracket's slots, in
    bracket order: in a bracket of 2^k slots seed 1 meets seed 2^k, and the
    best two can meet only in the final, the best four only in the
    semi-finals (for 8: 1, 8, 4, 5, 2, 7, 3, 6).  Seeds beyond
    ``field_size`` are byes."""
    size, order = 1, [1]
    while size < field_size:
        size *= 2
        # Each seed s of the smaller bracket takes the slot of its match
        # against size + 1 - s: the standard recursive placement.
        order = [slot for s in order for slot in (s, size + 1 - s)]
    return order


def knockout_rounds(field_size: int) -> int:
    """The rounds of a single elimination of ``field_size`` bots."""
    return max(1, math.ceil(math.log2(field_size))) if field_size > 1 else 0


def knockout_places(rounds: Sequence[Sequence[tuple[str, str | None]]], field_size: int) -> dict[str, tuple[int, int]]:
    """Each bot's place, as the range (first, last) it shares: (1, 1) for the
    winner, (2, 2) for the finalist, (3, 4) for the semi-final losers, (5, 8)
    for the quarter-final losers, ...; the first round's losers share the
    places down to ``field_size``.

    ``rounds`` holds each round's results so far as (winner, loser) pairs, a
    bye as (bot, None); the rounds of a complete knockout end with its final.
    """
    total = knockout_rounds(field_size)
    places: dict[str, tuple[int, int]] = {}
    for r, results in enumerate(rounds):
        # The losers of round r (of ``total``) go out when 2^(total - r) bots
        # are left: places 2^(total-r-1)+1 .. 2^(total-r).
        first, last = 2 ** (total - r - 1) + 1, min(2 ** (total - r), field_size)
        for winner, loser in results:
            if loser is not None:
                places[loser] = (first, last)
            if r == total - 1:
                places[winner] = (1, 1)
    return places
