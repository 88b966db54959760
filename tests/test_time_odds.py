"""Time odds: a bot with a clock of its own (a bot's ``time_control``, ``arena
match --bot ...,tc=``).  Each seat's clock is charged by its own control,
each bot is told its own, the record keeps both and an old record without
them still reads; the ranking shows each bot's clock; a rerun with another
clock for a bot is refused naming both."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from arena.bot.player import BotPlayer
from arena.bot.spec import BotConfig
from arena.game.clock import Clock, TimeControl
from arena.game.records import GameRecord, GameSpec
from arena.game.referee import play_game
from arena.results.meta import TournamentMeta
from arena.results.standings import compute_standings
from arena.results.tables import render_standings
from arena.run.config import ConfigError, parse_config
from arena.run.results_dir import settings_conflict, tournament_meta

BOTS = Path(__file__).parent / "bots"
ROOT = Path(__file__).parent.parent
BASE = TimeControl(initial_ms=1000, increment_ms=100)
ODDS = TimeControl(initial_ms=4000, increment_ms=0)


def test_each_seat_is_charged_on_its_own_clock():
    clock = Clock((BASE, ODDS), margin_ms=50)
    assert (clock.budget_ms(0), clock.budget_ms(1)) == (1050, 4050)
    assert clock.charge(0, 400) and clock.charge(1, 400)
    assert clock.remaining_ms == [700, 3600]  # the increment is the first seat's alone
    assert clock.to_json(0) == {"remaining_ms": 700, "opponent_ms": 3600, "increment_ms": 100}
    assert clock.to_json(1) == {"remaining_ms": 3600, "opponent_ms": 700, "increment_ms": 0}
    assert json.loads(clock.to_json_text(1)) == clock.to_json(1)
    mixed = Clock((TimeControl(per_move_ms=200), BASE))
    assert mixed.to_json(0) == {"remaining_ms": 200} and mixed.charge(0, 150) and mixed.remaining_ms[0] == 200
    assert not mixed.charge(0, 251)


def player(tmp_path, script, *args, name):
    return BotPlayer(BotConfig(name=name, cmd=(sys.executable, str(BOTS / script), *map(str, args)), options={},
                               cwd=ROOT, env={}), "oxono", log_path=tmp_path / f"{name}.log", quit_grace_s=1.0)


@pytest.mark.usefixtures("no_leaked_processes")
def test_a_slow_bot_given_odds_keeps_its_time_and_each_bot_hears_its_own_clock(tmp_path):
    slow, echo = player(tmp_path, "slow.py", 0.15, name="slow"), player(tmp_path, "echo_bot.py", name="echo")
    fast = TimeControl(per_move_ms=100)
    spec = GameSpec(index=0, game_id="t1", game="oxono", round=1, players=("slow", "echo"), opening=0, seed=1)
    try:
        lost = play_game(spec, [slow, echo], fast, margin_ms=20)
        assert (lost.reason, lost.forfeit_by, lost.time_controls) == ("timeout", "pink", None)
        odds = (TimeControl(per_move_ms=1000), fast)
        kept = play_game(replace(spec, game_id="t2"), [slow, echo], fast, margin_ms=20, seat_controls=odds)
    finally:
        slow.close()
        echo.close()
    assert kept.forfeit_by is None, kept.detail
    assert kept.time_control == fast.to_json()
    assert kept.time_controls == {"pink": {"per_move_ms": 1000}, "black": {"per_move_ms": 100}}
    assert kept.clock_of("pink") == {"per_move_ms": 1000} and lost.clock_of("pink") == {"per_move_ms": 100}
    told = [json.loads(line.removeprefix("got: ")) for line in (tmp_path / "echo.log").read_text().splitlines()
            if line.startswith("got: ") and '"new_game"' in line]
    assert [m["time_control"] for m in told] == [{"per_move_ms": 100}, {"per_move_ms": 100}]  # echo's own, both times


def record(**changes) -> dict:
    data = {"game_id": "r1-a~b-g1", "game": "oxono", "players": {"pink": "a", "black": "b"}, "seed": 1, "opening": 0,
            "time_control": BASE.to_json(), "moves": [], "winner": "pink", "reason": "alignment", "index": 0, "pair": 0}
    return {**data, **changes}


def test_records_keep_both_clocks_and_old_records_still_read():
    old = GameRecord.from_json(record())
    assert old.time_controls is None and old.clock_of("black") == BASE.to_json()
    assert "time_controls" not in json.loads(old.to_line())  # the line written before time odds existed
    both = {"pink": ODDS.to_json(), "black": BASE.to_json()}
    new = GameRecord.from_json(record(time_controls=both))
    assert new.clock_of("pink") == ODDS.to_json() and GameRecord.from_line(new.to_line()) == new
    for forged in ({"pink": ODDS.to_json()}, {"pink": {"seconds": 5}, "black": BASE.to_json()}, [1, 2], "fast"):
        with pytest.raises(ValueError, match="^bad time_controls"):
            GameRecord.from_json(record(time_controls=forged))


def test_the_ranking_shows_each_sides_clock_only_under_odds():
    a_pink = record()
    odds = record(game_id="r1-a~b-g2", index=1, players={"pink": "b", "black": "a"},
                  time_controls={"pink": BASE.to_json(), "black": ODDS.to_json()})
    plain = compute_standings([GameRecord.from_json(a_pink)], ["a", "b"])
    assert not plain.time_odds and " clock " not in render_standings(plain)
    standings = compute_standings([GameRecord.from_json(a_pink), GameRecord.from_json(odds)], ["a", "b"])
    assert standings.time_odds
    rows = {bot.name: bot.clocks for bot in standings.bots}
    assert rows == {"a": {"1+0.1": 1, "4+0": 1}, "b": {"1+0.1": 2}}
    lines = render_standings(standings).splitlines()
    header = next(line.split() for line in lines if line.lstrip().startswith("#"))
    assert header[:3] == ["#", "bot", "clock"]
    cells = {line.split()[1]: line for line in lines if line.split()[:1] in (["1"], ["2"])}
    assert cells["b"].split()[2] == "1+0.1" and "1+0.1 (1), 4+0 (1)" in cells["a"]
    assert json.loads(render_standings(standings, "json"))["bots"][0]["clocks"]


YAML = """name: odds
game: oxono
time_control: 1+0.1
bots:
  - {name: dev, cmd: a, time_control: 4+0}
  - {name: base, cmd: b}
