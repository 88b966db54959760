"""Swiss, knockout and staged tournaments, round by round: the pairings
``arena.formats.progression`` makes from the results, the games it schedules
for them, and how ``arena.formats.rounds`` reads them back (scores, byes,
knockout matches and their tie-breaks, places), driven with hand-made game
records through the runner's own loop (``RunPlan.advance``).  No bot is
started: every game's result is decided by the test."""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

from arena.formats.competition import Rules
from arena.game.records import GameRecord, GameSpec
from arena.formats.game_pairs import game_ids
from arena.formats.pairing import knockout_places
from arena.formats.progression import (estimated_games, fixed_games, next_pairing, read_progress, rounds_schedule,
                                      shut_out, withdrawn_bots)
from arena.formats.scoring import points_order
from arena.formats.stages import Pairing, Stage, StageEntry
from arena.results.meta import MetaError, TournamentMeta
from arena.results.standings import compute_standings
from arena.results.store import ResultsConflict
from arena.run.config import ConfigError, parse_config
from arena.run.results_dir import RunPlan, tournament_meta
from builders import (Run, better_seed, forfeit, names, result, seed, start, tournament, tournament_text,
                      winner_by)


# -- helpers ---------------------------------------------------------------------


def k_of(spec: GameSpec | GameRecord) -> int:
    """The ``k`` of a game id ``r<round>-<a>~<b>-g<k>``."""
    return int(spec.game_id.rpartition("-g")[2])


#: Every game is drawn.
draws = winner_by(lambda spec: None)


def stronger(order: Sequence[str]) -> Callable[[GameSpec], GameRecord]:
    """The bot earlier in ``order`` wins every game."""
    rank = {b: i for i, b in enumerate(order)}
    return winner_by(lambda spec: min(spec.players, key=rank.__getitem__))


def split(spec: GameSpec) -> str:
    """Each bot wins the game it moves first in: every game pair is split 1–1."""
    return spec.players[0]


def tally(records: Sequence[GameRecord], pairings: Sequence[Pairing], bye_value: float = 0.0,
          rounds: Sequence[int] | None = None) -> dict[str, float]:
    """Each bot's points, counted from the records (and byes) by hand."""
    points: dict[str, float] = {}
    for record in records:
        if rounds is not None and record.round not in rounds:
            continue
        for color, bot in record.players.items():
            points[bot] = points.get(bot, 0.0) + (0.5 if record.winner is None else float(record.winner == color))
    for pairing in pairings:
        if rounds is None or pairing.round in rounds:
            for bot in pairing.byes:
                points[bot] = points.get(bot, 0.0) + bye_value
    return points


def place_of_better_seed(s: int, n: int) -> tuple[int, int]:
    """The place of seed ``s`` of ``n`` when the better seed always wins: it
    goes out to seed 1 .. 2^k, in the round where 2^(k+1) bots are left."""
    if s == 1:
        return (1, 1)
    top = 2 ** math.ceil(math.log2(s))
    return (top // 2 + 1, min(top, n))


def seeds_of(pairs: Sequence[tuple[str, str | None]]) -> list[tuple[int, int | None]]:
    return [(seed(a), None if b is None else seed(b)) for a, b in pairs]


# -- knockout brackets ---------------------------------------------------------------


#: The standard first rounds: seed 1 meets the lowest seed, and the byes
#: (missing lowest seeds of the 2^k bracket) go to the top seeds.
BRACKETS = {
    5: [(1, None), (4, 5), (2, None), (3, None)],
    8: [(1, 8), (4, 5), (2, 7), (3, 6)],
    13: [(1, None), (8, 9), (4, 13), (5, 12), (2, None), (7, 10), (3, None), (6, 11)],
}


@pytest.mark.parametrize("n, total", [(5, 3), (8, 3), (13, 4)])
def test_knockout_bracket_rounds_and_places_when_the_better_seed_wins(tmp_path: Path, n: int, total: int) -> None:
    run = start(tournament(tmp_path, n, "format: knockout\n"))
    first = run.advance()
    (pairing,) = run.pairings
    assert (pairing.round, pairing.stage, pairing.byes) == (1, 1, ())
    assert seeds_of(pairing.pairs) == BRACKETS[n]
    size = 2 ** total
    byes = [a for a, b in pairing.pairs if b is None]
    assert sorted(seed(b) for b in byes) == list(range(1, size - n + 1))
    # One game pair a match on the first opening, the names in order in each id.
    matches = [(a, b) for a, b in pairing.pairs if b is not None]
    assert len(first) == 2 * len(matches)
    assert {s.game_id for s in first} == {i for a, b in matches for i in game_ids(1, a, b, 1)}
    for a, b in matches:
        lo, hi = sorted((a, b))
        assert f"r1-{lo}~{hi}-g1" in {s.game_id for s in first}

    run.play(better_seed)
    rounds = run.rounds
    assert rounds.finished and run.advance() == []
    (stage,) = rounds.stages
    assert stage.total_rounds == total == len(run.pairings) == len(stage.matches)
    assert [p.round for p in run.pairings] == list(range(1, total + 1))
    # Each later round: the winners beside each other in the bracket meet.
    for before, after in zip(stage.matches, stage.matches[1:]):
        winners = [m.winner for m in before]
        assert [m.bots for m in after] == [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]
    assert [m.bots for m in stage.matches[-1]] == [("s1", "s2")]
    expected = {b: place_of_better_seed(seed(b), n) for b in names(n)}
    assert stage.places == expected
    assert rounds.places() == sorted(expected.items(), key=lambda item: (item[1], seed(item[0])))
    counts = {(1, 1): 1, (2, 2): 1, (3, 4): 2, (5, 8): 4, (9, 13): 5, (5, 5): 1}
    for span in set(expected.values()):
        assert list(expected.values()).count(span) == counts[span]
    # No match needed a tie-break: one game pair each, 2 games a match played.
    played = [m for r in stage.matches for m in r if m.bots[1] is not None]
    assert len(played) == n - 1
    assert all(m.decided_by == "score" and m.pairs == 1 and m.score == (2.0, 0.0) for m in played)
    assert len(run.records) == 2 * (n - 1)
    assert all(m.decided_by == "bye" and m.winner == m.bots[0] for m in stage.matches[0] if m.bots[1] is None)


def test_knockout_upsets_move_the_places(tmp_path: Path) -> None:
    # s8 beats s1 and s5 beats s4 in the first round; from then on the better seed wins.
    upsets = {frozenset(("s1", "s8")): "s8", frozenset(("s4", "s5")): "s5"}
    run = start(tournament(tmp_path, 8, "format: knockout\n"))
    run.play(winner_by(lambda spec: upsets.get(frozenset(spec.players), min(spec.players, key=seed))))
    (stage,) = run.rounds.stages
    assert [m.bots for m in stage.matches[1]] == [("s8", "s5"), ("s2", "s3")]
    assert [m.bots for m in stage.matches[2]] == [("s5", "s2")]
    assert stage.places == {
        "s2": (1, 1), "s5": (2, 2), "s8": (3, 4), "s3": (3, 4),
        "s1": (5, 8), "s4": (5, 8), "s7": (5, 8), "s6": (5, 8),
    }
    # Equal places keep the seeding order.
    assert [b for b, _ in run.rounds.places()] == ["s2", "s5", "s3", "s8", "s1", "s4", "s6", "s7"]


def test_knockout_upsets_in_a_field_of_13(tmp_path: Path) -> None:
    # s13 beats s4 in the first round and s5 in the second, then loses to s1.
    run = start(tournament(tmp_path, 13, "format: knockout\n"))
    run.play(winner_by(lambda spec: "s13" if "s13" in spec.players and "s1" not in spec.players
                       else min(spec.players, key=seed)))
    (stage,) = run.rounds.stages
    assert [m.bots for m in stage.matches[1]] == [("s1", "s8"), ("s13", "s5"), ("s2", "s7"), ("s3", "s6")]
    assert [m.bots for m in stage.matches[2]] == [("s1", "s13"), ("s2", "s3")]
    assert stage.places["s13"] == (3, 4) and stage.places["s4"] == (9, 13) and stage.places["s5"] == (5, 8)
    assert stage.places["s3"] == (3, 4) and stage.places["s2"] == (2, 2) and stage.places["s1"] == (1, 1)
    assert sorted(stage.places.values()).count((9, 13)) == 5


def test_knockout_places_of_a_bracket_in_progress() -> None:
    # After the first round of 8, only its losers are placed.
    assert knockout_places([[("a", "h"), ("d", "e"), ("b", "g"), ("c", "f")]], 8) == \
        {b: (5, 8) for b in "hegf"}
    assert knockout_places([], 8) == {}
    # A two-bot knockout is its final.
    assert knockout_places([[("a", "b")]], 2) == {"a": (1, 1), "b": (2, 2)}


def test_a_knockout_in_progress_places_the_bots_still_in_above_those_knocked_out(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 8, "format: knockout\n"))
    run.play(better_seed, until_round=1)
    assert run.rounds.places() == [*((f"s{i}", (1, 4)) for i in range(1, 5)), *((f"s{i}", (5, 8)) for i in range(5, 9))]


