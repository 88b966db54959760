"""Standings kept in the index and carried on over the games added since:
the same answer as a whole read of every game, to the last bit, whatever
was added (games out of order, junk, a second record of a game, games of
another tournament or of bots gone, a torn line), and a whole read again
where carrying on cannot give it."""

import json

import pytest

from arena.results.store import GAMES_FILE, ResultsStore
from arena.results.tables import render_standings
from arena.run import standings_read
from arena.run.standings_read import KeptStandings, read_standings
from builders import tournament
from test_game_index import write_games


@pytest.fixture
def config(tmp_path):
    return tournament(tmp_path, ("ann", "bob", "cy", "dee"), "rounds: 30\n", name="kept", seed=3, output="out")


def shown(read) -> list[str]:
    return ([render_standings(read.standings, form, None) for form in ("plain", "json")] + read.warnings
            + [r.game_id for r in read.forfeits])


def whole(directory, monkeypatch) -> list[str]:
    """What a whole read of every game says (compute_standings over the records, nothing kept)."""
    with monkeypatch.context() as patched:
        patched.setattr(standings_read, "recall", lambda *_: None)
        patched.setattr(KeptStandings, "first", classmethod(lambda *_: None))
        patched.setattr(KeptStandings, "empty", classmethod(lambda *_: None))
        return shown(read_standings(directory))


def carried_on(directory, monkeypatch) -> list[str]:
    """What a read says that must carry on from the standings kept (a whole read fails the test)."""
    with monkeypatch.context() as patched:
        patched.setattr(standings_read, "read_loaded", lambda *_: pytest.fail("every game was read again"))
        return shown(read_standings(directory))


def append(directory, *lines: bytes) -> None:
    with open(directory / GAMES_FILE, "ab") as log:
        log.write(b"".join(lines))


def test_the_first_read_is_a_stream_that_says_what_a_whole_read_says(config, monkeypatch):
    write_games(config, 600)  # (more than twice the unrated tail: rated on the way)
    assert carried_on(config.output, monkeypatch) == whole(config.output, monkeypatch)


def test_a_log_written_far_out_of_order_is_read_whole(config, monkeypatch):
    monkeypatch.setattr(standings_read, "UNRATED_TAIL", 3)
    write_games(config, 20, start=20)
    write_games(config, 20)  # (a resumed run filling the games it had left)
    reads = []
    real = standings_read.read_loaded
    monkeypatch.setattr(standings_read, "read_loaded", lambda found: reads.append(found) or real(found))
    said = shown(read_standings(config.output))
    assert len(reads) == 1 and said == whole(config.output, monkeypatch)
    write_games(config, 5, start=40)  # and the standings of that read are carried on from
    assert carried_on(config.output, monkeypatch) == whole(config.output, monkeypatch)


def test_games_added_are_folded_on_as_a_whole_read_folds_them(config, monkeypatch):
    write_games(config, 40)
    assert shown(read_standings(config.output)) == whole(config.output, monkeypatch)
    write_games(config, 30, start=40)
    assert carried_on(config.output, monkeypatch) == whole(config.output, monkeypatch)
    want = whole(config.output, monkeypatch)
    # Asked again of the same log: the answer as it was, nothing read, nothing kept again.
    monkeypatch.setattr(ResultsStore, "load", lambda *_, **__: pytest.fail("the games were read"))
    monkeypatch.setattr(standings_read, "remember", lambda *_: pytest.fail("kept again"))
    assert carried_on(config.output, monkeypatch) == want


def test_games_that_finish_out_of_order_fold_in_their_place(config, monkeypatch):
    write_games(config, 40)
    read_standings(config.output)
    write_games(config, 10, start=50)  # (a later game finished first)
    assert carried_on(config.output, monkeypatch) == whole(config.output, monkeypatch)
    write_games(config, 10, start=40)
    assert carried_on(config.output, monkeypatch) == whole(config.output, monkeypatch)


def test_a_game_before_those_rated_is_read_whole_and_says_the_same(config, monkeypatch):
    monkeypatch.setattr(standings_read, "UNRATED_TAIL", 3)
    write_games(config, 40)
    read_standings(config.output)
    write_games(config, 10, start=50)
    read_standings(config.output)
    write_games(config, 10, start=40)  # before the games rated: TrueSkill is folded again from the start
    reads = []
    real = standings_read.read_loaded
    monkeypatch.setattr(standings_read, "read_loaded", lambda found: reads.append(found) or real(found))
    said = shown(read_standings(config.output))
    assert len(reads) == 1
    assert said == whole(config.output, monkeypatch)


def test_lines_of_every_kind_added_say_what_a_whole_read_says(config, monkeypatch):
    records = write_games(config, 30)
    read_standings(config.output)
    line = json.loads((config.output / GAMES_FILE).read_bytes().splitlines()[-1])  # (not rated yet)
    foreign = dict(line, game_id="r2-ann~bob-g99")
    gone = dict(line, game_id="r1-ann~old-g1", players={"pink": "ann", "black": "old"})
    append(config.output, b"not a record\n", json.dumps(line).encode() + b"\n", json.dumps(foreign).encode() + b"\n",
           json.dumps(gone).encode() + b"\n", b'{"torn')
    said = carried_on(config.output, monkeypatch)
    assert said == whole(config.output, monkeypatch)
    warnings = "\n".join(said)
    for expected in ("unreadable record", "skipped a second record", "does not schedule it", "no longer in the tournament",
                     "torn last line"):
        assert expected in warnings
    assert carried_on(config.output, monkeypatch) == said  # asked again: the torn line is still there, and said
    append(config.output, b'": 1}\n')  # the torn line completed (and still no record)
    assert carried_on(config.output, monkeypatch) == whole(config.output, monkeypatch)
    assert len(records) == 30


def test_a_log_rewritten_is_read_whole(config, monkeypatch):
    records = write_games(config, 30)
    read_standings(config.output)
    with ResultsStore(config.output) as store:  # what --replay does: the log rewritten without the game
        store.open_for_run("oxono")
        store.start_appending(store.load("oxono"))
        store.replace({records[3].game_id: "--replay ann"})
    said = shown(read_standings(config.output))
    assert said == whole(config.output, monkeypatch)
    assert read_standings(config.output).standings.total_games == 29


def test_a_gauntlet_is_read_whole_every_time(tmp_path, monkeypatch):
    # (its challenger's matches are made of game pairs, from the records)
    config = tournament(tmp_path, ("ann", "bob", "cy", "dee"), "rounds: 3\nformat: gauntlet\n", name="kept", seed=3,
                        output="out")
    write_games(config, 4)
    reads = []
    real = standings_read.read_loaded
    monkeypatch.setattr(standings_read, "read_loaded", lambda found: reads.append(found) or real(found))
    first, again = shown(read_standings(config.output)), shown(read_standings(config.output))
    assert first == again and len(reads) == 2