"""


def test_a_bots_time_control_in_the_file():
    config = parse_config(YAML, base_dir=Path("/tmp"))
    assert config.time_odds == {"dev": ODDS}
    assert config.clock_of("base") == BASE and config.seat_controls(("base", "dev")) == (BASE, ODDS)
    assert replace(config, time_odds={}).seat_controls(("base", "dev")) is None
    with pytest.raises(ConfigError, match=r"bots\[0\]\.time_control: bad time control 'fast'"):
        parse_config(YAML.replace("4+0", "fast"), base_dir=Path("/tmp"))


def test_a_rerun_with_another_clock_for_a_bot_is_refused_naming_both():
    config = parse_config(YAML, base_dir=Path("/tmp"))
    meta = TournamentMeta.from_json(tournament_meta(config).to_json())
    assert meta.entry("dev").time_control == ODDS and meta.entry("base").time_control is None
    assert settings_conflict(meta, tournament_meta(config), played=True, asker="the tournament file") is None
    slower = replace(config, time_odds={"dev": TimeControl(initial_ms=8000)})
    assert settings_conflict(meta, tournament_meta(slower), played=True, asker="the tournament file") == (
        "were played with bot 'dev' on the clock 4+0, the tournament file now says 8+0")
    evened = replace(config, time_odds={})
    assert settings_conflict(meta, tournament_meta(evened), played=True, asker="this command") == (
        "were played with bot 'dev' on the clock 4+0, this command now says 1+0.1")
