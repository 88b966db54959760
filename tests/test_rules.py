"""``Rules``, the one record of what decides a tournament's games and its
ranking beyond the schedule: the tournament file's reader makes it,
``tournament.json`` holds it under the keys it always had, and the readers
take it whole (issue 36)."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path

import pytest

from arena.formats.competition import Competition, Rules, Unsaid
from arena.formats.schedule import make_schedule
from arena.results.meta import MetaError, TournamentMeta
from arena.results.reading import results_of
from arena.results.sprt import SprtConfig
from arena.results.standings import compute_standings
from arena.run.config import parse_config
from arena.run.results_dir import tournament_meta
from builders import result

BOTS = "bots:\n" + "".join(f"  - {{name: {name}, cmd: python -m bots.random_bot}}\n" for name in ("a", "b", "c", "d"))
#: Between them, every field of Rules away from its default (an SPRT is a
#: match of two bots, a reference tournament needs a reference).
FILES = (
    "format: reference\nreference: [a]\nranking: elo\n"
    "withdraw_after_crashes: 2\nwithdrawn: [b]\ndisqualified: [c]\n" + BOTS,
    "ranking: points\nsprt: {elo0: 0, elo1: 5, model: logistic}\n"
    "bots:\n  - {name: a, cmd: python -m bots.random_bot}\n  - {name: b, cmd: python -m bots.random_bot}\n",
)


def config_of(text: str):
    return parse_config("name: t\ngame: oxono\ntime_control: 5+0.1\n" + text, base_dir=Path("/tmp"))


@pytest.mark.parametrize("text", FILES)
def test_the_rules_go_from_the_file_to_tournament_json_and_back_whole(text):
    config = config_of(text)
    meta = tournament_meta(config)
    read = TournamentMeta.from_json(json.loads(json.dumps(meta.to_json())))
    assert read.competition.rules == meta.competition.rules == config.competition.rules
    assert read.competition == meta.competition == config.competition
    assert read.rebuilt().rules == config.competition.rules


def test_the_files_set_every_field_of_the_rules_so_a_new_one_is_checked_too():
    # A field added to Rules without its reader (YAML or JSON) fails the test above once a file sets it here.
    defaults = Rules()
    changed = {f.name for text in FILES for f in fields(Rules)
               if getattr(config_of(text).competition.rules, f.name) != getattr(defaults, f.name)}
    assert changed == {f.name for f in fields(Rules)}


def test_tournament_json_holds_the_rules_under_the_keys_it_always_had():
    data = tournament_meta(config_of(FILES[0])).to_json()
    assert {key: data[key] for key in Rules().to_json()} == {
        "reference": ["a"], "ranking": "elo", "withdraw_after_crashes": 2, "withdrawn": ["b"], "disqualified": ["c"],
        "sprt": None}
    # A file written before the record (the SPRT after the openings) reads the same.
    match = tournament_meta(config_of(FILES[1])).to_json()
    sprt = match.pop("sprt")
    assert TournamentMeta.from_json({**match, "sprt": sprt}).competition.rules.sprt == SprtConfig(0, 5, model="logistic")


def test_the_standings_of_a_directory_are_those_of_its_rules_taken_whole(tmp_path):
    config = config_of(FILES[0].replace("format: reference\nreference: [a]\n", ""))
    games = [result(spec, spec.players[0] if spec.index % 3 else None) for spec in make_schedule(config.competition)]
    read = results_of(tmp_path, tournament_meta(config), games)
    assert read.rules == config.competition.rules
    standings = read.standings()
    assert standings == compute_standings(read.records, read.names, config.competition.rules, rounds=read.rounds)
    assert standings.ranking == "elo" and standings.bots[-1].name == "c" and standings.bots[-1].disqualified
    assert [bot.name for bot in standings.bots if bot.withdrawn_by_organiser] == ["b"]
    # Without a schedule (a tournament.json written by hand without its seed) every readable game is
    # ranked, and under the same rules: the disqualified bot's games still score as losses.
    bare = replace(tournament_meta(config), unsaid=Unsaid(seed=True))
    unscheduled = results_of(tmp_path, bare, games)
    assert unscheduled.competition is None and unscheduled.rules == config.competition.rules
    last = unscheduled.standings().bots[-1]
    played = sum("c" in game.players.values() for game in games)
    assert last.name == "c" and last.disqualified and last.games == played and last.wins == last.draws == 0


@pytest.mark.parametrize("key, value, problem", [
    ("withdraw_after_crashes", 0, "withdraw_after_crashes: Expected `int` >= 1"),
    ("reference", ["nobody"], "reference: names a bot that is not among the bots"),
    ("withdrawn", "b", "withdrawn: Expected `array | null`, got `str`"),
    ("disqualified", [7], "disqualified[0]: Expected `str`, got `int`"),
    ("sprt", {"elo0": 0, "elo1": 5, "model": "x"}, "sprt: unknown model 'x'"),
])
def test_a_forged_rule_in_tournament_json_is_one_line_naming_its_key(key, value, problem):
    data = tournament_meta(config_of(FILES[0])).to_json()
    with pytest.raises(MetaError) as refused:
        TournamentMeta.from_json({**data, key: value})
    assert str(refused.value).startswith(problem) and "\n" not in str(refused.value)


#: A schedule away from its defaults: a gauntlet of two rounds on a drawn suite.
SCHEDULE = "format: gauntlet\nrounds: 2\nseed: 11\nopenings: {plies: 2, count: 3}\n" + BOTS


#: Stages: the settings of a Swiss or staged tournament.
STAGED_FILE = "stages:\n  - {format: swiss, rounds: 2}\n  - {format: knockout, top: 2}\n" + BOTS


@pytest.mark.parametrize("text", (SCHEDULE, STAGED_FILE, *FILES))
def test_the_competition_goes_from_the_file_to_tournament_json_and_back_whole(text):
    config = config_of(text)
    read = TournamentMeta.from_json(json.loads(json.dumps(tournament_meta(config).to_json())))
    assert read.competition == config.competition and read.unsaid == Unsaid()
    assert read.rebuilt() == config.competition


def test_the_files_set_every_field_of_the_competition_so_a_new_one_is_checked_too():
    # A field added to Competition without its key in to_json and from_json fails the test above once a file sets it.
    bare = config_of("seed: 0\n" + BOTS).competition
    changed = {f.name for text in (SCHEDULE, STAGED_FILE, *FILES) for f in fields(Competition)
               if getattr(config_of(text).competition, f.name) != getattr(bare, f.name)}
    # (game_ids: no file sets it; a directory written before 0.2 reads as positions, checked below.)
    assert changed | {"game", "game_ids"} == {f.name for f in fields(Competition)}


def test_a_tournament_json_written_before_0_2_says_what_it_left_out_and_writes_back_as_it_was():
    data = json.loads((Path(__file__).parent / "data" / "results-0.1" / "out" / "tournament.json").read_text())
    meta = TournamentMeta.from_json(data)
    assert meta.unsaid == Unsaid(game_ids=True, suite=(3, data["openings"]["digest"]))
    written = meta.to_json()
    assert {key: written[key] for key in data} == data and written["game_ids"] is None
    assert TournamentMeta.from_json(written) == meta
    # The scheme and the suite's moves come from the records: by positions once games were played.
    assert meta.rebuilt().game_ids == "names"  # (no game played yet)
    record = result(make_schedule(replace(meta.rebuilt(), openings=None))[0], None)
    rebuilt = meta.rebuilt([record])
    assert rebuilt.game_ids == "positions" and rebuilt.openings[0].start == record.opening


def test_a_config_whose_competition_names_other_bots_than_it_runs_is_refused():
    config = config_of(BOTS)
    with pytest.raises(ValueError, match="names are not the bots'"):
        replace(config, bots=config.bots[:2])
    assert config.with_bots(config.bots[:2]).competition.names == ("a", "b")
    with pytest.raises(ValueError, match="names are not the bots'"):
        replace(tournament_meta(config), bots=tournament_meta(config).bots[:2])