def test_the_places_of_a_knockout_round_in_progress_say_how_far_each_bot_can_fall(tmp_path: Path) -> None:
    # One semi-final decided, the other not begun: its bots may still go out at 3–4, never further down.
    run = start(tournament(tmp_path, 8, "format: knockout\n"))
    run.play(better_seed, until_round=1)
    run.records += [better_seed(spec) for spec in run.advance() if "s1" in spec.players]
    assert dict(run.rounds.places()) == {"s1": (1, 2), "s2": (1, 4), "s3": (1, 4), "s4": (3, 4),
                                         **{f"s{i}": (5, 8) for i in range(5, 9)}}
    # The furthest on first.
    assert [bot for bot, _ in run.rounds.places()][:4] == ["s1", "s2", "s3", "s4"]


# -- knockout matches: game pairs and tie-breaks -------------------------------------


def test_a_tied_match_gets_a_tie_break_pair_and_is_won_in_it(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 4, "format: knockout\n"))
    # s1–s4: the first game pair is split, s4 wins the tie-break pair; s2 beats s3.
    def decide(spec: GameSpec) -> GameRecord:
        if set(spec.players) == {"s1", "s4"}:
            return result(spec, split(spec) if k_of(spec) <= 2 else "s4")
        return result(spec, min(spec.players, key=seed))

    run.play(decide, until_round=1)
    first, second = run.batches  # the round, then the tie-break pair
    assert sorted(s.game_id for s in first) == ["r1-s1~s4-g1", "r1-s1~s4-g2", "r1-s2~s3-g1", "r1-s2~s3-g2"]
    assert [s.game_id for s in second] == ["r1-s1~s4-g3", "r1-s1~s4-g4"]
    # The tie-break pair is the match's second game pair: on the suite's second opening.
    suite = list(run.config.competition.suite())
    assert len(suite) == 2 and [s.opening for s in second] == [suite[1].start] * 2
    assert [s.players for s in second] == [("s1", "s4"), ("s4", "s1")]
    (stage,) = run.rounds.stages
    match = stage.matches[0][0]
    assert match.bots == ("s1", "s4")
    assert (match.pairs, match.winner, match.decided_by) == (2, "s4", "tie-break")
    assert match.score == (1.0, 3.0)
    assert match.games == [f"r1-s1~s4-g{k}" for k in range(1, 5)]
    assert stage.matches[0][1].decided_by == "score"
    run.play(decide)
    assert [s.round for s in run.batches[2]] == [2, 2]
    assert run.rounds.stages[0].matches[1][0].bots == ("s4", "s2")


def test_a_match_tied_through_every_tie_break_goes_to_the_better_seed_listed_second(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 4, "format: knockout\ntiebreak_pairs: 2\n"))
    # Round 1: s4 beats s1, s2 beats s3; the final s4–s2 splits every game pair.
    def decide(spec: GameSpec) -> GameRecord:
        if spec.round == 1:
            return result(spec, "s4" if "s4" in spec.players else "s2")
        return result(spec, split(spec))

    run.play(decide)
    (stage,) = run.rounds.stages
    final = stage.matches[1][0]
    assert final.bots == ("s4", "s2") and final.seeds == (4, 2)
    assert final.pairs == 1 + 2
    assert final.games == [f"r2-s2~s4-g{k}" for k in range(1, 7)]
    assert final.score == (3.0, 3.0)
    assert (final.winner, final.decided_by, final.loser) == ("s2", "seed", "s4")
    assert stage.places["s2"] == (1, 1) and stage.places["s4"] == (2, 2)
    # Each tie-break pair came as its own batch, after the one before was tied.
    assert [len(b) for b in run.batches] == [4, 2, 2, 2]
    assert run.rounds.finished


def test_drawn_matches_go_to_the_better_seed_listed_first(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 4, "format: knockout\ntiebreak_pairs: 0\n"))
    run.play(draws)
    (stage,) = run.rounds.stages
    assert all(m.decided_by == "seed" and m.pairs == 1 for r in stage.matches for m in r)
    assert stage.places == {"s1": (1, 1), "s2": (2, 2), "s3": (3, 4), "s4": (3, 4)}


