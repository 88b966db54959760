"""Swiss pairings, knockout brackets and the points tie-breaks of arena/run/pairing.py."""

from __future__ import annotations

import itertools
import random

import pytest

from arena.formats.scoring import buchholz, points_order, sonneborn_berger, total_scores
from arena.formats.pairing import (
    PairingError,
    knockout_bracket,
    knockout_places,
    knockout_next_round,
    opponents_of,
    swiss_round,
)


def met(*pairs: str) -> set[frozenset[str]]:
    return {frozenset(p) for p in pairs}


def check_round(standing, pairs, bye, played=(), withdrawn=()):
    """Every bot not withdrawn is paired once or has the bye; no rematch."""
    seen = [b for p in pairs for b in p] + ([bye] if bye is not None else [])
    assert sorted(seen) == sorted(b for b, _ in standing if b not in withdrawn)
    assert not {frozenset(p) for p in pairs} & set(played)


def test_first_round_pairs_neighbours_in_seeding_order():
    standing = [(b, 0.0) for b in "abcdef"]
    pairs, bye = swiss_round(standing, {})
    assert (pairs, bye) == ([("a", "b"), ("c", "d"), ("e", "f")], None)


def test_equal_scores_meet_and_no_rematch():
    standing = [("a", 2), ("b", 0), ("c", 2), ("d", 0), ("e", 1), ("f", 1)]
    played = met("ac", "bd")
    pairs, bye = swiss_round(standing, opponents_of(played))
    check_round(standing, pairs, bye, played)
    # a and c lead on 2 but have met: a takes the nearest score left (e, 1,
    # first of the 1s by seeding), c the other 1; the 0s have met too, so
    # the search backtracks rather than pair b with d.
    assert bye is None
    assert ("a", "c") not in pairs and ("b", "d") not in pairs
    for x, y in pairs:
        assert abs(dict(standing)[x] - dict(standing)[y]) <= 2
    assert pairs[0] == ("a", "e")


def test_nearest_score_when_own_group_is_used_up():
    standing = [("a", 3), ("b", 2), ("c", 2), ("d", 1), ("e", 0), ("f", 0)]
    pairs, bye = swiss_round(standing, opponents_of(met("ab", "ef")))
    # a has met b: c (also 2) is as near; b then takes d (1), which leaves
    # e and f, who have met: the search backtracks to b–e, d–f.
    check_round(standing, pairs, bye, met("ab", "ef"))
    assert pairs == [("a", "c"), ("b", "e"), ("d", "f")]
    score = dict(standing)
    # total score difference is the least of all legal rounds here
    cost = sum(abs(score[x] - score[y]) for x, y in pairs)
    best = min(
        sum(abs(score[x] - score[y]) for x, y in m)
        for m in perfect_matchings([b for b, _ in standing])
        if not {frozenset(p) for p in m} & met("ab", "ef")
    )
    assert cost == best


def perfect_matchings(bots):
    if not bots:
        yield []
        return
    first, rest = bots[0], bots[1:]
    for i, other in enumerate(rest):
        for m in perfect_matchings(rest[:i] + rest[i + 1:]):
            yield [(first, other), *m]


def test_odd_field_bye_to_lowest_ranked_without_one():
    standing = [("a", 1), ("b", 1), ("c", 0), ("d", 0), ("e", 0)]
    pairs, bye = swiss_round(standing, {})
    assert bye == "e"
    check_round(standing, pairs, bye)
    pairs, bye = swiss_round(standing, {}, byes={"e"})
    assert bye == "d"
    pairs, bye = swiss_round(standing, {}, byes={"c", "d", "e"})
    assert bye == "b"  # the lowest-ranked left: b ranks below a by seeding


def test_bye_moves_up_when_the_rest_cannot_be_paired():
    standing = [("a", 1), ("b", 1), ("c", 0)]
    # c without a bye, but a and b have met: only a or b can sit out
    pairs, bye = swiss_round(standing, opponents_of(met("ab")))
    assert bye == "b" and pairs == [("a", "c")]


def test_withdrawn_bot_is_not_paired():
    standing = [("a", 1), ("b", 1), ("c", 0), ("d", 0), ("e", 0)]
    pairs, bye = swiss_round(standing, {}, withdrawn={"b"})
    check_round(standing, pairs, bye, withdrawn={"b"})
    assert bye is None and ("a", "c") in pairs


def test_no_legal_round_is_a_clear_error():
    standing = [("a", 0), ("b", 0)]
    with pytest.raises(PairingError, match="rematch"):
        swiss_round(standing, opponents_of(met("ab")))


