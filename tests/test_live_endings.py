"""The live view's cards: a game's card stays after its end, with the record's
final position and result, for the hold; clocks count from when their game
moved; a title says what the game is."""

from __future__ import annotations

import json
import os
import time

import engine
from arena.game.clock import Clock, TimeControl
from arena.game.positions import positions
from arena.game.records import GameRecord
from arena.game.referee import Referee
from arena.live.endings import MOST_HELD, Endings
from arena.live.state import LiveState
from arena.live.titles import card_title
from arena.results.live_feed import LIVE_DIR, LiveFeed, LiveGame, board_cells, read_live_games, touched
from arena.results.report.data import INFO_CHARS
from builders import HOSTILE_NAME, KNOCKOUT, played_cup, spec, until


def referee_for(game_id: str) -> Referee:
    game = engine.get_game("oxono")
    record = GameRecord.for_spec(spec(1, ("ann", "bob"), game_id=game_id, game="oxono"), game.colors,
                                 TimeControl(5000, 100).to_json())
    return Referee(game, game.new_state(), record, Clock(TimeControl(5000, 100)), [None, None])


def play(referee: Referee, plies: int | None = None) -> None:
    """First legal moves, ``plies`` of them or to the end (a record of the game, its result stamped)."""
    while not referee.over and (plies is None or len(referee.moves) < plies):
        referee.apply(referee.game.legal_moves(referee.state)[0], 1.0, None)


def seen(referee: Referee, tmp_path) -> LiveGame:
    feed = LiveFeed(tmp_path / LIVE_DIR, referee.record.game_id.replace("~", "-"), interval_s=0.01)
    feed.move(referee)
    game = until(lambda: [g for g in read_live_games(tmp_path) if g.moves == tuple(referee.moves)])[0]
    feed.end()
    return game


def test_a_game_that_ended_is_held_with_the_records_final_position_and_result(tmp_path):
    endings = Endings(hold_s=10)
    referee = referee_for("r1-ann~bob-g1")
    play(referee, 4)
    playing = seen(referee, tmp_path)
    assert [g["id"] for g in endings.games([playing], [], set(), 100.0)] == ["r1-ann~bob-g1"]
    # Gone from the live files, not yet recorded: shown as last seen.
    assert endings.games([], [], set(), 101.0) == [{**playing.to_json(), "ending": True}]
    play(referee)  # the moves the live file never held
    record = referee.finish()
    [card] = endings.games([], [record], {record.game_id}, 102.0)
    final = positions(record)[-1]
    assert card["moves"] == referee.moves and len(card["moves"]) > 4
    assert card["cells"] == list(board_cells(referee.game, final)) and card["ended"] == 102.0
    assert card["result"] == f"{record.winner} ({record.players[record.winner]}) wins by {record.reason}"
    assert card["winner"] == list(record.players).index(record.winner)
    assert card["clock_ms"] == list(playing.clock_ms)  # as last seen: the record keeps no clock
    assert endings.games([], [record], {record.game_id}, 111.9) == [card]
    assert endings.games([], [record], {record.game_id}, 112.1) == []


def test_a_game_cut_off_by_a_stopped_run_and_played_again_from_its_start_says_so(tmp_path):
    endings = Endings(hold_s=10)
    first = referee_for("r1-ann~bob-g1")
    play(first, 6)
    endings.games([seen(first, tmp_path)], [], set(), 100.0)
    # The run killed: its file gone (or left by a run that no longer holds the directory), no record.
    assert [card["ending"] for card in endings.games([], [], set(), 101.0)] == [True]
    assert endings.games([], [], set(), 112.0) == []
    again = seen(referee_for("r1-ann~bob-g1"), tmp_path)
    (card,) = endings.games([again], [], set(), 130.0)
    assert card["again"] is True and card["moves"] == []
    # Back while still shown as ending: one card, the new one.
    endings.games([], [], set(), 131.0)
    assert [(card["moves"], card["again"]) for card in endings.games([again], [], set(), 132.0)] == [([], True)]
    # Recorded, it is a game like any other; one never cut off is not marked.
    play(first)
    endings.games([], [first.finish()], {"r1-ann~bob-g1"}, 140.0)
    other = seen(referee_for("r1-ann~bob-g2"), tmp_path)
    assert [card.get("again") for card in endings.games([other], [], {"r1-ann~bob-g1"}, 141.0)
            if card["id"] == "r1-ann~bob-g2"] == [None]


