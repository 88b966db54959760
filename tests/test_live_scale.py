"""The live view of a large results directory: past ``LATEST_GAMES`` games
the server holds the standings ``arena standings`` keeps in the index and
the latest games only, and its page says what the page of every record
says (the standings, the status line, the list's latest games, each team's
summary), with the index, without it, and with a forged one."""

from __future__ import annotations

import gc
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from arena.game.records import GameRecord
from arena.live import state as live_state
from arena.live.state import LiveState
from arena.results.game_index import INDEX_FILE
from arena.results.report import build_report_files
from arena.run.results_dir import read_results
from builders import tournament
from test_game_index import write_games

GAMES, LATEST = 300, 40


@pytest.fixture
def large(tmp_path, monkeypatch) -> Path:
    """A round-robin of 300 games, read as large past its 40 latest."""
    config = tournament(tmp_path, ("ann", "bob", "cy", "dee"), "rounds: 30\n", name="large", seed=3, output="out")
    write_games(config, GAMES)
    monkeypatch.setattr(live_state, "LATEST_GAMES", LATEST)
    return config.output


def whole_state(directory: Path, monkeypatch, **options: Any) -> LiveState:
    """The live view as it reads every record (the directory not large)."""
    monkeypatch.setattr(live_state, "LATEST_GAMES", 10 ** 9)
    state = LiveState(directory, inline_games=0, **options)
    state.page()
    monkeypatch.setattr(live_state, "LATEST_GAMES", LATEST)
    return state


def data_of(page: bytes) -> dict[str, Any]:
    return json.loads(page.decode().split('id="report-data">')[1].split("</script>")[0])


def standings_of(page: bytes) -> str:
    return re.search(r'<section id="standings".*?</section>', page.decode(), re.S).group(0)


def listed(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The page's list of games, each row as the page's script reads it
    (ids and numbers as they are, not as the columns write them)."""
    columns, rows = data["list"], []
    game_id, index, round_ = "", 0, 0
    for row, written in enumerate(columns["id"]):
        shared, rest = written.split(":", 1)
        game_id = game_id[:int(shared)] + rest
        index, round_ = index + columns["i"][row], round_ + columns["rd"][row]
        rows.append((game_id, index, round_, data["openings"][columns["o"][row]], data["starts"][columns["s"][row]],
                     data["controls"][columns["tc"][row]], data["bots"][columns["p0"][row]],
                     data["bots"][columns["p1"][row]], columns["w"][row], columns["reasons"] and
                     data["list"]["reasons"][columns["r"][row]], columns["l"][row], columns["bt"][row],
                     columns["extra"].get(str(row))))
    return rows


def test_a_directory_too_small_to_be_large_is_read_whole_without_asking_the_kept_standings(large, monkeypatch):
    """A log shorter than the latest games' least size holds no more games than
    the page lists: its page is every record's, without the kept standings'
    work (carried on, then kept back in the index) done for nothing first."""
    asked: list[Path] = []
    monkeypatch.setattr(live_state, "carried_standings", lambda found: asked.append(found.directory))
    size = (large / "games.jsonl").stat().st_size
    monkeypatch.setattr(live_state, "LATEST_GAMES", size // live_state._SMALLEST_RECORD_BYTES + 1)
    whole = LiveState(large, inline_games=0).page()
    assert asked == [] and whole == whole_state(large, monkeypatch).page()
    monkeypatch.setattr(live_state, "LATEST_GAMES", size // live_state._SMALLEST_RECORD_BYTES)
    LiveState(large).page()
    assert asked == [large]  # (a log one record longer: asked; it answered None, so read whole)

def test_a_normal_directorys_page_is_the_page_of_every_record(large, monkeypatch):
    monkeypatch.setattr(live_state, "LATEST_GAMES", 10 ** 9)
    state = LiveState(large)
    status = state.status().line
    page, _ = build_report_files(read_results(large), "games/", results_dir=large, logs_href="logs/",
                                 status=status, linked=live_state.LINKED)
    assert state.page() == page.encode()


def test_a_large_directorys_page_says_what_the_page_of_every_record_says(large, monkeypatch):
    whole = whole_state(large, monkeypatch)
    state = LiveState(large, inline_games=0)
    page, before = state.page(), whole.page()
    assert standings_of(page) == standings_of(before)
    assert state.status() == whole.status() and state.status().line.startswith(f"stopped: {GAMES} of ")
    latest, every = listed(data_of(page)), listed(data_of(before))
    assert len(latest) == LATEST and latest == every[-LATEST:]
    summaries = {name: sheet["summary"] for name, sheet in data_of(page)["sheets"].items()}
    assert summaries == {name: sheet["summary"] for name, sheet in data_of(before)["sheets"].items()}
    history = data_of(page)  # (the rating chart is drawn from the history the fold kept: there, to the rating now)
    assert "Rating against games played" in page.decode() and history


def test_a_team_page_of_a_large_directory_lists_its_latest_games(large, monkeypatch):
    whole = whole_state(large, monkeypatch, bot="ann")
    state = LiveState(large, bot="ann", inline_games=0)
    latest, every = listed(data_of(state.page())), listed(data_of(whole.page()))
    assert latest and latest == every[-len(latest):] and all("ann" in row[6:8] for row in latest)
    assert data_of(state.page())["sheets"]["ann"]["summary"] == data_of(whole.page())["sheets"]["ann"]["summary"]


def test_games_added_to_a_large_directory_are_carried_on_into_its_page(large, monkeypatch, tmp_path):
    state = LiveState(large, inline_games=0)
    state.page()
    config = tournament(tmp_path, ("ann", "bob", "cy", "dee"), "rounds: 30\n", name="large", seed=3, output="out")
    write_games(config, 25, start=GAMES)
    state.refresh()
    whole = whole_state(large, monkeypatch)
    assert standings_of(state.page()) == standings_of(whole.page()) and state.status() == whole.status()
    assert listed(data_of(state.page())) == listed(data_of(whole.page()))[-LATEST:]


def records_held() -> int:
    gc.collect()
    return sum(isinstance(thing, GameRecord) for thing in gc.get_objects())


def test_the_server_of_a_large_directory_holds_its_latest_records_only(large):
    before = records_held()
    state = LiveState(large, inline_games=0)
    state.page()
    state.snapshot()
    assert records_held() - before <= LATEST < GAMES
    assert state.results().played() == GAMES and len(state.results().records) == LATEST


@pytest.mark.parametrize("index", ["forged", "none"])
def test_a_large_directorys_page_is_the_same_with_a_forged_index_or_none(large, monkeypatch, index):
    said = LiveState(large, inline_games=0)
    page = said.page()
    for name in os.listdir(large):
        if name.startswith(INDEX_FILE):
            os.unlink(large / name)
    if index == "forged":
        (large / INDEX_FILE).write_bytes(b"SQLite format 3\0" + os.urandom(4096))
    else:
        os.mkfifo(large / INDEX_FILE)  # no index can be made: the log alone
    again = LiveState(large, inline_games=0)
    assert standings_of(again.page()) == standings_of(page) and again.status() == said.status()
    assert listed(data_of(again.page())) == listed(data_of(page))
