"""Opening suites: drawn from the seed or read from a file, checked against
the engine, and played by every pair with both colours, back to back."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import engine
from arena.game.openings import Opening, OpeningError, parse_suite, play_opening, random_suite
from arena.run.config import ConfigError, openings_from_option
from arena.formats.schedule import make_schedule
from builders import ROOT, tournament


def wins_at_once(game, state) -> bool:
    me = game.to_move(state)
    return any(
        (outcome := game.outcome(game.apply(state, move))) is not None and outcome.winner == me
        for move in game.legal_moves(state)
    )


@pytest.mark.parametrize("game_name", ["oxono", "yoxii"])
def test_a_random_suite_is_playable_distinct_and_never_over_or_won_at_once(game_name):
    game = engine.get_game(game_name)
    suite = random_suite(game_name, 6, 30, seed=3)
    assert len(suite) == len(set(suite)) == 30
    for opening in suite:
        assert len(opening.moves) == 6
        state = play_opening(game, opening.start, opening.moves)  # raises on an illegal move
        assert not game.is_over(state)
        assert not wins_at_once(game, state)
    # OXONO's two start positions both appear, in turn.
    assert [o.start for o in suite] == [i % game.openings for i in range(30)]


def test_a_suite_replays_identically_from_the_same_seed():
    assert random_suite("oxono", 4, 20, seed=7) == random_suite("oxono", 4, 20, seed=7)
    assert random_suite("oxono", 4, 20, seed=7) != random_suite("oxono", 4, 20, seed=8)


def test_long_openings_still_avoid_finished_games_and_wins_in_one():
    # 24 plies in OXONO: most random lines leave a win in one; the suite skips them.
    game = engine.get_game("oxono")
    for opening in random_suite("oxono", 24, 10, seed=1):
        state = play_opening(game, opening.start, opening.moves)
        assert not game.is_over(state) and not wins_at_once(game, state)


def test_too_many_openings_of_no_plies_is_refused():
    assert random_suite("oxono", 0, 2, seed=0) == (Opening(0, ()), Opening(1, ()))
    with pytest.raises(OpeningError, match="found only 2 distinct .* or longer ones"):
        random_suite("oxono", 0, 3, seed=0)


def test_openings_too_long_to_stay_playable_ask_for_shorter_ones():
    # 30 random plies of OXONO almost never leave a game without a win in one.
    with pytest.raises(OpeningError, match="or shorter ones"):
        random_suite("oxono", 30, 5, seed=1)


def test_a_file_suite_with_start_positions_and_comments():
    lines = ["# my suite", "", "Xc4 c3, Od5 d6", "1:  Oc4 b4 ,Xd5 d6", "0:"]
    suite = parse_suite(lines, "oxono")
    assert suite == (Opening(0, ("Xc4 c3", "Od5 d6")), Opening(1, ("Oc4 b4", "Xd5 d6")), Opening(0, ()))


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        (["Xc4 c3", "Xc4 c3, Xz9 a1"], 2, "move 2 'Xz9 a1' is not legal"),
        (["Xc4 c3, Xc4 c5"], 1, "move 2 'Xc4 c5' is not legal"),
        (["2: Xc4 c3"], 1, "start position 2"),
        (["", "# nothing"], None, "holds no opening"),
    ],
)
def test_a_bad_file_suite_names_its_line(lines, line, words):
    with pytest.raises(OpeningError, match=words) as info:
        parse_suite(lines, "oxono")
    assert info.value.line == line


def test_a_file_opening_that_ends_the_game_is_refused():
    # Pink fills a1..d1 with X while black plays on rank 6: the fourth X wins.
    game = engine.get_game("oxono")
    line = ["Xc1 b1", "Od6 e6", "Xc2 c1", "Od5 c5", "Xd2 d1", "Od6 c6", "Xa2 a1"]
    state = game.new_state(opening=0)
    for move in line:
        state = game.apply(state, move)
    assert game.is_over(state)
    with pytest.raises(OpeningError, match="ends the game") as info:
        parse_suite(["", ", ".join(line)], "oxono")
    assert info.value.line == 2


def with_openings(tmp_path: Path, openings: str, game: str = "oxono", bots: int = 3):
    """``bots`` bots playing ``game`` with the opening suite ``openings`` (a YAML value), seed 4."""
    return tournament(tmp_path, [f"bot{i}" for i in range(bots)], game=game, seed=4, openings=openings)


def test_config_draws_the_suite_from_the_tournament_seed(tmp_path):
    config = with_openings(tmp_path, "{plies: 4, count: 5}")
    assert config.competition.openings == random_suite("oxono", 4, 5, seed=4)
    assert with_openings(tmp_path, "{}").competition.openings == random_suite("oxono", 4, 50, seed=4)


def test_config_reads_a_suite_file_relative_to_the_tournament(tmp_path):
    (tmp_path / "suite.txt").write_text("Xc4 c3\n1: Oc4 b4\n")
    assert with_openings(tmp_path, "{file: suite.txt}").competition.openings == (Opening(0, ("Xc4 c3",)), Opening(1, ("Oc4 b4",)))


@pytest.mark.parametrize(
    ("openings", "words"),
    [
        ("{file: suite.txt}", "suite.txt:3: move 1 'Xz9 a1' is not legal"),
        ("{file: missing.txt}", "missing.txt: cannot read the file"),
        ("{file: suite.txt, plies: 2}", "openings: give either file or plies/count"),
        ("{plies: 4, count: 0}", "openings.count: must be a positive integer"),
        ("{plies: -1}", "openings.plies: must not be negative"),
        ("{depth: 4}", "openings.depth: unknown key 'depth'"),
        ("{plies: 0, count: 9}", "found only 2 distinct"),
        ("four", "openings: must be a mapping"),
    ],
)
def test_config_refuses_bad_openings_in_one_line(tmp_path, openings, words):
    (tmp_path / "suite.txt").write_text("Xc4 c3\n\nXz9 a1\n")
    with pytest.raises(ConfigError) as info:
        with_openings(tmp_path, openings)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_every_pair_plays_every_opening_with_both_colours_back_to_back(tmp_path):
    config = with_openings(tmp_path, "{plies: 3, count: 4}", bots=3)
    schedule = make_schedule(config.competition)
    assert len(schedule) == 3 * 4 * 2
    for first, second in zip(schedule[::2], schedule[1::2]):
        assert first.pair == second.pair == first.index // 2
        assert (first.opening, first.opening_moves) == (second.opening, second.opening_moves)
        assert first.players == second.players[::-1]
    seen = Counter((s.players, s.opening, s.opening_moves) for s in schedule)
    suite = [(o.start, o.moves) for o in config.competition.openings]
    for i, j in ((0, 1), (0, 2), (1, 2)):
        for a, b in ((i, j), (j, i)):
            for start, moves in suite:
                assert seen[(f"bot{a}", f"bot{b}"), start, moves] == 1


def test_without_a_suite_the_start_positions_are_still_played_in_pairs(tmp_path):
    config = tournament(tmp_path, ["bot0", "bot1"])
    schedule = make_schedule(config.competition)
    assert [(s.pair, s.opening, s.opening_moves) for s in schedule] == [(0, 0, ()), (0, 0, ()), (1, 1, ()), (1, 1, ())]


def test_suite_from_a_command_line_option(tmp_path):
    assert openings_from_option("plies=2,count=3", "yoxii", 9) == random_suite("yoxii", 2, 3, 9)
    (tmp_path / "s.txt").write_text("d3 1d2\n")
    assert openings_from_option(str(tmp_path / "s.txt"), "yoxii", 0) == (Opening(0, ("d3 1d2",)),)
    with pytest.raises(ConfigError, match="bad setting"):
        openings_from_option("plies=2,size=3", "yoxii", 0)


def test_the_documented_suite_file_and_error_are_real(tmp_path):
    doc = (ROOT / "docs" / "tournaments.md").read_text(encoding="utf-8")
    section = doc.split("### Opening suites", 1)[1].split("### SPRT", 1)[0]
    blocks = section.split("```")[1::2]
    suite_text = next(b for b in blocks if b.startswith("\n# four OXONO openings"))
    suite = parse_suite(suite_text.splitlines(), "oxono")
    assert len(suite) == 4 and suite[2].start == 1 and suite[3] == Opening(0, ())
    error_line = next(b for b in blocks if "is not legal" in b).strip()
    (tmp_path / "openings.txt").write_text("Xd3 d2\nXc4 b4\nXd3 d2, Xc4 c3\n")
    with pytest.raises(ConfigError) as info:
        with_openings(tmp_path, "{file: openings.txt}")
    assert str(info.value) == f"{tmp_path / 'openings.txt'}:{error_line.split(':', 1)[1]}"
