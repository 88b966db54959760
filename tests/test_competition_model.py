"""The competition model after a disruption: a round played again in a
staged tournament, a champion removed, a team's played games on show, the
SPRT's settings, and ``tournament.json`` as the one typed record of a
results directory (bounded, refused in one line when forged)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from arena.formats.stages import Stage
from arena.results.meta import MAX_BOTS, MetaError, TournamentMeta, read_meta, write_meta
from arena.results.reading import results_of
from arena.results.report.bracket import rounds_html
from arena.results.standings import compute_standings
from arena.results.store import ResultsConflict, StoreError
from arena.results.sprt import SprtConfig
from arena.run.results_dir import RunPlan, tournament_meta
from test_rounds import better_seed, start, tournament

CUP = "stages: [{format: swiss, rounds: 3}, {format: knockout, top: 4}]\n"


def finished_cup(tmp_path: Path, bots: int = 6):
    run = start(tournament(tmp_path, bots, CUP)).play(better_seed)
    assert run.rounds.finished
    return run, tournament_meta(run.config, seeding=run.seeding, pairings=run.pairings)


def test_a_staged_tournament_whose_swiss_games_are_played_again_keeps_its_knockout(tmp_path):
    # An interrupted --replay (or a deleted line) leaves Swiss games missing after the knockout was paired.
    run, meta = finished_cup(tmp_path)
    missing = [r for r in run.records if r.round == 1 and "s1" in r.players.values()]
    records = [r for r in run.records if r not in missing]
    plan = RunPlan(run.config, tmp_path)
    plan.decide(meta, records)  # before: "holds game 'r4-…', which the tournament file does not schedule"
    assert not plan.records.foreign
    assert sorted(s.game_id for s in plan.advance(plan.kept)) == sorted(r.game_id for r in missing)
    # Played again as they were, the tournament is as it was: same pairings, same champion.
    assert plan.advance([*plan.kept, *missing]) == [] and plan.pairings == run.pairings
    read = results_of(tmp_path, meta, records)
    assert not read.warnings and read.rounds is not None and len(read.rounds.stages) == 2
    assert read.rounds.places()[0] == ("s1", (1, 1))


def test_a_champion_removed_after_the_event_is_not_ranked(tmp_path):
    run, meta = finished_cup(tmp_path)
    without = replace(meta, bots=tuple(b for b in meta.bots if b.name != "s1"))
    read = results_of(tmp_path, without, run.records)
    standings = compute_standings(read.records, read.names, ranking=read.ranking, rounds=read.rounds)
    assert "s1" not in [b.name for b in standings.bots]  # before: rank 1, 4 games, 0 points
    assert [(b.name, b.rank_text) for b in standings.bots[:2]] == [("s2", "1"), ("s3", "2–3")]
    assert {r.game_id for r in read.left_out} == {r.game_id for r in run.records if "s1" in r.players.values()}


def test_a_removed_teams_played_swiss_games_stay_on_show_in_the_report(tmp_path):
    run, meta = finished_cup(tmp_path)
    without = replace(meta, bots=tuple(b for b in meta.bots if b.name != "s6"))
    read = results_of(tmp_path, without, run.records)
    swiss = read.rounds.stages[0]
    played = [(key, result) for key, result in swiss.results.items() if "s6" in key[1:]]
    assert played and all(result.games and not result.counted for _, result in played)
    html = rounds_html(read.rounds)
    assert "not counted: a bot left" in html and "not played: a bot left" not in html
    for _, result in played:
        assert all(game_id in html for game_id in result.games)
    # Its opponents' points leave with its games.
    assert all("s6" not in pair for pair in swiss.pair_points)


def test_a_test_run_again_with_other_bounds_is_refused_naming_both(tmp_path):
    config = replace(tournament(tmp_path, 2, "sprt: {elo0: 0, elo1: 5}\n"), path=None)
    run = start(config)
    schedule = RunPlan(config, tmp_path)
    schedule.decide(None, [])
    records = [better_seed(spec) for spec in schedule.schedule[:4]]
    meta = tournament_meta(config)
    other = replace(config, sprt=SprtConfig(elo0=-10, elo1=0))
    with pytest.raises(ResultsConflict, match=r"SPRT elo0=0,elo1=5,alpha=0.05,beta=0.05,model=normalized, this command "
                                              r"now says elo0=-10,elo1=0,alpha=0.05,beta=0.05,model=normalized"):
        RunPlan(other, tmp_path).decide(meta, records)
    RunPlan(config, tmp_path).decide(meta, records)  # the same test resumes
    RunPlan(other, tmp_path).decide(meta, [])  # nothing played yet: nothing to mix
    assert run.config is config


def test_replay_archives_the_bots_games_against_a_departed_bot(tmp_path):
    # Removed, changed and replayed, put back: its old games against the departed bot must not come back.
    config = tournament(tmp_path, 3)
    plan = RunPlan(config, tmp_path)
    plan.decide(None, [])
    records = [replace(better_seed(spec), versions={"pink": "old", "black": "old"}) for spec in plan.schedule]
    meta = tournament_meta(config)
    without_s3 = replace(config, bots=config.bots[:2])
    replay = RunPlan(without_s3, tmp_path, replay=["s1"], keep=["s2"])
    replay.decide(meta, records)
    against_s3 = {r.game_id for r in records if {"s1", "s3"} == set(r.players.values())}
    assert against_s3 and against_s3 <= set(replay.replaced)


def test_the_meta_record_is_written_and_read_back_the_same(tmp_path):
    run, meta = finished_cup(tmp_path)
    assert write_meta(tmp_path, meta) and not write_meta(tmp_path, meta)  # the same: not written again
    assert read_meta(tmp_path) == meta
    assert TournamentMeta.from_json(json.loads(json.dumps(meta.to_json()))) == meta
    assert meta.stages == (Stage("swiss", rounds=3), Stage("knockout", top=4))


@pytest.mark.parametrize("edit, problem", [
    (lambda m: m | {"bots": [{"name": f"b{i}"} for i in range(MAX_BOTS + 1)]}, "over the 10000"),
    (lambda m: m | {"stages": [{"format": "knockout", "games_per_match": 1e9}, *m["stages"][1:]]}, "games_per_match"),
    (lambda m: m | {"openings": {"count": 3_000_000, "digest": "x", "suite": []}}, "openings.count"),
    (lambda m: m | {"game": "chess"}, "game: must be one of"),
    (lambda m: m | {"seed": "1"}, "seed: must be a whole number"),
    (lambda m: m | {"bots": [{"name": 7}]}, "bots[0].name"),
])
def test_a_forged_tournament_json_is_one_line_naming_the_key(tmp_path, edit, problem):
    _, meta = finished_cup(tmp_path, 4)
    (tmp_path / "tournament.json").write_text(json.dumps(edit(meta.to_json())))
    with pytest.raises(MetaError) as refused:
        read_meta(tmp_path)
    assert problem in str(refused.value) and "\n" not in str(refused.value)


def test_a_tournament_json_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    import os

    os.mkfifo(tmp_path / "tournament.json")  # a reader that opened it would wait forever
    with pytest.raises(StoreError, match="FIFO"):
        read_meta(tmp_path)
    (tmp_path / "tournament.json").unlink()
    (tmp_path / "tournament.json").symlink_to("/etc/hostname")
    with pytest.raises(StoreError, match="symbolic link"):
        read_meta(tmp_path)
