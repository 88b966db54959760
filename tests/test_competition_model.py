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
from builders import arena, better_seed, league_file, played, records, start, tournament

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


def dropped(meta: TournamentMeta, name: str) -> TournamentMeta:
    """``meta`` with the bot ``name`` taken out of tournament.json by hand."""
    return TournamentMeta.from_json({**meta.to_json(), "bots": [b.to_json() for b in meta.bots if b.name != name]})


def test_a_champion_removed_after_the_event_is_not_ranked(tmp_path):
    run, meta = finished_cup(tmp_path)
    without = dropped(meta, "s1")
    read = results_of(tmp_path, without, run.records)
    standings = compute_standings(read.records, read.names, read.rules, rounds=read.rounds)
    assert "s1" not in [b.name for b in standings.bots]  # before: rank 1, 4 games, 0 points
    assert [(b.name, b.rank_text) for b in standings.bots[:2]] == [("s2", "1"), ("s3", "2–3")]
    assert {r.game_id for r in read.left_out} == {r.game_id for r in run.records if "s1" in r.players.values()}


def test_a_removed_teams_played_swiss_games_stay_on_show_in_the_report(tmp_path):
    run, meta = finished_cup(tmp_path)
    without = dropped(meta, "s6")
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
    other = replace(config, competition=replace(config.competition, rules=replace(config.competition.rules, sprt=SprtConfig(elo0=-10, elo1=0))))
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
    without_s3 = config.with_bots(config.bots[:2])
    replay = RunPlan(without_s3, tmp_path, replay=["s1"], keep=["s2"])
    replay.decide(meta, records)
    against_s3 = {r.game_id for r in records if {"s1", "s3"} == set(r.players.values())}
    assert against_s3 and against_s3 <= set(replay.replaced)


def test_the_meta_record_is_written_and_read_back_the_same(tmp_path):
    run, meta = finished_cup(tmp_path)
    assert write_meta(tmp_path, meta) and not write_meta(tmp_path, meta)  # the same: not written again
    assert read_meta(tmp_path) == meta
    assert TournamentMeta.from_json(json.loads(json.dumps(meta.to_json()))) == meta
    assert meta.competition.stages == (Stage("swiss", rounds=3), Stage("knockout", top=4))


