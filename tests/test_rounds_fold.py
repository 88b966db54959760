"""The rounds a run keeps game by game (``ProgressFold``, the fold behind
``RunPlan.advance`` and ``RunPlan.progress``) are the rounds read anew from
every record (``read_progress``) after every game: in Swiss, knockout,
staged and adaptive tournaments, with bots withdrawn by their crashes, bots
that did not start, a bot disqualified half-way, a game recorded again, and
records coming in any order, before or after the pairings, as a resumed run
reads them."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.formats.competition import Competition
from arena.formats.progression import ProgressFold, read_progress
from arena.formats.rounds import Rounds
from arena.formats.stages import Pairing
from arena.game.records import GameRecord, GameSpec
from arena.run.results_dir import RunPlan
from builders import Run, forfeit, result, start, tournament


def chance(spec: GameSpec) -> float:
    """A number in [0, 1) fixed by the game's id: the same game, the same result."""
    return int(hashlib.sha256(spec.game_id.encode()).hexdigest()[:8], 16) / 2**32


def decider(draws: float, crashes: str | None = None, no_start: str | None = None) -> Callable[[GameSpec], GameRecord]:
    """Results by chance, ``draws`` of them drawn; ``crashes`` loses every
    game from round 2 by a crash, ``no_start`` every game of round 3 without
    starting."""
    def decide(spec: GameSpec) -> GameRecord:
        u = chance(spec)
        if crashes in spec.players and spec.round >= 2:
            return forfeit(spec, crashes, "crash")
        if no_start in spec.players and spec.round == 3:
            return forfeit(spec, no_start, "startup_failure")
        return result(spec, None if u < draws else spec.players[0] if u < (1 + draws) / 2 else spec.players[1])
    return decide


def shuffled(records: Sequence[GameRecord], seed: str) -> list[GameRecord]:
    out = list(records)
    random.Random(seed).shuffle(out)
    return out


def comparable(rounds: Rounds) -> tuple[Rounds, list[Any]]:
    """``rounds`` with each adaptive fit as its ratings (a fit holds an array, which == does not compare)."""
    stages = [replace(s, model=None) for s in rounds.stages]
    return replace(rounds, stages=stages), [s.model.elo if s.model is not None else None for s in rounds.stages]


def assert_folds_as_read(competition: Competition, seeding: Sequence[str], pairings: list[Pairing],
                         records: list[GameRecord], seed: str) -> None:
    """Fold ``pairings`` and ``records`` three ways, checking the fold
    against a reading of all so far after each step: as a run plays (each
    round paired, then its games in any order), as a resumed run reads them
    (every pairing, then every record in any order), and every record
    before the pairings; then a game recorded again with another result."""
    def check(fold: ProgressFold, paired: Sequence[Pairing], recorded: Sequence[GameRecord]) -> None:
        assert comparable(fold.rounds()) == comparable(read_progress(competition, seeding, paired, recorded))

    live, so_far = ProgressFold(competition, seeding), []
    for number, pairing in enumerate(pairings, start=1):
        live.pair(pairing)
        check(live, pairings[:number], so_far)
        for record in shuffled([r for r in records if r.round == pairing.round], f"{seed}/{number}"):
            live.add(record)
            so_far.append(record)
            check(live, pairings[:number], so_far)
    assert len(so_far) == len(records)

    resumed, so_far = ProgressFold(competition, seeding, pairings), []
    for record in shuffled(records, seed):
        resumed.add(record)
        so_far.append(record)
        check(resumed, pairings, so_far)

    early = ProgressFold(competition, seeding)
    for record in records:
        early.add(record)
    for number, pairing in enumerate(pairings, start=1):
        early.pair(pairing)
        check(early, pairings[:number], records)

    # A game played again: its later record counts.
    again = records[0]
    winner = next(name for color, name in again.players.items() if color != again.winner)
    replayed = result(GameSpec(again.index, again.game_id, again.game, again.round, tuple(again.players.values()),
                               again.opening, again.seed), winner)
    resumed.add(replayed)
    check(resumed, pairings, [*records, replayed])


def played(run: Run, decide: Callable[[GameSpec], GameRecord]) -> Run:
    """``run`` played to its end, each batch's records stored in an order of their own."""
    for _ in range(1_000):
        pending = run.advance()
        if not pending:
            return run
        run.records += shuffled([decide(spec) for spec in pending], pending[0].game_id)
    raise AssertionError("the tournament never ends")


@pytest.mark.parametrize("bots, settings, decide, out", [
    (9, "format: swiss\nrounds: 5\nwithdraw_after_crashes: 2\n", decider(0.2, crashes="s3", no_start="s7"), {"s3", "s7"}),
    (11, "format: knockout\ntiebreak_pairs: 2\n", decider(0.5), set()),
    (6, "format: knockout\ngames_per_match: 2\ntiebreak_pairs: 1\nwithdraw_after_crashes: 3\n",
     decider(0.4, crashes="s2"), {"s2"}),
    (10, "stages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 4}\n", decider(0.3, no_start="s9"),
     {"s9"}),
    (5, "stages:\n  - {format: round-robin}\n  - {format: knockout, top: 2}\n", decider(0.3), set()),
    (6, "format: adaptive\nmax_games: 20\nsettle: {confidence: 0.9}\nwithdraw_after_crashes: 2\n", decider(0.2, crashes="s5"), {"s5"}),
], ids=["swiss", "knockout", "knockout-tiebreaks", "swiss-then-knockout", "round-robin-then-knockout", "adaptive"])
def test_the_rounds_folded_game_by_game_are_those_read_from_every_record(
        tmp_path: Path, bots: int, settings: str, decide: Callable[[GameSpec], GameRecord], out: set[str]) -> None:
    run = played(start(tournament(tmp_path, bots, settings)), decide)
    assert run.rounds.finished and len(run.pairings) >= 2 and run.rounds.out_of_play == out
    assert_folds_as_read(run.config.competition, run.seeding, run.pairings, run.records, settings)


def test_a_swiss_whose_bot_is_disqualified_half_way_folds_as_it_reads(tmp_path: Path) -> None:
    settings = "format: swiss\nrounds: 4\n"
    decide = decider(0.3)
    run = start(tournament(tmp_path, 8, settings)).play(decide, until_round=2)
    run.config = tournament(tmp_path, 8, settings + "disqualified: [s4]\n")
    run = played(run, decide)
    assert not any("s4" in p for pairing in run.pairings[2:] for p in pairing.pairs)
    # Its games of the rounds before score as its losses.
    assert run.rounds.stages[0].points["s4"] == 0.0
    assert_folds_as_read(run.config.competition, run.seeding, run.pairings, run.records, settings)


def test_a_run_folds_the_records_it_appends_and_reads_another_list_anew(tmp_path: Path) -> None:
    run = played(start(tournament(tmp_path, 7, "format: swiss\nrounds: 3\n")), decider(0.2))
    plan = RunPlan(run.config, tmp_path)
    plan.decide(None, [])
    records: list[GameRecord] = []
    while pending := plan.advance(records):
        for spec in pending:
            records.append(next(r for r in run.records if r.game_id == spec.game_id))
            assert plan.progress(records) == read_progress(run.config.competition, plan.seeding, plan.pairings, records)
    assert plan.pairings == run.pairings
    # Another list (a run that starts over from what it read): folded from its first record.
    fewer = records[: len(records) // 2]
    assert plan.progress(fewer) == read_progress(run.config.competition, plan.seeding, plan.pairings, fewer)
    assert plan.progress(records) == run.rounds
