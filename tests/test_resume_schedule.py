"""A resumed league makes its schedule only as far as its rounds not complete:
:class:`~arena.formats.schedule.FixedSchedule` gives what ``make_schedule``
gives, places each record from its id, and a resume through it plays the
same games to the same standings as one through the whole schedule."""

import os
from dataclasses import replace

import pytest

import arena.formats.game_pairs as game_pairs
import arena.run.results_dir as results_dir
from arena.formats.competition import Competition, Rules
from arena.formats.schedule import FixedSchedule, make_schedule
from arena.game.openings import Opening
from arena.game.records import GameRecord
from arena.results.game_index import INDEX_FILE
from arena.results.reading import sort_records
from arena.results.standings import compute_standings
from arena.run.config import load_config
from arena.run.tournament import pending_specs, run_tournament
from builders import record_for, tournament_file

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

COMPETITIONS = [
    Competition("oxono", 7, "round-robin", ("a", "b", "c", "d"), rounds=3),
    Competition("oxono", 7, "reference", ("a", "b", "c", "d", "e"), rounds=2, rules=Rules(reference=("b", "d"))),
    Competition("yoxii", 1, "gauntlet", ("z", "b", "c"), rounds=2),
    Competition("oxono", 3, "round-robin", ("a", "b", "c"), rounds=2,
                openings=(Opening(0, ()), Opening(1, ("Xc5 c6",)), Opening(0, ("Xd4 d5",)))),
]


@pytest.mark.parametrize("competition", COMPETITIONS, ids=lambda c: c.format)
def test_a_fixed_schedule_is_the_schedule_made_whole(competition):
    versions = {name: f"v-{name}" for name in competition.names}
    whole, fixed = make_schedule(competition, versions), FixedSchedule(competition, versions)
    assert list(fixed) == whole and len(fixed) == len(whole)
    assert fixed[:5] == whole[:5] and fixed[-1] == whole[-1] and fixed[len(whole) // 2] == whole[len(whole) // 2]
    assert [spec for r in range(1, competition.rounds + 1) for spec in fixed.round(r)] == whole
    with pytest.raises(IndexError):
        fixed[len(whole)]


def test_records_are_placed_from_their_ids_as_against_the_whole_schedule():
    before = Competition("oxono", 7, "round-robin", ("a", "b", "c", "gone"), rounds=2)
    now = replace(before, names=("a", "b", "c", "new"))  # a bot left, one joined: the games' places move
    played = [record_for(spec) for spec in make_schedule(before)]
    other_seed = [record_for(spec) for spec in make_schedule(replace(before, seed=8))[:3]]
    beyond = [record_for(spec) for spec in make_schedule(replace(before, rounds=3))[-2:]]
    odd = [replace(played[0], game_id="r1-a~b-g99"), replace(played[1], game_id="game one")]
    records = played + other_seed + beyond + odd
    whole = sort_records(records, make_schedule(now), now.names)
    fixed = sort_records(records, FixedSchedule(now), now.names)
    assert fixed == whole
    assert whole.kept and whole.left_out and whole.foreign
    assert any(r.index != s.index for r, s in zip(whole.kept, played))  # (placed anew, not as recorded)


def test_the_games_left_are_those_of_the_rounds_not_complete():
    competition = Competition("oxono", 7, "round-robin", ("a", "b", "c", "d"), rounds=4)
    whole = make_schedule(competition)
    per_round = len(whole) // 4
    done = whole[:per_round] + whole[per_round + 3:2 * per_round - 1] + whole[3 * per_round:]
    kept = sort_records([record_for(spec) for spec in done], whole, competition.names).kept
    assert FixedSchedule(competition).pending(kept) == pending_specs(whole, kept)
    assert len(pending_specs(FixedSchedule(competition), kept)) == 4 + per_round


def _league(directory, rounds, left, *, names=("a", "b", "c", "d")):
    """A league of 4 bots over ``rounds`` rounds whose directory holds all
    its games but the last ``left``, played by the bots ``names``."""
    directory.mkdir()
    config = load_config(tournament_file(directory, ("a", "b", "c", "d"), rounds=rounds, seed=5))
    config.output.mkdir()
    played = make_schedule(replace(config.competition, names=names))
    (config.output / "games.jsonl").write_bytes(b"".join(record_for(spec).to_line() for spec in played[:len(played) - left]))
    return config


class _Winners:
    """An executor whose seat 0 wins every game it is given, at once."""

    def __init__(self):
        self.given = []

    def session(self):
        from contextlib import nullcontext

        return nullcontext()

    def run(self, specs):
        for spec in specs:
            self.given.append(spec.game_id)
            yield GameRecord(game_id=spec.game_id, game=spec.game, players=dict(zip(("pink", "black"), spec.players)),
                             seed=spec.seed, opening=spec.opening, time_control={"per_move_ms": 1},
                             winner="pink", reason="alignment", index=spec.index, round=spec.round)


def test_a_resumed_league_makes_no_spec_of_its_complete_rounds(tmp_path, monkeypatch):
    made = []
    spec_type = game_pairs.GameSpec

    def counted(*args, **fields):
        made.append(fields.get("game_id"))
        return spec_type(*args, **fields)

    monkeypatch.setattr(game_pairs, "GameSpec", counted)
    specs_made = {}
    for rounds in (3, 12):  # the last round left with 5 games to play, the rounds before complete
        config = _league(tmp_path / f"r{rounds}", rounds, 5)
        made.clear()
        summary = run_tournament(config, executor=_Winners())
        assert summary.played == 5 and summary.resumed == summary.total - 5
        specs_made[rounds] = len(made)
    assert specs_made[3] == specs_made[12] == summary.total // 12  # the last round's, whatever the rounds before


def test_a_resume_through_the_fixed_schedule_is_the_resume_through_the_whole_one_without_the_index(tmp_path, monkeypatch):
    ran = {}
    for way in ("fixed", "whole"):
        # a bot that left (its games left out) and one that joins now: every game's place moves
        config = _league(tmp_path / way, 3, 30, names=("a", "b", "c", "gone"))
        lines = (config.output / "games.jsonl").read_bytes().splitlines(keepends=True)
        (config.output / "games.jsonl").write_bytes(b"".join(lines[1::3] + lines[::3]))  # holes, out of order
        if way == "whole":
            monkeypatch.setattr(results_dir, "FixedSchedule", make_schedule)
            os.mkfifo(config.output / INDEX_FILE)  # no index: the log read as it is
        executor = _Winners()
        summary = run_tournament(config, executor=executor)
        assert summary.played and summary.resumed
        table = compute_standings(summary.records, [bot.name for bot in config.bots]).bots
        ran[way] = (executor.given, [(r.game_id, r.index, r.pair, r.round, r.winner) for r in summary.records],
                    [(b.name, b.mu, b.sigma, b.wins, b.draws, b.losses) for b in table], summary.total, summary.warnings)
    assert ran["fixed"] == ran["whole"]