def test_a_round_that_needs_a_rematch_has_as_few_as_it_can() -> None:
    standing = [("a", 8.0), ("b", 6.0), ("c", 5.0), ("d", 5.0), ("e", 3.0), ("f", 3.0)]
    met = {frozenset(p) for p in ("ab", "ac", "ad", "ae", "af", "cd", "ef")}
    pairs, bye = swiss_round(standing, opponents_of(met), rematches=True)
    assert sum(frozenset(p) in met for p in pairs) == 1 and bye is None


def test_a_whole_swiss_is_deterministic_and_never_rematches():
    def play(seed_order):
        rng = random.Random(5)
        score = {b: 0.0 for b in seed_order}
        played, byes, history = set(), set(), []
        for _ in range(6):
            pairs, bye = swiss_round([(b, score[b]) for b in seed_order], opponents_of(played), byes)
            history.append((pairs, bye))
            for x, y in pairs:
                assert frozenset((x, y)) not in played
                played.add(frozenset((x, y)))
                r = rng.choice([0.0, 1.0, 2.0])
                score[x] += r
                score[y] += 2 - r
            if bye is not None:
                assert bye not in byes
                byes.add(bye)
                score[bye] += 2
        return history

    bots = [f"bot{i:02}" for i in range(13)]
    assert play(bots) == play(list(bots))
    assert play(bots) != play(bots[::-1])  # the seeding matters


def test_128_bots_14_rounds_is_fast():
    import time
    bots = list(range(128))
    rng = random.Random(1)
    score = {b: 0.0 for b in bots}
    played: set = set()
    start = time.perf_counter()
    for _ in range(14):
        pairs, _ = swiss_round([(b, score[b]) for b in bots], opponents_of(played))
        for x, y in pairs:
            played.add(frozenset((x, y)))
            score[x if rng.random() < 0.5 else y] += 1
    assert time.perf_counter() - start < 5


def greedy_round(ranked: list[str], played: set[frozenset[str]]) -> tuple[list[tuple[str, str]], bool]:
    """The pairs the rules give while no backtracking is needed: each bot
    from the top takes the first unpaired bot below it (the nearest score,
    then the highest rank) it has not met; and whether that paired them all."""
    unpaired = list(ranked)
    pairs = []
    while unpaired:
        top = unpaired.pop(0)
        partner = next((b for b in unpaired if frozenset((top, b)) not in played), None)
        if partner is None:
            return pairs, False
        unpaired.remove(partner)
        pairs.append((top, partner))
    return pairs, True


def large_swiss(n: int, rounds: int, seed: int) -> tuple[list[str], dict[str, float], set[frozenset[str]]]:
    """``n`` bots after ``rounds`` rounds of random game pairs: seeding, scores, pairs met."""
    rng = random.Random(seed)
    bots = [f"bot{i:04}" for i in range(n)]
    rng.shuffle(bots)
    score = dict.fromkeys(bots, 0.0)
    played: set[frozenset[str]] = set()
    for _ in range(rounds):
        pairs, _ = swiss_round([(b, score[b]) for b in bots], opponents_of(played))
        for x, y in pairs:
            played.add(frozenset((x, y)))
            points = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0])
            score[x] += points
            score[y] += 2 - points
    return bots, score, played


def test_a_first_round_of_3000_bots_pairs_neighbours_in_seeding_order():
    bots = [f"bot{i:04}" for i in range(3001)]
    random.Random(2).shuffle(bots)
    pairs, bye = swiss_round([(b, 0.0) for b in bots], {})
    assert bye == bots[-1]
    assert pairs == [(bots[i], bots[i + 1]) for i in range(0, 3000, 2)]


def test_a_later_round_of_3000_bots_pairs_by_score_without_rematches():
    bots, score, played = large_swiss(3000, 5, seed=3)
    ranked = sorted(bots, key=lambda b: -score[b])  # stable: the seeding breaks ties
    expected, complete = greedy_round(ranked, played)
    assert complete  # this field needs no backtracking: the rule alone decides every pair
    pairs, bye = swiss_round([(b, score[b]) for b in bots], opponents_of(played))
    check_round([(b, score[b]) for b in bots], pairs, bye, played)
    assert pairs == expected