@pytest.mark.parametrize("edit, problem", [
    (lambda m: m | {"bots": [{"name": f"b{i}"} for i in range(MAX_BOTS + 1)]}, "bots: Expected `array` of length <= 10000"),
    (lambda m: m | {"stages": [{"format": "knockout", "games_per_match": 1e9}, *m["stages"][1:]]}, "games_per_match"),
    (lambda m: m | {"openings": {"count": 3_000_000, "digest": "x", "suite": []}}, "openings.count"),
    (lambda m: m | {"game": "chess"}, "game: must be one of"),
    (lambda m: m | {"seed": "1"}, "seed: Expected `int | null`, got `str`"),
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


# -- one disputed game played again ---------------------------------------------------


def test_a_disputed_game_is_archived_and_played_again_under_its_id(tmp_path):
    config = tournament(tmp_path, 3)
    plan = RunPlan(config, tmp_path)
    plan.decide(None, [])
    records = [better_seed(spec) for spec in plan.schedule]
    disputed = records[5].game_id
    again = RunPlan(config, tmp_path, replay_games=[disputed, disputed])
    again.decide(tournament_meta(config), records)
    assert again.replaced == {disputed: "--replay-game"}
    assert [r.game_id for r in again.kept] == [r.game_id for r in records if r.game_id != disputed]


def test_replaying_a_game_that_is_not_there_is_one_line(tmp_path):
    config = tournament(tmp_path, 3)
    with pytest.raises(ResultsConflict, match=r"^--replay-game r9-x~y-g1: no such game in .*arena standings") as refused:
        RunPlan(config, tmp_path, replay_games=["r9-x~y-g1"]).decide(None, [])
    assert "\n" not in str(refused.value)


def test_a_swiss_game_played_again_keeps_the_pairings_made_since(tmp_path):
    run, meta = finished_cup(tmp_path)
    first = next(r for r in run.records if r.round == 1)
    plan = RunPlan(run.config, tmp_path, replay_games=[first.game_id])
    plan.decide(meta, run.records)
    assert [s.game_id for s in plan.advance(plan.kept)] == [first.game_id]
    # Won the other way this time: the rounds paired since stand.
    loser = min(first.players.values(), key=lambda n: -int(n[1:]))
    replayed = replace(better_seed(next(s for s in plan.schedule if s.game_id == first.game_id)),
                       winner=next(c for c, n in first.players.items() if n == loser))
    assert plan.advance([*plan.kept, replayed]) == [] and plan.pairings == run.pairings


def test_a_knockout_game_whose_match_decided_a_round_already_paired_stands(tmp_path):
    run = start(tournament(tmp_path, 4, "format: knockout\n")).play(better_seed)
    meta = tournament_meta(run.config, seeding=run.seeding, pairings=run.pairings)
    semi = next(r for r in run.records if r.round == 1)
    with pytest.raises(ResultsConflict, match="its knockout match decided who plays round 2, which is paired already"):
        RunPlan(run.config, tmp_path, replay_games=[semi.game_id]).decide(meta, run.records)
    final = next(r for r in run.records if r.round == 2)
    plan = RunPlan(run.config, tmp_path, replay_games=[final.game_id])
    plan.decide(meta, run.records)
    assert list(plan.replaced) == [final.game_id]


def test_arena_run_replays_a_disputed_game_and_archives_the_old_record(tmp_path):
    path = league_file(tmp_path, ["ann", "bob", "cy"])
    assert arena("run", path).exit_code == 0
    before = {r["game_id"]: r for r in records(tmp_path / "out")}
    disputed = sorted(before)[3]
    again = arena("run", path, "--replay-game", disputed)
    assert again.exit_code == 0, again.err
    assert played(again) == 1 and "playing 1 games again" in again.err
    after = {r["game_id"]: r for r in records(tmp_path / "out")}
    assert sorted(after) == sorted(before) and after[disputed]["started_at"] != before[disputed]["started_at"]
    (archived,) = records(tmp_path / "out", "replaced.jsonl")
    assert archived["reason"] == "--replay-game" and archived["record"] == before[disputed]


# -- withdrawals that keep results, disqualifications ---------------------------------


def test_a_withdrawn_bots_games_not_played_are_forfeits_and_it_starts_no_more(tmp_path):
    from arena.run.tournament import Withdrawals

    config = tournament(tmp_path, 3, "withdrawn: [s3]\n")
    plan = RunPlan(config, tmp_path)
    plan.decide(None, [])
    withdrawals = Withdrawals(config)
    playable = list(withdrawals.playable(plan.schedule))
    assert playable and all("s3" not in spec.players for spec in playable)
    forfeits = list(withdrawals.forfeits())
    assert len(forfeits) == sum("s3" in spec.players for spec in plan.schedule)
    for record in forfeits:
        assert record.players[record.forfeit_by] == "s3" and record.reason == "withdrawn"
        assert "withdrawn by the organiser" in record.detail and record.moves == []
    # On resume its forfeits stand: they are not played again, as a start-up failure's would be.
    again = RunPlan(config, tmp_path, replay_forfeits=["startup_failure", "withdrawn"])
    again.decide(tournament_meta(config), [*(better_seed(s) for s in playable), *forfeits])
    again.replay_forfeits_unless(False)
    assert again.replaced == {}


def test_a_withdrawn_or_disqualified_bot_is_not_paired_again_in_a_swiss(tmp_path):
    for key in ("withdrawn", "disqualified"):
        run = start(tournament(tmp_path, 6, f"format: swiss\nrounds: 3\n{key}: [s2]\n")).play(better_seed)
        later = [p for p in run.pairings if p.round > 1]
        assert later and all("s2" not in pair for p in later for pair in p.pairs) and all("s2" not in p.byes for p in later)


def test_a_disqualified_bot_loses_every_game_and_ranks_last(tmp_path):
    config = tournament(tmp_path, 3, "disqualified: [s1]\nranking: points\n")
    plan = RunPlan(config, tmp_path)
    plan.decide(None, [])
    records = [better_seed(spec) for spec in plan.schedule]  # s1 won every game on the board
    read = results_of(tmp_path, tournament_meta(config), records)
    standings = read.standings()
    assert [b.name for b in standings.bots] == ["s2", "s3", "s1"]
    s1 = standings.bots[-1]
    assert s1.disqualified and s1.wins == 0 and s1.losses == s1.games == 8 and s1.forfeits == {"disqualified": 8}
    s2 = standings.bots[0]
    assert s2.wins == 4 + 4  # its wins against s3, and its losses to s1 turned into forfeit wins
    from arena.results.tables import render_standings

    text = render_standings(standings, "plain", "ranking")
    assert "DQ" in text and "disqualified (every game scored as a loss; ranked last): s1" in render_standings(standings, "plain")
    # The records themselves are not changed.
    assert all(r.reason == "alignment" for r in read.records)


def test_withdrawn_and_disqualified_name_bots_of_the_file_once(tmp_path):
    from arena.run.config import ConfigError

    with pytest.raises(ConfigError, match=r"withdrawn\[0\]: no bot named 'nobody'"):
        tournament(tmp_path, 3, "withdrawn: [nobody]\n")
    with pytest.raises(ConfigError, match="'s1' is withdrawn too"):
        tournament(tmp_path, 3, "withdrawn: [s1]\ndisqualified: [s1]\n")


def test_arena_run_withdraws_a_team_whose_results_stand(tmp_path):
    path = league_file(tmp_path, ["ann", "bob", "cy"])
    path.write_text(path.read_text().replace("concurrency: 2\n", "concurrency: 2\nrounds: 2\n"))
    text = path.read_text()
    path.write_text(text.replace("rounds: 2\n", "rounds: 1\n"))
    assert played(arena("run", path)) == 12
    path.write_text(text + "withdrawn: [cy]\n")  # round 2 added, cy withdrawn
    logs = {p: p.stat().st_mtime_ns for p in (tmp_path / "out" / "logs" / "cy").rglob("*") if p.is_file()}
    second = arena("run", path)
    assert second.exit_code == 0, second.err
    assert played(second) == 12
    # Never started again: not even the pre-flight wrote to its logs.
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "out" / "logs" / "cy").rglob("*") if p.is_file()} == logs
    games = records(tmp_path / "out")
    round_2 = [r for r in games if r["round"] == 2]
    assert sum(r["reason"] == "withdrawn" for r in round_2) == 8  # cy's, forfeited unplayed
    assert all(r["players"][r["forfeit_by"]] == "cy" for r in round_2 if r["reason"] == "withdrawn")
    assert sum("cy" in r["players"].values() for r in games if r["round"] == 1) == 8  # its round 1 stands
    again = arena("run", path)
    assert played(again) == 0 and not (tmp_path / "out" / "replaced.jsonl").exists()
    standings = json.loads(arena("standings", path, "-f", "json").out)
    cy = next(b for b in standings["bots"] if b["name"] == "cy")
    assert cy["withdrawn"] and cy["games"] == 16