def test_games_recorded_before_the_first_look_are_not_held_and_those_never_seen_are():
    endings = Endings(hold_s=10)
    old, new = referee_for("r1-ann~bob-g1"), referee_for("r1-ann~bob-g2")
    play(old)
    play(new)
    records = [old.finish()]
    assert endings.games([], records, {"r1-ann~bob-g1"}, 100.0) == []
    records.append(new.finish())
    held = endings.games([], records, {"r1-ann~bob-g1", "r1-ann~bob-g2"}, 101.0)
    assert [card["id"] for card in held] == ["r1-ann~bob-g2"] and held[0]["clock_ms"] is None


def test_at_most_a_page_of_cards_is_held_the_last_ended_first_kept():
    endings = Endings(hold_s=10)
    endings.games([], [], set(), 100.0)
    records = []
    for number in range(MOST_HELD + 3):
        referee = referee_for(f"r1-ann~bob-g{number}")
        play(referee)
        records.append(referee.finish())
        records[-1].ended_at = f"2026-01-01T00:00:{number:02d}"
    held = endings.games([], records, {r.game_id for r in records}, 101.0)
    assert sorted(card["id"] for card in held) == sorted(r.game_id for r in records[-MOST_HELD:])


def test_a_clock_counts_from_when_its_game_moved_not_when_its_file_was_read(tmp_path):
    referee = referee_for("r1-ann~bob-g1")
    play(referee, 1)
    moved = time.time()
    game = seen(referee, tmp_path)
    assert moved - 0.05 <= game.clock_at <= moved + 0.5
    # A file written 5 s after its move (a Ray relay's): its clock ran for those 5 s.
    live = tmp_path / LIVE_DIR
    data = {"id": "g", "game": "oxono", "round": 1, "players": ["a", "b"], "opening": 0, "opening_moves": [],
            "moves": [], "clock_ms": [1, 2], "per_move_ms": [None, None], "thinking_ms": 5000}
    (live / "w9.json").write_text(json.dumps(data))
    written = os.stat(live / "w9.json").st_mtime
    [forged] = read_live_games(tmp_path)
    assert forged.clock_at == written - 5
    (live / "w9.json").write_text(json.dumps({**data, "thinking_ms": -1}))
    assert read_live_games(tmp_path) == []


def test_a_title_says_the_round_the_game_and_the_bots_and_an_unknown_id_is_itself():
    assert card_title("r3-ann~bob-g1", None) == "Round 3, game 1 · ann – bob"
    assert card_title("r12-team-a~b-c-g4", None) == "Round 12, game 4 · team-a – b-c"
    assert card_title("p7-game-1", None) == "p7-game-1"


def test_a_knockout_games_title_says_which_match_its_score_and_its_tie_break_pair(tmp_path):
    """The knockout of five, its second semi-final in its last tie-break pair (bob 3–2 up), the final not begun."""
    records, meta = played_cup(*KNOCKOUT)
    kept = [r for r in records if r.round < 3][:-1]
    (tmp_path / "games.jsonl").write_bytes(b"".join(r.to_line() for r in kept))
    (tmp_path / "tournament.json").write_text(json.dumps(meta))
    rounds = LiveState(tmp_path).results().rounds
    semi = f"r2-{HOSTILE_NAME}~bob-g"
    assert card_title(semi + "2", rounds) == f"Semi-final 2, game 2 · bob 3–2 {HOSTILE_NAME}"
    assert card_title(semi + "6", rounds) == f"Semi-final 2, game 6, tie-break pair 2 · bob 3–2 {HOSTILE_NAME}"
    assert card_title("r2-ann~eve-g1", rounds) == "Semi-final 1, game 1 · ann 2–0 eve"
    # One match: no number; none of its games recorded: no score.
    assert card_title("r3-ann~bob-g1", rounds) == "Final, game 1 · ann – bob"