def test_games_per_match_and_the_openings_of_each_game_pair(tmp_path: Path) -> None:
    settings = "format: knockout\ngames_per_match: 2\ntiebreak_pairs: 2\nopenings: {plies: 2, count: 3}\n"
    run = start(tournament(tmp_path, 2, settings))
    suite = list(run.config.competition.suite())
    assert len(suite) == 3 and len({o.moves for o in suite}) == 3
    first = run.advance()
    # Two game pairs, colours swapped within each, the j-th pair on opening j.
    assert [s.game_id for s in first] == [f"r1-s1~s2-g{k}" for k in range(1, 5)]
    assert [s.players for s in first] == [("s1", "s2"), ("s2", "s1")] * 2
    assert [s.opening_moves for s in first] == [suite[0].moves] * 2 + [suite[1].moves] * 2
    run.play(draws)
    (stage,) = run.rounds.stages
    (final,) = stage.matches[0]
    assert (final.pairs, final.decided_by, final.winner) == (4, "seed", "s1")
    # Pairs 3 and 4 are the tie-breaks; the fourth is back on the first opening.
    by_id = {r.game_id: r for r in run.records}
    assert sorted(by_id, key=lambda i: int(i.rpartition("-g")[2])) == [f"r1-s1~s2-g{k}" for k in range(1, 9)]
    for k in range(1, 9):
        assert tuple(by_id[f"r1-s1~s2-g{k}"].opening_moves) == suite[((k - 1) // 2) % 3].moves


def test_games_per_match_two_is_won_on_the_sum_of_both_pairs(tmp_path: Path) -> None:
    # s2 wins three of the four games: the match is s2's without a tie-break.
    run = start(tournament(tmp_path, 2, "format: knockout\ngames_per_match: 2\n"))
    run.play(winner_by(lambda spec: "s1" if k_of(spec) == 1 else "s2"))
    (final,) = run.rounds.stages[0].matches[0]
    assert (final.score, final.winner, final.decided_by, final.pairs) == ((1.0, 3.0), "s2", "score", 2)
    assert len(run.records) == 4


def test_knockout_ignores_a_bot_that_left_a_match_it_started_as_a_walkover(tmp_path: Path) -> None:
    config = tournament(tmp_path, 4, "format: knockout\n")
    run = start(config)
    run.advance()
    # s4 leaves the tournament (it is taken out of the file) before its match is played.
    run.config = tournament(tmp_path, ["s1", "s2", "s3"], "format: knockout\n")
    pending = run.advance()
    assert sorted(s.game_id for s in pending) == ["r1-s2~s3-g1", "r1-s2~s3-g2"]
    run.play(better_seed)
    (stage,) = run.rounds.stages
    assert stage.field == names(4)  # the seeding that was paired stays
    walkover = stage.matches[0][0]
    assert walkover.bots == ("s1", "s4")
    assert (walkover.winner, walkover.decided_by, walkover.games) == ("s1", "walkover", [])
    assert [m.bots for m in stage.matches[1]] == [("s1", "s2")]
    assert not any("s4" in r.players.values() for r in run.records)


def test_a_bot_that_leaves_after_winning_gives_its_next_opponent_a_walkover(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 4, "format: knockout\n"))
    run.play(winner_by(lambda spec: "s4" if "s4" in spec.players else "s2"), until_round=1)
    run.config = tournament(tmp_path, ["s1", "s2", "s3"], "format: knockout\n")
    run.play(better_seed)
    rounds = run.rounds
    assert rounds.finished and len(run.pairings) == 2
    # The match it won on the board stands (s1 does not come back); its final is a walkover, unplayed.
    (stage,) = rounds.stages
    first, final = stage.matches
    assert [(m.winner, m.decided_by) for m in first] == [("s4", "score"), ("s2", "score")]
    assert final[0].bots == ("s4", "s2") and (final[0].winner, final[0].decided_by, final[0].games) == ("s2", "walkover", [])
    assert stage.places == {"s2": (1, 1), "s4": (2, 2), "s1": (3, 4), "s3": (3, 4)}
    # The first round's games of the bot that left are still in the records.
    assert sum("s4" in r.players.values() for r in run.records) == 2


def test_a_knockout_bot_that_left_after_winning_on_the_board_does_not_break_the_schedule(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 4, "format: knockout\n"))
    run.play(better_seed, until_round=1)
    run.advance()  # the final paired: s1 against s2
    left = tournament(tmp_path, ["s2", "s3", "s4"], "format: knockout\n")
    rounds = read_progress(left.competition, run.seeding, run.pairings, run.records)
    specs = rounds_schedule(left.competition, rounds, {"s2": "v", "s3": "v", "s4": "v"})  # no version for s1: it left
    # s1's semi-final stands in the bracket, its games out of the schedule (and
    # so of the ranking: a bot removed is not ranked); the final is a walkover for s2.
    assert {s.game_id for s in specs} == {r.game_id for r in run.records if "s1" not in r.players.values()}
    assert rounds.stages[0].matches[0][0].winner == "s1"
    final = rounds.stages[0].matches[1][0]
    assert (final.winner, final.decided_by) == ("s2", "walkover")


def test_the_final_with_a_bot_that_left_is_a_walkover(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 4, "format: knockout\n"))
    run.play(better_seed, until_round=1)
    run.advance()  # the final s1–s2 is paired
    run.config = tournament(tmp_path, ["s2", "s3", "s4"], "format: knockout\n")
    assert run.advance() == []
    (stage,) = run.rounds.stages
    final = stage.matches[1][0]
    assert final.bots == ("s1", "s2") and (final.winner, final.decided_by) == ("s2", "walkover")
    assert run.rounds.finished and stage.places["s2"] == (1, 1)


def test_places_stay_whole_when_a_bot_leaves_after_the_rounds_it_won_were_paired(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 8, "format: knockout\n"))
    # s8 beats s1 and s4, then leaves with the final s8–s2 paired.
    run.play(winner_by(lambda spec: "s8" if "s8" in spec.players else min(spec.players, key=seed)), until_round=2)
    run.advance()
    run.config = tournament(tmp_path, names(7), "format: knockout\n")
    run.play(better_seed)
    (stage,) = run.rounds.stages
    assert run.rounds.finished
    # Every bot has a place, and each shared place is shared by as many bots as it spans.
    assert set(stage.places) == set(names(8))
    spans = list(stage.places.values())
    assert all(spans.count((first, last)) == last - first + 1 for first, last in spans)


