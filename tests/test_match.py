"""arena/run/match.py: default bot names, the match tally, a short real match, an SPRT match."""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from arena.game.clock import TimeControl
from arena.results.sprt import SprtConfig
from arena.run.bot_option import MatchBot, bot_from_option
from arena.run.config import ConfigError
from arena.run.match import MatchResult, match_config, match_header, play_match
from builders import record

TC = TimeControl(initial_ms=5000, increment_ms=100)

counts = st.integers(min_value=0, max_value=500)
#: The same examples on every run, nothing written to disk.
DETERMINISTIC = settings(derandomize=True, database=None, max_examples=300)


def logistic_elo(p: float) -> float:
    """The Elo difference d with expected score p = 1 / (1 + 10 ** (-d / 400))."""
    return 400 * math.log10(p / (1 - p))


# -- match_config and default names ---------------------------------------------


def names(*commands: str) -> list[str]:
    return [bot.name for bot in match_config(list(commands), "oxono", TC).bots]


def test_default_names_are_readable_and_distinct():
    assert names("python -m bots.greedy", "python -m bots.random_bot") == ["greedy", "random_bot"]


def test_the_same_command_twice_gets_two_names():
    assert names("python -m bots.greedy", "python -m bots.greedy") == ["greedy-1", "greedy-2"]


@pytest.mark.parametrize(
    ("commands", "expected"),
    [
        (("python tests/bots/slow.py 0.05", "python -m bots.greedy"), ["slow", "greedy"]),
        (("./mybot --depth 3", "node bots/js/random_bot.js"), ["mybot", "random_bot"]),
        (("/tmp/build/random_bot", "python -u bots/greedy.py"), ["random_bot", "greedy"]),
        (("python tests/bots/slow.py 0.05", "python tests/bots/slow.py 0.1"), ["slow-1", "slow-2"]),
        (("'my bot!'", "python3 -m bots.greedy --fast"), ["my_bot_", "greedy"]),
    ],
)
def test_default_names_come_from_the_program_not_its_arguments(commands, expected):
    assert names(*commands) == expected


def test_given_names_and_the_config():
    config = match_config(["python -m bots.greedy", "./x"], "yoxii", TC, names=["g", "x"], seed=9, concurrency=2)
    assert [bot.name for bot in config.bots] == ["g", "x"]
    assert config.bots[0].cmd == (sys.executable, "-m", "bots.greedy")
    assert config.bots[1].cmd == ("./x",)
    assert (config.competition.game, config.competition.rounds, config.competition.seed, config.concurrency, config.competition.format) == ("yoxii", 1, 9, 2, "round-robin")
    assert config.time_control == TC


def test_an_unknown_game_is_a_value_error():
    with pytest.raises(ValueError, match="chess"):
        match_config(["a", "b"], "chess", TC)


def test_an_empty_command_is_a_value_error():
    with pytest.raises(ValueError, match="empty command"):
        match_config(["", "b"], "oxono", TC)


# -- MatchResult ------------------------------------------------------------------


def test_the_tally_is_from_the_first_bots_point_of_view_whatever_its_colour():
    result = MatchResult(names=("a", "b"))
    result.add_record(record(0, "a", "b", "pink"))                                        # a wins as pink
    result.add_record(record(1, "b", "a", "black"))                                       # a wins as black
    result.add_record(record(2, "a", "b", None))                                          # draw
    result.add_record(record(3, "b", "a", "pink", reason="timeout", forfeit_by="black"))  # a loses on time as black
    result.add_record(record(4, "a", "b", "pink", reason="illegal_move", forfeit_by="black"))
    result.add_record(record(5, "b", "a", "black", reason="illegal_move", forfeit_by="pink"))
    assert (result.wins, result.draws, result.losses, result.games) == (4, 1, 1, 6)
    assert result.score == 4.5 and result.score_pct == pytest.approx(100 * 4.5 / 6)
    assert result.forfeits == {"a": Counter(timeout=1), "b": Counter(illegal_move=2)}
    assert [r.game_id for r in result.records] == [f"g{i}" for i in range(6)]


def test_an_empty_match_scores_zero():
    assert MatchResult(names=("a", "b")).score == 0.0


# -- play_match ---------------------------------------------------------------------


@pytest.mark.usefixtures("no_leaked_processes", "in_repo_root")
def test_a_short_match_alternates_colours_and_start_positions(tmp_path):
    config = match_config(["python -m bots.random_bot", "python -m bots.greedy"], "oxono", TC, output=tmp_path)
    seen = []
    result = play_match(config, 6, logs_dir=tmp_path / "logs", on_record=lambda r, res: seen.append(res.games))
    assert seen == [1, 2, 3, 4, 5, 6]
    assert result.games == 6 and not result.forfeits
    assert [r.index for r in result.records] == list(range(6))
    # colours alternate game by game (the first name in name order first); both start
    # positions are played with both colours
    assert [r.players["pink"] for r in result.records] == ["greedy", "random_bot"] * 3
    assert [r.opening for r in result.records] == [0, 0, 1, 1, 0, 0]
    # the pre-flight's log and the worker's, for each bot, and one per bot and game
    assert sorted(str(p.relative_to(tmp_path / "logs")) for p in (tmp_path / "logs").glob("*/*.log")) == [
        "greedy/preflight.log", "greedy/w1.log", "random_bot/preflight.log", "random_bot/w1.log"]
    assert sorted(str(p.relative_to(tmp_path / "logs")) for p in (tmp_path / "logs").glob("*/games/*.log")) == sorted(
        f"{name}/games/{r.game_id}.log" for r in result.records for name in ("greedy", "random_bot"))


