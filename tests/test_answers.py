"""Answers kept in the index: a read asked again of unchanged results is
the answer worked out before, the same one; any change is read again; an
answer no arena of this user sealed is never loaded."""

import os
import pickle
import sqlite3

import pytest

from arena.results import store as store_module
from arena.results.game_index import INDEX_FILE, MAX_ANSWERS, GameIndex
from arena.results.store import ResultsStore
from arena.results.tables import render_standings
from arena.run import answers
from arena.run.standings_read import read_standings
from builders import arena, tournament_text
from test_game_index import write_games
from arena.run.config import load_config


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "league.yaml"
    path.write_text(tournament_text(("ann", "bob", "cy", "dee"), "rounds: 30\n", name="answers", seed=3, output="out"))
    return load_config(path)


def shown(read) -> list[str]:
    return [render_standings(read.standings, form, None) for form in ("plain", "json")] + read.warnings


def no_reading(monkeypatch):
    """From now on the games cannot be read: only a kept answer answers."""
    monkeypatch.setattr(ResultsStore, "load", lambda *_: pytest.fail("the games were read again"))


def test_a_read_asked_again_is_the_answer_kept_and_any_new_game_is_read(config, monkeypatch):
    write_games(config, 30)
    first = read_standings(config.output)
    assert first.standings.total_games == 30 and first.forfeits  # (the games have forfeits)
    with monkeypatch.context() as patched:
        no_reading(patched)
        again = read_standings(config.output)
        assert shown(again) == shown(first)
        assert [r.game_id for r in again.forfeits] == [r.game_id for r in first.forfeits]
        assert [len(r.moves) for r in again.forfeits] == [len(r.moves) for r in first.forfeits]
    write_games(config, 5, start=30)
    grown = read_standings(config.output)
    assert grown.standings.total_games == 35
    (config.output / INDEX_FILE).unlink()  # the log alone says the same
    assert shown(read_standings(config.output)) == shown(grown)


def test_the_tournament_file_asks_its_own_question_and_gets_the_directorys_answer(config, monkeypatch):
    write_games(config, 20)
    from_directory = read_standings(config.output)
    from_file = read_standings(config.path)
    assert shown(from_file) == shown(from_directory)
    config.path.write_text(config.path.read_text().replace("rounds: 30\n", "rounds: 30\nranking: points\n"))
    assert read_standings(config.path).standings.ranking == "points"
    assert read_standings(config.output).standings.ranking == "trueskill"


def test_what_an_answer_depends_on_is_in_its_question(config):
    write_games(config, 10)
    directory = config.output
    asked = ("standings", None)
    question = answers.question_of(directory, asked)
    assert answers.question_of(directory, asked) == question
    assert answers.question_of(directory, ("standings", "another file")) != question
    meta = directory / "tournament.json"
    meta.write_text(meta.read_text().replace('"rounds"', '"rounds" ', 1))  # the same tournament, other bytes
    assert answers.question_of(directory, asked) not in (None, question)
    question = answers.question_of(directory, asked)
    write_games(config, 1, start=10)  # (not the games: the answer says how far into them it read)
    assert answers.question_of(directory, asked) == question
    moved = directory.parent / "moved"
    os.rename(directory, moved)  # (the games' moves are read from where the directory is)
    assert answers.question_of(moved, asked) not in (None, question)
    os.rename(moved, directory)
    os.unlink(directory / "games.jsonl")
    assert answers.question_of(directory, asked) is None


class Planted:
    """A pickle that, when loaded, makes a file: what a forged answer would run."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


@pytest.mark.parametrize("forger", ["no seal", "another user's seal"])
def test_an_answer_this_user_did_not_seal_is_never_loaded(config, tmp_path, monkeypatch, forger):
    write_games(config, 12)
    want = shown(read_standings(config.output))
    question = answers.question_of(config.output, ("standings", None))
    marker = tmp_path / "ran"
    payload = pickle.dumps(Planted(str(marker)))
    if forger == "no seal":
        with sqlite3.connect(config.output / INDEX_FILE) as db:
            db.execute("UPDATE answers SET value = ?, seal = NULL WHERE question = ?", (payload, question))
    else:  # sealed by another user's arena, with its own key
        with monkeypatch.context() as other:
            other.setenv("TOTEM_ARENA_CACHE", str(tmp_path / "another-user"))
            answers.remember(config.output, question, Planted(str(marker)))
    assert shown(read_standings(config.output)) == want
    assert not marker.exists()


def test_a_rebuilt_index_is_said_once_and_answers_go_with_it(config):
    write_games(config, 15)
    read_standings(config.output)
    (config.output / INDEX_FILE).write_bytes(b"not an index at all" * 100)
    first = read_standings(config.output)
    assert [w for w in first.warnings if INDEX_FILE in w] != []
    again = read_standings(config.output)
    assert [w for w in again.warnings if INDEX_FILE in w] == []
    assert shown(again)[:2] == shown(first)[:2]


def test_a_directory_the_reader_cannot_write_is_read_every_time(config, monkeypatch):
    write_games(config, 8)
    monkeypatch.setattr(GameIndex, "open", lambda self, fd, **_: (_ for _ in ()).throw(
        store_module.IndexUnusable("read-only file system")))
    loads = []
    real = ResultsStore.load
    monkeypatch.setattr(ResultsStore, "load", lambda self, *a, **k: loads.append(1) or real(self, *a, **k))
    assert read_standings(config.output).standings.total_games == 8
    assert read_standings(config.output).standings.total_games == 8
    assert len(loads) == 2


def test_the_index_keeps_the_latest_answers_only(config):
    write_games(config, 4)
    ResultsStore(config.output).load()  # (the index made)
    for n in range(MAX_ANSWERS + 5):
        answers.remember(config.output, f"question {n}", n)
    assert answers.recall(config.output, "question 0") is None
    assert answers.recall(config.output, f"question {MAX_ANSWERS + 4}") == MAX_ANSWERS + 4
    with sqlite3.connect(config.output / INDEX_FILE) as db:
        assert db.execute("SELECT count(*) FROM answers").fetchone() == (MAX_ANSWERS,)


def test_the_command_says_the_same_from_the_answer_kept(config):
    write_games(config, 25)
    said = [arena("standings", config.output, "-f", form).out for form in ("plain", "csv")]
    forfeits = arena("standings", config.output, "--forfeits").out
    assert [arena("standings", config.output, "-f", form).out for form in ("plain", "csv")] == said
    assert arena("standings", config.output, "--forfeits").out == forfeits and "forfeit" in forfeits.lower()



def test_a_directory_named_from_elsewhere_is_another_question(config, monkeypatch):
    # What an answer holds names the directory as it was named (its warnings,
    # the paths its records read their moves from): from another folder, or
    # spelled another way, that name means nothing, so it is read again.
    write_games(config, 6)
    with open(config.output / "games.jsonl", "ab") as log:
        log.write(b"not a record\n")
    monkeypatch.chdir(config.output.parent)
    first = read_standings(config.output.relative_to(config.output.parent))
    assert any(w.startswith("out/games.jsonl") or "out/games.jsonl" in w for w in first.warnings)
    monkeypatch.chdir(config.output)
    again = read_standings(config.output.relative_to(config.output))  # "."
    assert not any("out/games.jsonl" in w for w in again.warnings), again.warnings
    assert [list(r.moves) for r in again.forfeits] == [list(r.moves) for r in first.forfeits]