# -- Swiss, through the runner's loop --------------------------------------------------


def check_swiss(run: Run) -> None:
    """Each round pairs every bot still in once or gives it the bye; no two
    bots meet twice; no bot has two byes."""
    met: set[frozenset[str]] = set()
    had_bye: set[str] = set()
    for pairing in run.pairings:
        seen = [b for p in pairing.pairs for b in p] + list(pairing.byes)
        assert len(seen) == len(set(seen)), pairing
        assert all(b is not None for p in pairing.pairs for b in p)
        for a, b in pairing.pairs:
            assert frozenset((a, b)) not in met, f"rematch {a}–{b} in round {pairing.round}"
            met.add(frozenset((a, b)))
        assert len(pairing.byes) <= 1
        for bye in pairing.byes:
            assert bye not in had_bye, f"second bye for {bye} in round {pairing.round}"
            had_bye.add(bye)


@pytest.mark.parametrize("n, rounds", [(7, 3), (8, 4), (9, 4), (11, 5), (16, 8)])
def test_swiss_through_the_runners_loop_no_rematch_no_second_bye(tmp_path: Path, n: int, rounds: int) -> None:
    config = tournament(tmp_path, n, f"format: swiss\nrounds: {rounds}\n")
    for trial in range(6):
        rng = random.Random(trial)
        run = start(config).play(winner_by(lambda spec: rng.choice([*spec.players, None])))
        assert len(run.pairings) == rounds and run.rounds.finished
        assert [p.round for p in run.pairings] == list(range(1, rounds + 1))
        check_swiss(run)
        for pairing in run.pairings:
            in_round = {b for p in pairing.pairs for b in p} | set(pairing.byes)
            assert in_round == set(names(n))
            assert len(pairing.byes) == n % 2
        # Each pairing plays one game pair; a bye is worth a won one.
        assert len(run.records) == rounds * (n // 2) * 2
        (stage,) = run.rounds.stages
        assert stage.points == {b: tally(run.records, run.pairings, 2.0).get(b, 0.0) for b in names(n)}


def test_swiss_first_round_pairs_by_seeding_then_by_score(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 6, "format: swiss\nrounds: 3\n"))
    run.advance()
    assert run.pairings[0].pairs == (("s1", "s2"), ("s3", "s4"), ("s5", "s6"))
    run.play(better_seed, until_round=1)
    run.advance()
    # s1, s3, s5 on 2 points; s2, s4, s6 on 0: the winners meet, then the losers.
    assert run.pairings[1].pairs == (("s1", "s3"), ("s5", "s2"), ("s4", "s6"))


@pytest.mark.parametrize("bye, value", [("win", 1.0), ("draw", 0.5), ("loss", 0.0)])
def test_bye_points(tmp_path: Path, bye: str, value: float) -> None:
    config = tournament(tmp_path, 5, f"format: swiss\nrounds: 4\nbye: {bye}\nopenings: {{plies: 2, count: 3}}\n")
    suite = len(list(config.competition.suite()))
    assert suite == 3
    run = start(config).play(better_seed)
    check_swiss(run)
    (stage,) = run.rounds.stages
    byes = [b for p in run.pairings for b in p.byes]
    assert len(byes) == 4 and len(set(byes)) == 4
    # A bye is worth a won (drawn, lost) game pair, whatever the suite.
    assert stage.bye_points == {b: 2 * value for b in byes}
    assert run.rounds.bye_points == stage.bye_points
    assert stage.points == {b: tally(run.records, run.pairings, 2 * value).get(b, 0.0) for b in names(5)}
    # Each round's pairings play the suite's next opening.
    assert {r.round: r.opening_moves for r in run.records} == {
        k: list(run.config.competition.openings[(k - 1) % suite].moves) for k in range(1, 5)}
    # The first bye goes to the lowest seed.
    assert run.pairings[0].byes == ("s5",)
    assert run.rounds.describe() == "round 4 of 4"


def test_a_bot_that_left_after_a_bye_is_not_ranked_for_it(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 5, "format: swiss\nrounds: 2\n"))
    run.play(better_seed)
    (had_bye,) = run.pairings[0].byes
    rest = [b.name for b in run.config.bots if b.name != had_bye]
    left = tournament(tmp_path, rest, "format: swiss\nrounds: 2\n")
    rounds = read_progress(left.competition, run.seeding, run.pairings, run.records)
    standings = compute_standings([r for r in run.records if had_bye not in r.players.values()], rest,
                                  Rules(ranking="points"), rounds=rounds)
    assert had_bye not in [b.name for b in standings.bots]


def test_a_bot_that_did_not_start_is_not_paired_again_but_its_games_stay(tmp_path: Path) -> None:
    for reason in ("startup_failure", "withdrawn"):
        run = start(tournament(tmp_path, 6, "format: swiss\nrounds: 5\n"))
        run.play(better_seed, until_round=1)
        # In round 2 s3 forfeits every game without starting.
        run.play(lambda spec: forfeit(spec, "s3", reason) if "s3" in spec.players else better_seed(spec), until_round=2)
        assert withdrawn_bots(run.records, None) == {"s3"}
        run.play(better_seed)
        check_swiss(run)
        assert len(run.pairings) == 5
        for pairing in run.pairings[2:]:
            assert "s3" not in {b for p in pairing.pairs for b in p} | set(pairing.byes)
            # Five bots left: one has the bye each round.
            assert len(pairing.byes) == 1
        (stage,) = run.rounds.stages
        # Its games of rounds 1 and 2 stay and count (a win over s4 in round 1: 2 points).
        kept = [r for r in run.records if "s3" in r.players.values()]
        assert {r.round for r in kept} == {1, 2}
        assert stage.points["s3"] == tally(run.records, run.pairings, 2.0)["s3"] == 2.0
        assert "s3" in stage.order


def test_a_bot_that_crashes_withdraw_after_crashes_times_in_a_row_is_not_paired_again(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 6, "format: swiss\nrounds: 5\nwithdraw_after_crashes: 6\n"))
    crashes = lambda spec: forfeit(spec, "s2", "crash") if "s2" in spec.players else better_seed(spec)  # noqa: E731
    run.play(better_seed, until_round=1)
    run.play(crashes, until_round=3)
    # Four crashes in a row (two rounds of a game pair): not yet six.
    assert withdrawn_bots(run.records, 6) == set()
    run.play(crashes, until_round=4)
    assert withdrawn_bots(run.records, 6) == {"s2"}
    assert withdrawn_bots(run.records, None) == set()
    run.play(better_seed)
    assert [("s2" in {b for p in pairing.pairs for b in p}) for pairing in run.pairings] == [True] * 4 + [False]
    check_swiss(run)