def test_a_knockout_after_a_swiss_is_named_before_the_results_read_hold_its_first_pairing(tmp_path):
    """The Swiss over, its knockout's first games under way: the server's last reading may not hold the
    knockout's pairing yet, and its games are semi-finals all the same (not "Round 3")."""
    records, meta = played_cup("stages: [{format: swiss, rounds: 2}, {format: knockout, top: 4}]",
                               ["ann", "bob", "cy", "dan", "eve"], {})
    (tmp_path / "games.jsonl").write_bytes(b"".join(r.to_line() for r in records if r.round <= 2))
    (tmp_path / "tournament.json").write_text(json.dumps({**meta, "pairings": [p for p in meta["pairings"]
                                                                                if p["round"] <= 2]}))
    rounds = LiveState(tmp_path).results().rounds
    assert card_title("r3-ann~dan-g1", rounds) == "Semi-final, game 1 · ann – dan"
    assert card_title("r4-ann~bob-g2", rounds) == "Final, game 2 · ann – bob"
    # A Swiss's game by its board in the round's pairing (ann – bob is no pairing of round 2: no board).
    assert card_title("r2-ann~cy-g1", rounds) == "Round 2, board 1, game 1 · ann – cy"
    assert card_title("r2-ann~bob-g2", rounds) == "Round 2, game 2 · ann – bob"


def test_a_card_marks_the_last_moves_squares_and_holds_each_sides_last_info(tmp_path):
    """In progress (from the live file) and held (from the record): the cells the last move changed,
    and each bot's last ``info`` as the viewer shows it; a file whose infos are not that is not shown."""
    referee = referee_for("r1-ann~bob-g1")
    moves = referee.game.legal_moves
    referee.apply(moves(referee.state)[0], 1.0, {"score": 0.25, "depth": 3})
    referee.apply(moves(referee.state)[0], 1.0, {"score": -0.5, "pv": ["</script>"]})
    referee.apply(moves(referee.state)[0], 1.0, None)  # pink's last move sent none: its last info stays
    playing = seen(referee, tmp_path)
    before, after = positions(referee.record)[-2:]
    changed = [i for i, (a, b) in enumerate(zip(board_cells(referee.game, before), board_cells(referee.game, after)))
               if a != b]
    assert list(playing.last) == changed and 2 <= len(changed) <= 3
    assert playing.infos == ('{"score": 0.25, "depth": 3}', '{"score": -0.5, "pv": ["</script>"]}')
    endings = Endings(hold_s=10)
    endings.games([playing], [], set(), 100.0)
    play(referee)
    record = referee.finish()
    [card] = endings.games([], [record], {record.game_id}, 101.0)
    final_before, final = positions(record)[-2:]
    assert card["last"] == list(touched(board_cells(referee.game, final_before), board_cells(referee.game, final)))
    assert len(card["infos"]) == 2
    live = tmp_path / LIVE_DIR
    first = referee.game.legal_moves(referee.game.new_state())[0]
    data = {"id": "g", "game": "oxono", "round": 1, "players": ["a", "b"], "opening": 0, "opening_moves": [],
            "moves": [first], "clock_ms": [1, 2], "per_move_ms": [None, None]}
    (live / "w9.json").write_text(json.dumps({**data, "infos": {"0": "said"}}))
    assert read_live_games(tmp_path)[0].infos == ("said", None)
    for infos in ({"0": "x" * (INFO_CHARS + 1)}, {"1": "a move the file does not hold"}, {"0": 3}, {"-0": "a"},
                  ["said", None], {str(ply): "a" for ply in range(3)}):
        (live / "w9.json").write_text(json.dumps({**data, "infos": infos}))
        assert read_live_games(tmp_path) == [], infos
    (live / "w9.json").write_text(json.dumps(data))  # a file of an older arena: no infos
    [older] = read_live_games(tmp_path)
    assert older.infos == (None, None) and len(older.last) >= 2