@pytest.mark.parametrize("forged", [
    {"games_per_match": 10**9}, {"bots": 20_000}, {"suite": 3_000_000},
])
def test_a_forged_tournament_json_is_one_warning_for_the_readers_and_one_line_for_a_run(tmp_path, forged):
    import time

    path = league_file(tmp_path, ["ann", "bob"], extra="format: knockout\n")
    assert arena("run", path).exit_code == 0
    meta_path = tmp_path / "out" / "tournament.json"
    meta = json.loads(meta_path.read_text())
    if "games_per_match" in forged:
        meta["stages"][0]["games_per_match"] = forged["games_per_match"]
    elif "bots" in forged:
        meta["bots"] = [{"name": f"b{i}", "options": {}} for i in range(forged["bots"])]
    else:
        meta["openings"] = {"count": forged["suite"], "digest": "0" * 16, "suite": [[0, []]] * 10}
    meta_path.write_text(json.dumps(meta))
    started = time.monotonic()
    for command in ("standings", "report", "show"):
        args = (command, tmp_path / "out") + (("r1-ann~bob-g1",) if command == "show" else ())
        result = arena(*args)  # no traceback (arena() asserts it)
        assert result.exit_code == 0, result.err
        assert "tournament.json" in result.err and "it is ignored, every readable game is ranked" in result.err
    refused = arena("run", path)
    assert refused.exit_code == 2 and len(refused.err.strip().splitlines()) == 1 and "tournament.json" in refused.err
    assert time.monotonic() - started < 60