def test_a_crash_between_wins_starts_the_count_again(tmp_path: Path) -> None:
    config = tournament(tmp_path, 2, "format: knockout\n")
    spec = rounds_schedule(config.competition, read_progress(config.competition, ["s1", "s2"], [Pairing(1, 1, (("s1", "s2"),))], []))
    records = [forfeit(spec[0], "s1", "crash"), result(spec[1], "s1")]
    assert withdrawn_bots(records, 1) == set()
    assert withdrawn_bots(records[:1], 1) == {"s1"}


def test_a_bot_added_to_the_file_is_paired_from_the_next_round(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 5, "format: swiss\nrounds: 4\n"))
    run.play(better_seed, until_round=2)
    first_two = list(run.pairings)
    # s6 joins: the seeding stored with the first round, then the new bot.
    run.config = tournament(tmp_path, 6, "format: swiss\nrounds: 4\n")
    run.seeding = run.seeding + ["s6"]
    run.play(better_seed)
    assert run.pairings[:2] == first_two
    assert all("s6" not in {b for p in pairing.pairs for b in p} | set(pairing.byes) for pairing in first_two)
    for pairing in run.pairings[2:]:
        assert {b for p in pairing.pairs for b in p} == set(names(6)) and pairing.byes == ()
    check_swiss(run)
    (stage,) = run.rounds.stages
    assert stage.field == names(6)


def test_a_bot_taken_out_of_the_file_is_not_paired(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 6, "format: swiss\nrounds: 4\n"))
    run.play(better_seed, until_round=2)
    run.config = tournament(tmp_path, ["s1", "s2", "s3", "s5", "s6"], "format: swiss\nrounds: 4\n")
    run.play(better_seed)
    assert len(run.pairings) == 4
    for pairing in run.pairings[2:]:
        assert {b for p in pairing.pairs for b in p} | set(pairing.byes) == {"s1", "s2", "s3", "s5", "s6"}
    check_swiss(run)
    (stage,) = run.rounds.stages
    # Its pairings count for nobody now.
    assert all("s4" not in pair for pair in stage.pair_points)
    here = [r for r in run.records if "s4" not in r.players.values()]
    assert {b: stage.points[b] for b in ["s1", "s2", "s3", "s5", "s6"]} == \
        {b: tally(here, run.pairings, 2.0).get(b, 0.0) for b in ["s1", "s2", "s3", "s5", "s6"]}


def test_a_round_robin_stage_then_a_knockout(tmp_path: Path) -> None:
    settings = "stages:\n  - {format: round-robin}\n  - {format: knockout, top: 2}\n"
    run = start(tournament(tmp_path, 4, settings)).play(better_seed)
    first, final = run.rounds.stages
    assert len(first.pairings[0].pairs) == 6
    assert final.field == ["s1", "s2"] and [p.round for p in run.pairings] == [1, 2]
    assert [b for b, _ in run.rounds.places()] == names(4)


# -- a staged tournament: Swiss, then a knockout of the top 4 ------------------------------


def order_by_hand(bots: Sequence[str], records: Sequence[GameRecord], pairings: Sequence[Pairing],
                  bye_value: float) -> list[str]:
    """Points, then Buchholz (the opponents' points), then Sonneborn–Berger
    (points against each opponent times its points), then seeding."""
    points = {b: tally(records, pairings, bye_value).get(b, 0.0) for b in bots}
    against: dict[tuple[str, str], float] = {}
    for record in records:
        (ca, a), (cb, b) = record.players.items()
        score = 0.5 if record.winner is None else float(record.winner == ca)
        against[(a, b)] = against.get((a, b), 0.0) + score
        against[(b, a)] = against.get((b, a), 0.0) + 1 - score
    buchholz = {b: sum(points[o] for (x, o) in against if x == b) for b in bots}
    sb = {b: sum(p * points[o] for (x, o), p in against.items() if x == b) for b in bots}
    return sorted(bots, key=lambda b: (-points[b], -buchholz[b], -sb[b], bots.index(b)))


def test_swiss_then_a_knockout_of_the_top_four(tmp_path: Path) -> None:
    settings = "stages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 4}\n"
    config = tournament(tmp_path, 8, settings)
    # Strength is not seeding: the knockout's field is what the Swiss says.
    strength = ["s5", "s2", "s8", "s1", "s7", "s3", "s6", "s4"]
    run = start(config).play(stronger(strength))
    rounds = run.rounds
    assert rounds.finished
    swiss, knockout = rounds.stages
    swiss_records = [r for r in run.records if r.round <= 3]
    expected = order_by_hand(names(8), swiss_records, run.pairings[:3], 2.0)
    assert swiss.order == expected
    assert knockout.field == expected[:4]
    # The knockout's rounds number on from the Swiss's.
    assert [(p.round, p.stage) for p in run.pairings] == [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2)]
    assert {r.round for r in run.records} == {1, 2, 3, 4, 5}
    top = knockout.field
    assert run.pairings[3].pairs == ((top[0], top[3]), (top[1], top[2]))
    # The strongest of the four wins it; the final's loser is second.
    champion = min(top, key=strength.index)
    semi_winners = [min(pair, key=strength.index) for pair in run.pairings[3].pairs]
    assert run.pairings[4].pairs == (tuple(semi_winners),)
    finalist = next(b for b in semi_winners if b != champion)
    places = rounds.places()
    assert places[:2] == [(champion, (1, 1)), (finalist, (2, 2))]
    assert {b for b, p in places[2:4]} == set(top) - {champion, finalist}
    assert all(p == (3, 4) for _, p in places[2:4])
    # Then the others, in the Swiss's order, one place each.
    assert places[4:] == [(b, (i, i)) for i, b in enumerate(expected[4:], start=5)]
    assert rounds.describe() == "round 5: stage 2 (knockout), 2 of 2"


def test_staged_describe_and_current_while_the_swiss_is_played(tmp_path: Path) -> None:
    settings = "stages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 4}\n"
    run = start(tournament(tmp_path, 8, settings))
    run.play(better_seed, until_round=2)
    run.advance()
    rounds = run.rounds
    assert len(rounds.stages) == 1 and not rounds.finished
    assert rounds.current.number == 1
    assert rounds.describe() == "round 3: stage 1 (swiss), 3 of 3"
    # Games so far, the third round's, and the knockout's 3 matches of one game pair.
    assert estimated_games(run.config.competition, rounds, len(rounds_schedule(run.config.competition, rounds))) == 3 * 4 * 2 + 3 * 2