# -- --bot, names, clocks and the first line -----------------------------------------


def test_a_bot_option_gives_name_command_directory_clock_and_options(tmp_path):
    bot = bot_from_option(f"name=dev,cmd='python my.py --weights a,b',dir={tmp_path},tc=10+0.1,"
                          "option.depth=3,option.fast=true,option.style=sharp,option.w=0.5")
    assert bot == MatchBot(command="python my.py --weights a,b", name="dev", cwd=tmp_path.resolve(),
                           time_control=TimeControl(initial_ms=10_000, increment_ms=100),
                           options={"depth": 3, "fast": True, "style": "sharp", "w": 0.5})
    # As a shell leaves it when the quotes were around a word without a comma.
    assert bot_from_option("cmd=python -m bots.greedy,tc=move 0.5").command == "python -m bots.greedy"
    assert bot_from_option('cmd="./x",option.name="a b"').options == {"name": "a b"}
    assert bot_from_option("cmd=x,option.v=NaN").options == {"v": "NaN"}  # not strict JSON: the text


@pytest.mark.parametrize(("text", "message"), [
    ("name=dev", "--bot name=dev: needs cmd: write name=dev,cmd='python my.py',option.depth=3,tc=10+0.1"),
    ("cmd=x,nme=3", "--bot cmd=x,nme=3: bad setting 'nme=3': unknown key 'nme' (did you mean 'name'?)"),
    ("cmd=x,depth=3", "--bot cmd=x,depth=3: bad setting 'depth=3': unknown key 'depth'; known keys: cmd, name, dir, tc, debug, "
                      "remote, option.NAME (an option for the bot: option.depth=3)"),
    ("cmd=x,tc=fast", "--bot cmd=x,tc=fast: bad setting 'tc=fast': bad time control 'fast'"),
    ("cmd=x,name=a b", "--bot cmd=x,name=a b: bad setting 'name=a b': use 1 to 64 letters"),
    ("cmd=x,cmd=y", "--bot cmd=x,cmd=y: bad setting 'cmd=y': given twice"),
    ("cmd='x,option.a=1", "--bot cmd='x,option.a=1: a ' is not closed"),
    ("cmd=x,option.=1", "--bot cmd=x,option.=1: bad setting 'option.=1': an option needs a name"),
    ("cmd=x,dir=/no/such/dir", "--bot cmd=x,dir=/no/such/dir: bad setting 'dir=/no/such/dir': no such directory"),
    ("cmd=x,novalue", "--bot cmd=x,novalue: bad setting 'novalue'"),
])
def test_a_bad_bot_option_is_one_line_naming_it(text, message):
    with pytest.raises(ConfigError) as info:
        bot_from_option(text)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_match_bots_make_the_config(tmp_path):
    dev = MatchBot("python -m bots.alphabeta", name="dev", options={"depth": 2}, cwd=tmp_path,
                   time_control=TimeControl(per_move_ms=500))
    config = match_config([dev, "python -m bots.alphabeta"], "oxono", TC)
    assert [(b.name, b.options, b.cwd) for b in config.bots] == [("dev", {"depth": 2}, tmp_path), ("alphabeta", {}, Path.cwd())]
    assert config.time_odds == {"dev": TimeControl(per_move_ms=500)} and config.clock_of("alphabeta") == TC
    assert match_header(config, 10, capped=False) == (
        "dev vs alphabeta: playing 10 games of oxono with dev at move 0.5 and alphabeta at 5+0.1")
    with pytest.raises(ValueError, match="both bots are named 'dev'"):
        match_config([dev, MatchBot("./x", name="dev")], "oxono", TC)
    # A default name never takes the other bot's.
    assert [b.name for b in match_config([MatchBot("./x", name="greedy"), "python -m bots.greedy"], "oxono", TC).bots] == [
        "greedy", "greedy-2"]


def test_the_first_line_states_the_cap_of_a_test_left_to_run_until_decided():
    config = match_config(["a", "b"], "oxono", TC, sprt=SprtConfig(0, 5))
    assert match_header(config, SprtConfig(0, 5).game_cap(), capped=False) == (
        "a vs b: SPRT [0, 5] normalized (alpha 0.05, beta 0.05) on oxono at 5+0.1; "
        "until decided, at most 76774 games (3 × the 12795 pairs expected under H0)")
    assert match_header(config, 400, capped=True).endswith("until decided, at most 400 games (--games)")