def test_a_teams_page_shows_its_own_bots_info_alone(tmp_path):
    from arena.live.state import LiveState

    referee = referee_for("r1-ann~bob-g1")
    referee.apply(referee.game.legal_moves(referee.state)[0], 1.0, {"score": 1})
    referee.apply(referee.game.legal_moves(referee.state)[0], 1.0, {"score": 2})
    state = LiveState(tmp_path, bot="bob")
    assert state._infos_shown({"infos": ['{"score": 1}', '{"score": 2}'], "players": ["ann", "bob"]}) == \
        [None, '{"score": 2}']
    assert LiveState(tmp_path)._infos_shown({"infos": ["a", "b"], "players": ["ann", "bob"]}) == ["a", "b"]


def test_the_big_screen_shows_knockout_games_first_the_later_round_sooner_then_close_ones():
    from arena.live.interest import card_interest
    from builders import KNOCKOUT, played_cup, results

    records, meta = played_cup(*KNOCKOUT)
    rounds = results(records, meta).rounds
    even, lopsided = ['{"score": 0.1}', '{"score": -0.1}'], ['{"score": 9}', '{"score": -9}']
    final, quarter = "r3-ann~bob-g9", "r1-dan~eve-g9"
    assert card_interest(final, rounds, [None, None]) > card_interest(quarter, rounds, even) \
        > card_interest(quarter, rounds, lopsided) > card_interest("friendly-1", rounds, even) \
        > card_interest("friendly-1", rounds, lopsided) > card_interest("friendly-1", rounds, [None, None]) == 0
    # A score cut short (a long info), not a number, or no score at all: no closeness.
    assert card_interest("friendly-1", rounds, ['{"score": 0.1, "pv": ["a…', '{"score": "even"}']) == 0
    assert card_interest("r1-ann~bob-g1", None, even) < 1  # no knockout known: close, nothing more


def test_the_champion_is_the_finals_winner_or_the_first_by_the_ranking_and_an_sprt_has_none():
    from arena.live.champion import Champion, champion_of
    from arena.results.sprt import SprtConfig
    from builders import KNOCKOUT, played_cup, record, results

    records, meta = played_cup(*KNOCKOUT)
    assert champion_of(results(records, meta)) == Champion("bob", "won the final 2–0 against ann")
    games = [record(i, "a", "b", winner="pink" if i % 3 else "black") for i in range(6)]
    round_robin = champion_of(results(games))
    assert round_robin is not None and round_robin.name == "a" and round_robin.rule.startswith("first by ")
    assert champion_of(results(games, sprt=SprtConfig(elo0=0, elo1=20))) is None
    assert champion_of(results([])) is None


def test_a_game_recorded_is_held_with_its_final_position_before_the_results_are_read_again(tmp_path):
    """The server reads the lines added to the log at each look: a card holds the record's final position
    as soon as the record is written, not at the next reading of the results (every 2 s or more)."""
    records, meta = played_cup(*KNOCKOUT)
    (tmp_path / "tournament.json").write_text(json.dumps(meta))
    log = tmp_path / "games.jsonl"
    log.write_bytes(b"".join(r.to_line() for r in records[:3]))
    state = LiveState(tmp_path)
    assert state.live_games() == []  # the records of the first look are old news
    fourth, fifth = records[3].to_line(), records[4].to_line()
    with open(log, "ab") as handle:
        handle.write(fourth + b"not a record\n" + fifth[:40])  # a damaged line, and one being written
    held = state.live_games()
    assert [(card["id"], card["moves"]) for card in held] == [(records[3].game_id, [m.move for m in records[3].moves])]
    assert "wins by" in held[0]["result"] or held[0]["result"].startswith("draw")
    with open(log, "ab") as handle:
        handle.write(fifth[40:])
    assert [card["id"] for card in state.live_games()] == [records[3].game_id, records[4].game_id]
    assert state.generation == 1  # the results were read once, at the first look