def test_describe_a_swiss_game_played_again_after_the_knockout(tmp_path: Path) -> None:
    # --replay-game of a round-2 game once the final is played: the stage in
    # play is the Swiss again, whose rounds are 1-3, not the knockout's 5.
    settings = "stages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 4}\n"
    run = start(tournament(tmp_path, 8, settings)).play(better_seed)
    run.records = [r for r in run.records if not (r.round == 2 and r.game_id.endswith("-g1"))]
    assert run.rounds.describe() == "round 3: stage 1 (swiss), 3 of 3"


@pytest.mark.parametrize("settings", ["format: swiss\nrounds: 2\n", "format: knockout\n"])
def test_a_bot_that_comes_after_the_last_round_is_paired_is_shut_out(tmp_path: Path, settings: str) -> None:
    # The course's late team, its folder dropped in once the Swiss was over:
    # ranked last with no game, and the run said nothing.
    run = start(tournament(tmp_path, 4, settings))
    run.play(better_seed, until_round=1)
    late = tournament(tmp_path, 5, settings).competition
    rounds = read_progress(late, [*run.seeding, "s5"], run.pairings, run.records)
    assert shut_out(late, rounds) == ([] if "swiss" in settings else ["s5"])  # a Swiss pairs it next round
    run.play(better_seed)
    rounds = read_progress(late, [*run.seeding, "s5"], run.pairings, run.records)
    assert shut_out(late, rounds) == ["s5"]
    assert shut_out(replace(late, rules=replace(late.rules, withdrawn=("s5",))), rounds) == []


def test_more_swiss_rounds_are_refused_once_the_next_stage_is_paired(tmp_path: Path) -> None:
    stages = "stages:\n  - {format: swiss, rounds: %d}\n  - {format: knockout, top: 4}\n"
    run = start(tournament(tmp_path, 8, stages % 3))
    run.play(better_seed, until_round=3)
    run.advance()  # the knockout's first round paired
    meta = tournament_meta(run.config, seeding=run.seeding, pairings=run.pairings)
    with pytest.raises(ResultsConflict, match="stage 1 with rounds 3"):
        RunPlan(tournament(tmp_path, 8, stages % 4), tmp_path).decide(meta, run.records)
    # Before the knockout is paired, more Swiss rounds are fine.
    early = tournament_meta(run.config, seeding=run.seeding, pairings=run.pairings[:3])
    RunPlan(tournament(tmp_path, 8, stages % 4), tmp_path).decide(early, run.records)


# -- what tournament.json holds --------------------------------------------------------


@pytest.mark.parametrize("stage", [
    Stage("swiss", rounds=7), Stage("swiss", rounds=3, bye="draw"), Stage("knockout"),
    Stage("knockout", top=8, games_per_match=2, tiebreak_pairs=0), Stage("round-robin", rounds=2, top=4),
])
def test_stage_round_trips_through_json(stage: Stage) -> None:
    entry = json.loads(json.dumps(stage.to_json()))
    assert msgspec.convert(entry, StageEntry).stage() == stage


def test_stage_json_holds_only_its_formats_keys() -> None:
    assert Stage("knockout", top=4).to_json() == {"format": "knockout", "top": 4, "games_per_match": 1, "tiebreak_pairs": 3}
    assert Stage("swiss", rounds=5).to_json() == {"format": "swiss", "rounds": 5, "bye": "win"}
    assert Stage("round-robin").to_json() == {"format": "round-robin", "rounds": 1}


@pytest.mark.parametrize("entry", [
    {"format": "gauntlet"},
    {"format": "swiss", "rounds": 0},
    {"format": "swiss", "rounds": 10_001},
    {"format": "swiss", "rounds": 3, "bye": "half"},
    {"format": "knockout", "games_per_match": 0},
    {"format": "knockout", "tiebreak_pairs": -1},
    {"format": "knockout", "top": 1},
    {"format": "swiss", "rounds": "many"},
    {"format": "swiss", "rounds": None},
    {"rounds": 3},
    "swiss",
    None,
])
def test_a_stage_entry_refuses_what_is_not_a_stage(entry: object) -> None:
    with pytest.raises(ValueError):
        msgspec.convert(entry, StageEntry).stage()


#: A staged tournament.json of five bots, its pairings to be set.
STAGED_META = {"name": "t", "game": "oxono", "seed": 1, "format": "stages", "bots": [{"name": n} for n in "abcde"],
               "stages": [{"format": "swiss", "rounds": 2}, {"format": "knockout", "top": 4}]}


def test_pairings_round_trip_through_json() -> None:
    pairings = (
        Pairing(1, 1, (("a", "b"), ("c", "d")), ("e",)),
        Pairing(2, 1, (("a", "c"), ("b", "e")), ("d",)),
        Pairing(3, 2, (("a", None), ("b", "c"))),
    )
    stored = json.loads(json.dumps([p.to_json() for p in pairings]))
    assert TournamentMeta.from_json({**STAGED_META, "pairings": stored}).pairings == pairings
    assert TournamentMeta.from_json({**STAGED_META, "pairings": []}).pairings == ()


@pytest.mark.parametrize("entries", [
    {"round": 1},
    "pairings",
    [{"round": 2, "stage": 1, "pairs": [["a", "b"]]}],
    [{"round": 1, "stage": 1, "pairs": [["a", "b"]]}, {"round": 3, "stage": 1, "pairs": [["a", "b"]]}],
    [{"round": 1, "stage": 1}],
    [{"stage": 1, "pairs": [["a", "b"]]}],
    [{"round": 1, "stage": 1, "pairs": [["a", "b", "c"]]}],
    [{"round": 1, "stage": 1, "pairs": [["a"]]}],
    [{"round": 1, "stage": 1, "pairs": 7}],
    [{"round": "one", "stage": 1, "pairs": []}],
    [{"round": 1, "stage": 1, "pairs": [[None, "b"]]}],
    [{"round": 1, "stage": 1, "pairs": [[1, 2]]}],
    [{"round": 1, "stage": 1, "pairs": [["a", "b"]], "byes": "c"}],
    ["round 1"],
])
def test_a_tournament_json_refuses_what_is_not_pairings(entries: object) -> None:
    with pytest.raises(MetaError) as refused:
        TournamentMeta.from_json({**STAGED_META, "pairings": entries})
    assert str(refused.value).startswith("pairings")


