"""arena/run/match.py: default bot names, the match tally, a short real match, an SPRT match."""

from __future__ import annotations

import math
import statistics
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.game.clock import TimeControl
from arena.run.match import MatchResult, match_config, play_match
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
    assert (config.game, config.rounds, config.seed, config.concurrency, config.format) == ("yoxii", 1, 9, 2, "round-robin")
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
