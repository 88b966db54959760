"""Regression tests for review findings on Swiss, knockout and staged tournaments."""

from __future__ import annotations

from dataclasses import replace

from pathlib import Path

import pytest

from arena.results.standings import compute_standings
from arena.results.store import ResultsConflict
from arena.results.tables import render_standings
from arena.formats.pairing import swiss_round
from arena.formats.progression import read_progress, rounds_schedule
from arena.run.results_dir import RunPlan, tournament_meta
from tests.test_rounds import better_seed, start, tournament, winner_by, seed


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


def test_a_knockout_in_progress_places_the_bots_still_in_above_those_knocked_out(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 8, "format: knockout\n"))
    run.play(better_seed, until_round=1)
    assert run.rounds.places() == [*((f"s{i}", (1, 4)) for i in range(1, 5)), *((f"s{i}", (5, 8)) for i in range(5, 9))]


def test_places_are_the_rank_only_under_points(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 8, "format: knockout\nranking: trueskill\n"))
    run.play(winner_by(lambda spec: None if spec.round == 1 else min(spec.players, key=seed)))
    standings = compute_standings(run.records, [b.name for b in run.config.bots], ranking="trueskill", rounds=run.rounds)
    table = render_standings(standings, "plain", "ranking")
    assert "5–8" not in table and "3–4" not in table


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


def test_a_round_that_needs_a_rematch_has_as_few_as_it_can() -> None:
    standing = [("a", 8.0), ("b", 6.0), ("c", 5.0), ("d", 5.0), ("e", 3.0), ("f", 3.0)]
    met = {frozenset(p) for p in ("ab", "ac", "ad", "ae", "af", "cd", "ef")}
    pairs, bye = swiss_round(standing, met, rematches=True)
    assert sum(frozenset(p) in met for p in pairs) == 1 and bye is None


def test_a_bot_that_left_after_a_bye_is_not_ranked_for_it(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 5, "format: swiss\nrounds: 2\n"))
    run.play(better_seed)
    (had_bye,) = run.pairings[0].byes
    rest = [b.name for b in run.config.bots if b.name != had_bye]
    left = tournament(tmp_path, rest, "format: swiss\nrounds: 2\n")
    rounds = read_progress(left.competition, run.seeding, run.pairings, run.records)
    standings = compute_standings([r for r in run.records if had_bye not in r.players.values()], rest,
                                  ranking="points", rounds=rounds)
    assert had_bye not in [b.name for b in standings.bots]