def test_a_hand_edited_knockout_round_that_cannot_be_followed_is_one_line(tmp_path: Path) -> None:
    config = tournament(tmp_path, 8, "format: knockout\n")
    run = start(config)
    run.play(better_seed, until_round=1)
    meta = tournament_meta(config, seeding=run.seeding, pairings=run.pairings)
    first = meta.pairings[0]
    meta = replace(meta, pairings=(replace(first, pairs=first.pairs[:3]), *meta.pairings[1:]))  # three matches: three winners
    records = [r for r in run.records if "s3" not in r.players.values() and "s6" not in r.players.values()]
    plan = RunPlan(config, tmp_path)
    plan.decide(meta, records)
    with pytest.raises(ResultsConflict, match="cannot pair round 2: 3 winners"):
        plan.advance(records)


def test_game_ids_name_the_bots_in_order() -> None:
    assert game_ids(3, "s2", "s10", 2) == ["r3-s10~s2-g1", "r3-s10~s2-g2", "r3-s10~s2-g3", "r3-s10~s2-g4"]
    assert game_ids(1, "a", "b", 0) == []


def test_points_order_breaks_ties_by_buchholz_then_sonneborn_berger_then_seeding() -> None:
    # a and b on 1 point each; a's opponent (c, 1.5 points) scored more than b's (d, 0.5).
    points = {("a", "c"): 1.0, ("c", "a"): 1.0, ("b", "d"): 1.0, ("d", "b"): 0.5, ("c", "d"): 0.5, ("d", "c"): 0.0}
    scores = {"a": 1.0, "b": 1.0, "c": 1.5, "d": 0.5}
    assert points_order(["b", "a", "c", "d"], points, scores) == ["c", "a", "b", "d"]
    # Nothing but the seeding between equals.
    assert points_order(["y", "x"], {}, {}) == ["y", "x"]


# -- tournament files ------------------------------------------------------------------


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, base_dir=tmp_path)
    message = str(info.value)
    assert "\n" not in message
    return message


def file_of(settings: str, bots: int = 5) -> str:
    return tournament_text(names(bots), settings)


def line_of(text: str, pattern: str, nth: int = 0) -> int:
    """The number of the ``nth`` line (from 0) of ``text`` that ``pattern`` matches."""
    return [i for i, line in enumerate(text.splitlines(), start=1) if re.search(pattern, line)][nth]


def test_the_stages_of_a_valid_file(tmp_path: Path) -> None:
    config = parse_config(file_of("format: swiss\nrounds: 3\nbye: draw\n"), base_dir=tmp_path)
    assert config.competition.stages == (Stage("swiss", rounds=3, bye="draw"),) and config.competition.rounds == 3
    assert config.competition.rules.ranking == "points" and config.competition.paired_by_results
    config = parse_config(file_of("format: knockout\ngames_per_match: 2\ntiebreak_pairs: 0\n"), base_dir=tmp_path)
    assert config.competition.stages == (Stage("knockout", games_per_match=2, tiebreak_pairs=0),)
    text = file_of("stages:\n  - {format: swiss, rounds: 4}\n  - {format: round-robin, top: 4, rounds: 2}\n"
                   "  - {format: knockout, top: 2}\n")
    config = parse_config(text, base_dir=tmp_path)
    assert config.competition.format == "stages"
    assert config.competition.stages == (Stage("swiss", rounds=4), Stage("round-robin", rounds=2, top=4), Stage("knockout", top=2))
    assert not parse_config(file_of(""), base_dir=tmp_path).competition.paired_by_results


CONFIG_ERRORS = [
    # (settings, the key named, a pattern of the line it is on, the problem)
    # A key left out is named with the line of the mapping it belongs in.
    ("format: swiss\n", "rounds", "^name:", "a Swiss needs rounds: (about log2 of the field: 3 for 5 bots)"),
    ("format: swiss\nrounds: 5\n", "rounds", "^rounds:",
     "5 bots can play at most 4 Swiss rounds (by then each has met every other, as in a round-robin), got 5"),
    ("format: knockout\nrounds: 3\n", "rounds", "^rounds:", "a knockout's rounds follow from its field"),
    ("stages:\n  - {format: swiss, rounds: 3}\n", "stages", "format: swiss",
     "needs at least 2 stages (a single one is format: swiss or format: knockout)"),
    ("stages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout}\n", "stages[1].top", "format: knockout",
     "required key missing"),
    ("stages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 6}\n", "stages[1].top", "top: 6",
     "must be from 2 to the 5 bots the stage before has, got 6"),
    ("stages:\n  - {format: swiss, rounds: 3}\n  - {format: swiss, rounds: 2, top: 4}\n  - {format: knockout, top: 5}\n",
     "stages[2].top", "top: 5", "must be from 2 to the 4 bots the stage before has, got 5"),
    ("stages:\n  - {format: swiss, rounds: 3, top: 4}\n  - {format: knockout, top: 4}\n", "stages[0].top", "top: 4",
     "the first stage plays every bot; top: goes in a later stage"),
    ("bye: win\n", "bye", "^bye:", "goes with format: swiss"),
    ("format: round-robin\nbye: loss\n", "bye", "^bye:", "goes with format: swiss"),
    ("format: round-robin\ngames_per_match: 2\n", "games_per_match", "^games_per_match:", "goes with format: knockout"),
    ("stages:\n  - {format: round-robin, bye: win}\n  - {format: knockout, top: 4}\n", "stages[0].bye", "bye: win",
     "does not go with format: round-robin"),
    ("format: knockout\nbye: win\n", "bye", "^bye:", "does not go with format: knockout"),
    ("format: swiss\nrounds: 3\ngames_per_match: 2\n", "games_per_match", "^games_per_match:",
     "does not go with format: swiss"),
    ("seed_from: nowhere\n", "seed_from", "^seed_from:", "goes with format: swiss, knockout or adaptive, or stages:"),
    ("seeding: random\n", "seeding", "^seeding:", "goes with format: swiss, knockout or adaptive, or stages:"),
    ("format: knockout\nseeding: seed_from\n", "seeding", "^seeding:",
     "seeding: seed_from needs seed_from: (the results directory whose ranking seeds the first round)"),
    ("format: knockout\nseeding: file\nseed_from: earlier\n", "seeding", "^seeding:",
     "seeding: file leaves seed_from: unused; remove one of them"),
    ("format: knockout\nseeding: best\n", "seeding", "^seeding:", "unknown value 'best'; use one of: file, random, seed_from"),
    ("format: swiss\nrounds: 3\nsprt: {elo0: 0, elo1: 5}\n", "sprt", "^sprt:", "an SPRT is a match of two bots, not a swiss tournament"),
    ("format: swiss\nstages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 4}\n", "format", "^format:",
     "goes either with stages: (each stage has its format) or without it, not both"),
    ("rounds: 2\nstages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 4}\n", "rounds", "^rounds:",
     "goes in a stage of stages:, not at the top"),
    ("format: knockout\ntiebreak_pairs: -1\n", "tiebreak_pairs", "^tiebreak_pairs:", "must not be negative, got -1"),
    ("format: swiss\nrounds: 3\nbye: half\n", "bye", "^bye:", None),
]