def test_a_round_of_3000_bots_backtracks_at_the_bottom_without_recursion():
    bots, score, played = large_swiss(3000, 3, seed=4)
    ranked = sorted(bots, key=lambda b: -score[b])
    # The three lowest-ranked have all met each other: the bottom of the round must be re-paired.
    x, y, z = ranked[-3:]
    played |= {frozenset((x, y)), frozenset((y, z)), frozenset((x, z))}
    greedy, complete = greedy_round(ranked, played)
    assert not complete
    pairs, bye = swiss_round([(b, score[b]) for b in bots], opponents_of(played))
    check_round([(b, score[b]) for b in bots], pairs, bye, played)
    # Backtracking re-paired the bottom only: above it, each bot took the first partner the rule gives.
    assert pairs[:1490] == greedy[:1490]


def test_knockout_of_8_standard_placement():
    seeds = [f"s{i}" for i in range(1, 9)]
    assert knockout_bracket(seeds) == [("s1", "s8"), ("s4", "s5"), ("s2", "s7"), ("s3", "s6")]


def test_knockout_of_16_quarters():
    first = knockout_bracket(list(range(1, 17)))
    assert first[0] == (1, 16)
    quarters = [set(itertools.chain(*first[i:i + 2])) for i in range(0, 8, 2)]
    assert quarters == [{1, 16, 8, 9}, {4, 13, 5, 12}, {2, 15, 7, 10}, {3, 14, 6, 11}]


@pytest.mark.parametrize("n", [5, 8, 13])
def test_knockout_brackets(n):
    seeds = list(range(1, n + 1))
    first = knockout_bracket(seeds)
    size = 1 << (n - 1).bit_length()
    assert len(first) == size // 2
    byes = sorted(a for a, b in first if b is None)
    assert byes == list(range(1, size - n + 1))  # byes to the top seeds
    assert all(a is not None for a, _ in first)
    assert sorted(x for m in first for x in m if x is not None) == seeds
    # 1 meets the lowest seed if there is no bye for it, else plays the
    # winner of the match beside it, which holds the lowest seeds.
    if size == n:
        assert first[0] == (1, n)
    # 1 and 2 in opposite halves: they can meet only in the final.
    half = size // 4
    top = {x for m in first[:half] for x in m}
    bottom = {x for m in first[half:] for x in m}
    assert 1 in top and 2 in bottom
    # every match is seeds adding to size + 1 (or a bye in that slot)
    for a, b in first:
        assert a + (b if b is not None else size + 1 - a) == size + 1


def test_knockout_of_5():
    assert knockout_bracket(["a", "b", "c", "d", "e"]) == [("a", None), ("d", "e"), ("b", None), ("c", None)]


def test_knockout_places_13():
    seeds = list(range(1, 14))
    rounds = []
    matches = knockout_bracket(seeds)
    while True:
        # the better seed always wins
        results = [(min(a, b), max(a, b)) if b is not None else (a, None) for a, b in matches]
        rounds.append(results)
        winners = [w for w, _ in results]
        if len(winners) == 1:
            break
        matches = knockout_next_round(winners)
    places = knockout_places(rounds, 13)
    assert len(rounds) == 4
    assert places[1] == (1, 1) and places[2] == (2, 2)
    assert places[3] == places[4] == (3, 4)
    assert all(places[s] == (5, 8) for s in range(5, 9))
    assert all(places[s] == (9, 13) for s in range(9, 14))


def test_knockout_errors():
    with pytest.raises(PairingError, match="at least 2"):
        knockout_bracket(["a"])
    with pytest.raises(PairingError, match="twice"):
        knockout_bracket(["a", "a"])
    with pytest.raises(PairingError, match="cannot make"):
        knockout_next_round(["a", "b", "c"])


def test_buchholz_and_sonneborn_berger():
    # a beat b 2-0, drew c 1-1; b beat c 1.5-0.5; d had a bye only.
    points = {("a", "b"): 2.0, ("b", "a"): 0.0, ("a", "c"): 1.0, ("c", "a"): 1.0,
              ("b", "c"): 1.5, ("c", "b"): 0.5}
    scores = total_scores(points)
    assert scores == {"a": 3.0, "b": 1.5, "c": 1.5}
    scores["d"] = 2.0  # the bye
    assert buchholz(points, scores) == {"a": 1.5 + 1.5, "b": 3.0 + 1.5, "c": 3.0 + 1.5, "d": 0}
    assert sonneborn_berger(points, scores) == {
        "a": 2.0 * 1.5 + 1.0 * 1.5,
        "b": 0.0 * 3.0 + 1.5 * 1.5,
        "c": 1.0 * 3.0 + 0.5 * 1.5,
        "d": 0.0,
    }
    # b and c tie on points and Buchholz; c's SB (3.75) beats b's (2.25)
    assert points_order(["d", "c", "b", "a"], points, scores) == ["a", "d", "c", "b"]