@pytest.mark.parametrize("settings, key, where, problem", CONFIG_ERRORS)
def test_config_errors_name_the_key_and_line(tmp_path: Path, settings: str, key: str, where: str,
                                             problem: str | None) -> None:
    text = file_of(settings)
    message = refusal(tmp_path, text)
    prefix = f"<string>:{line_of(text, where)}: {key}: "
    assert message.startswith(prefix), message
    if problem is not None:
        assert message == prefix + problem.format(tmp=tmp_path.resolve()), message


def test_seed_from_an_existing_directory_is_kept(tmp_path: Path) -> None:
    (tmp_path / "earlier").mkdir()
    config = parse_config(file_of("format: knockout\nseed_from: earlier\n"), base_dir=tmp_path)
    assert config.seed_from == tmp_path.resolve() / "earlier"


def test_seeding_random_is_drawn_from_the_tournament_s_seed(tmp_path: Path) -> None:
    def first_seeding(settings: str, seed: int) -> tuple[str, ...]:
        plan = RunPlan(tournament(tmp_path, 8, settings, seed=seed), tmp_path)
        plan.decide(None, [])
        plan.advance([])  # the first round paired: the seeding is kept in tournament.json
        assert plan.meta is not None and plan.meta.pairings
        return plan.meta.seeding

    drawn = first_seeding("format: knockout\nseeding: random\n", 3)
    assert sorted(drawn) == sorted(names(8)) and drawn != tuple(names(8))
    assert first_seeding("format: knockout\nseeding: random\n", 3) == drawn  # the same every run
    assert first_seeding("format: knockout\nseeding: random\n", 4) != drawn
    assert first_seeding("format: knockout\nseeding: file\n", 3) == first_seeding("format: knockout\n", 3) == tuple(names(8))
    assert parse_config(file_of("format: knockout\nseed_from: earlier\n"), base_dir=tmp_path).seeding == "seed_from"


STAGED = "stages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 4}\n"


def test_a_bot_of_the_knockout_taken_out_of_the_file_gives_a_walkover(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 8, STAGED))
    run.play(better_seed, until_round=3)
    run.advance()  # the knockout's first round is paired
    top = run.rounds.stages[1].field
    semi = run.pairings[3].pairs
    assert semi == ((top[0], top[3]), (top[1], top[2]))
    leaving = top[3]
    run.config = tournament(tmp_path, [b for b in names(8) if b != leaving], STAGED)
    run.play(better_seed)
    rounds = run.rounds
    assert rounds.finished
    _, knockout = rounds.stages
    # The knockout's field and seeds are those its bracket was drawn with, the
    # bot that left included, though the Swiss's order as read now has changed.
    assert knockout.field == top
    first = knockout.matches[0][0]
    assert first.bots == (top[0], leaving) and (first.winner, first.decided_by) == (top[0], "walkover")
    assert knockout.places[leaving] == (3, 4)


def test_a_bot_withdrawn_in_the_swiss_does_not_take_a_place_in_the_knockout(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 8, STAGED))
    # s1 wins its first two rounds, then does not start in the third.
    run.play(better_seed, until_round=2)
    run.play(lambda spec: forfeit(spec, "s1", "startup_failure") if "s1" in spec.players else better_seed(spec),
             until_round=3)
    assert withdrawn_bots(run.records, None) == {"s1"}
    swiss = run.rounds.stages[0]
    assert "s1" in swiss.order[:4]  # on points it is among the best four
    run.play(better_seed)
    rounds = run.rounds
    knockout = rounds.stages[1]
    expected = [b for b in swiss.order if b != "s1"][:4]
    assert knockout.field == expected
    assert {b for pair in run.pairings[3].pairs for b in pair} == set(expected)
    assert rounds.finished
    # It keeps its Swiss place among the others.
    assert "s1" in [b for b, _ in rounds.places()[4:]]


def test_a_swiss_round_with_no_pairing_free_of_rematches_allows_one_rather_than_stop(tmp_path: Path) -> None:
    # Three rounds between the odd and the even seeds (K3,3 in three perfect
    # matchings): a fourth can only pair within {s1, s3, s5} and {s2, s4, s6},
    # triangles, so one pair must meet again.
    config = tournament(tmp_path, 6, "format: swiss\nrounds: 5\n")
    run = start(config)
    run.pairings = [Pairing(1, 1, (("s1", "s2"), ("s3", "s4"), ("s5", "s6"))),
                    Pairing(2, 1, (("s1", "s4"), ("s3", "s6"), ("s5", "s2"))),
                    Pairing(3, 1, (("s1", "s6"), ("s3", "s2"), ("s5", "s4")))]
    run.records = [draws(spec) for spec in rounds_schedule(config.competition, run.rounds)]
    fourth = next_pairing(config.competition, run.rounds)
    assert fourth is not None and fourth.round == 4 and fourth.byes == ()
    paired = [b for pair in fourth.pairs for b in pair]
    assert sorted(paired) == names(6)
    met = {frozenset(pair) for p in run.pairings for pair in p.pairs}
    assert sum(frozenset(pair) in met for pair in fourth.pairs) >= 1


def test_the_games_a_run_keeps_between_rounds_are_those_it_would_schedule_again(tmp_path: Path) -> None:
    """A run keeps the games of the rounds no result changes (fixed_games)
    and schedules only the rest: the same schedule as from scratch at every
    step, a knockout's tie-break pairs (every game a draw) included."""
    config = tournament(tmp_path, 6, "stages: [{format: swiss, rounds: 2}, {format: knockout, top: 4, tiebreak_pairs: 2}]\n")
    run = start(config)
    known = None
    while pending := run.advance():
        rounds = run.rounds
        full = rounds_schedule(config.competition, rounds)
        assert rounds_schedule(config.competition, rounds, known=known) == full
        known = fixed_games(rounds, full)
        run.records += [result(spec, None) for spec in pending]
    assert known is not None and known.pairings == 2 and len(known.specs) == 2 * 3 * 2
    assert any(spec.game_id.endswith("-g3") for spec in full)  # a tie-break pair was scheduled

