"""The reference search bots (bots.mcts, bots.alphabeta): their tactics
checked against brute force over the engine, the solver and the search in
hand-picked positions, the time manager, options and info, and legal play
in both games with both colours through the real arena."""

from __future__ import annotations

import io
import json
import random
import time
from dataclasses import replace

import pytest

import engine
from arena.game.clock import parse_time_control
from arena.run.match import match_config, play_match
from bots import oxono_eval, yoxii_eval
from bots.alphabeta import MATE_BOUND, AlphaBeta
from bots.harness import Deadline, TimeManager, run_bot
from bots.knowledge import Knowledge, for_game
from bots.mcts import MCTS
from builders import ROOT

OXONO = engine.get_game("oxono")
YOXII = engine.get_game("yoxii")

# Positions reached from OXONO's opening 0 (totem X on c3, O on d4).
# Pink to move wins in two: Xc5 c4 or Oc5 c4 makes two threats no reply stops.
WIN_IN_TWO = ["Oc4 d4", "Xc1 c2", "Xa1 b1", "Xa5 a4", "Xe5 e4", "Oc3 d3"]
# Black to move, with only Xa3 c4 winning in two among 21 moves.
WIN_IN_TWO_LATE = WIN_IN_TWO + ["Xe6 d6", "Ob3 b2", "Xe5 f5", "Xa5 a6", "Oc3 b3", "Oc6 c5", "Ob6 b5", "Xa3 a2", "Xa5 d2"]
# Black to move: 17 of its 22 moves let pink force a win within two moves.
LOSS_IN_TWO = [
    "Of4 f5", "Oa4 a5", "Xc6 d6", "Od4 d5", "Xb6 b5", "Oa4 a3", "Od4 c4",
    "Oe4 e3", "Oe6 e5", "Xc6 c5", "Xb6 c6", "Xa6 b6", "Xf6 a1", "Oa6 f1",
]


def position(moves: list[str], game: engine.Game = OXONO):
    state = game.new_state(opening=0)
    for move in moves:
        state = game.apply(state, move)
    return state


# -- brute force over the public engine API: the tests' own reference --------


def wins_at_once(game, state) -> list[str]:
    me = game.to_move(state)
    return [m for m in game.legal_moves(state) if (o := game.outcome(game.apply(state, m))) is not None and o.winner == me]


def forces_win_in_two(game, state, move) -> bool:
    """After ``move``, the opponent cannot win at once and every reply leaves the mover a win at once."""
    after = game.apply(state, move)
    if game.is_over(after) or wins_at_once(game, after):
        return False
    return all(not game.is_over(b) and wins_at_once(game, b) for b in (game.apply(after, r) for r in game.legal_moves(after)))


def loses_in_two(game, state, move) -> bool:
    """After ``move``, the opponent wins at once or has a move that wins in two."""
    after = game.apply(state, move)
    if game.is_over(after):
        return False
    if wins_at_once(game, after):
        return True
    return any(forces_win_in_two(game, after, reply) for reply in game.legal_moves(after))


# -- knowledge -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["oxono", "yoxii"])
def test_winning_moves_agree_with_brute_force(name):
    game = engine.get_game(name)
    knowledge = for_game(game)
    rng = random.Random(5)
    seen_wins = 0
    for seed in range(25):
        state = game.new_state(seed=seed)
        while not game.is_over(state):
            brute = wins_at_once(game, state)
            fast = knowledge.winning_moves(state)
            if name == "oxono":
                assert sorted(fast) == sorted(brute), game.render(state)
            else:
                # YOXII lists one value for a placement whose value cannot count.
                assert set(fast) <= set(brute) and bool(fast) == bool(brute), game.render(state)
            assert knowledge.has_winning_move(state) == bool(brute)
            seen_wins += bool(brute)
            state = game.apply(state, rng.choice(game.legal_moves(state)))
    assert seen_wins > 10


def test_evaluations_are_bounded_and_side_relative():
    rng = random.Random(2)
    for game, evaluate in ((OXONO, oxono_eval.evaluate), (YOXII, yoxii_eval.evaluate)):
        state = game.new_state(seed=3)
        while not game.is_over(state):
            assert abs(evaluate(state)) < MATE_BOUND
            state = game.apply(state, rng.choice(game.legal_moves(state)))
    # Three pieces of one colour in a row, open at its end: good for that colour's owner.
    assert oxono_eval.evaluate(_row_of_three("P", "B")) > 0 > oxono_eval.evaluate(_row_of_three("B", "P"))


def test_yoxii_playout_plays_legal_games_to_their_result():
    rng = random.Random(4)
    for seed in range(40):
        state = YOXII.new_state()
        for _ in range(rng.randrange(0, 30)):
            if YOXII.is_over(state):
                break
            state = YOXII.apply(state, rng.choice(YOXII.legal_moves(state)))
        trace: list[str] = []
        winner = yoxii_eval.playout(state, random.Random(seed), trace)
        for move in trace:
            state = YOXII.apply(state, move)  # raises on an illegal move
        if YOXII.is_over(state):
            assert YOXII.outcome(state).winner == winner
        else:  # the last move was a win on the move, left out of the trace
            assert winner == YOXII.to_move(state) and wins_at_once(YOXII, state)


def _row_of_three(row: str, scattered: str):
    """Pink to move; ``row`` (P or B) has X, O, X on a1-c1, the other colour the same pieces far apart."""
    board = [[""] * 6 for _ in range(6)]
    board[0][:3] = [row + "X", row + "O", row + "X"]
    board[5][0], board[5][5], board[3][5] = scattered + "X", scattered + "O", scattered + "X"
    board[2][2], board[3][3] = "TX", "TO"
    reserve = {"X": 6, "O": 7}
    return OXONO.from_json({"board": board, "to_move": "pink", "ply": 6, "totems": {"X": "c3", "O": "d4"},
                            "reserve": {"pink": reserve, "black": reserve}})


# -- alpha-beta -------------------------------------------------------------------


@pytest.mark.parametrize("moves", [WIN_IN_TWO, WIN_IN_TWO_LATE], ids=["ply6", "ply15"])
def test_alphabeta_finds_a_win_in_two(moves):
    state = position(moves)
    assert not wins_at_once(OXONO, state)
    bot = AlphaBeta(OXONO, {"depth": 3})
    bot.new_game(0)
    move, info = bot.choose(state, OXONO.legal_moves(state), None, Deadline.unlimited())
    assert forces_win_in_two(OXONO, state, move), move
    assert info["score"] >= MATE_BOUND and info["pv"][0] == move


def test_alphabeta_avoids_a_loss_in_two():
    state = position(LOSS_IN_TWO)
    legal = OXONO.legal_moves(state)
    losing = [m for m in legal if loses_in_two(OXONO, state, m)]
    assert len(losing) >= len(legal) // 2 and len(losing) < len(legal)
    for seed in range(3):  # root moves are shuffled by the seed
        bot = AlphaBeta(OXONO, {"depth": 3})
        bot.new_game(seed)
        move, info = bot.choose(state, legal, None, Deadline.unlimited())
        assert move not in losing, (move, info)
        assert info["depth"] == 3 and info["score"] > -MATE_BOUND


# -- MCTS ---------------------------------------------------------------------------


@pytest.mark.parametrize("moves", [WIN_IN_TWO, WIN_IN_TWO_LATE], ids=["ply6", "ply15"])
def test_mcts_solver_proves_a_forced_win(moves):
    state = position(moves)
    bot = MCTS(OXONO, {"iterations": 60_000, "seed": 1})
    bot.new_game(None)
    move, info = bot.choose(state, OXONO.legal_moves(state), None, Deadline.unlimited())
    assert forces_win_in_two(OXONO, state, move), move
    # Proven, so the search stopped long before its cap.
    assert info["score"] == 1.0 and info["iterations"] < 60_000
    assert info["pv"][0] == move


def test_mcts_takes_a_win_at_once_and_reuses_its_tree():
    state = position(WIN_IN_TWO)
    bot = MCTS(OXONO, {"iterations": 400, "seed": 3})
    bot.new_game(None)
    move, _ = bot.choose(state, OXONO.legal_moves(state), None, Deadline.unlimited())
    after = OXONO.apply(state, move)
    reply = OXONO.legal_moves(after)[0]
    state = OXONO.apply(after, reply)
    final, info = bot.choose(state, OXONO.legal_moves(state), reply, Deadline.unlimited())
    assert final in wins_at_once(OXONO, state)
    assert info["reused"] > 0  # the reply's node was already in the tree


# -- time manager -------------------------------------------------------------------


def test_time_manager_budgets():
    manager = TimeManager("oxono")
    soft, hard = manager.budget_s({"remaining_ms": 100}, {"per_move_ms": 100}, 0)
    assert 0 < soft < hard <= 0.1 * 0.7
    for remaining in (5, 50, 400, 1000, 60_000):
        for increment in (0, 50, 1000):
            for ply in (0, 10, 31):
                clock = {"remaining_ms": remaining, "opponent_ms": remaining, "increment_ms": increment}
                soft, hard = manager.budget_s(clock, {"initial_ms": 1000, "increment_ms": increment}, ply)
                assert 0 < soft <= hard
                # The increment comes after the move: never bet more than half of what is left.
                assert hard * 1000 <= max(remaining / 2, 2.0)
    # Near its floor (35 % of the initial time) a bot spends about its increment, no more.
    low = manager.budget_s({"remaining_ms": 390, "opponent_ms": 900, "increment_ms": 50}, {"initial_ms": 1000, "increment_ms": 50}, 12)
    assert low[1] * 1000 <= 50
    early = manager.budget_s({"remaining_ms": 60_000, "opponent_ms": 60_000, "increment_ms": 1000}, {}, 0)[0]
    assert 1.0 < early < 10.0
    half = TimeManager("oxono", fraction=0.5).budget_s({"remaining_ms": 100}, {"per_move_ms": 100}, 0)
    assert half[1] == pytest.approx(manager.budget_s({"remaining_ms": 100}, {"per_move_ms": 100}, 0)[1] / 2)


def test_time_manager_learns_the_lag_the_arena_charges():
    manager = TimeManager("yoxii")
    control = {"initial_ms": 1000, "increment_ms": 50}
    clock = {"remaining_ms": 900, "opponent_ms": 900, "increment_ms": 50}
    quiet = manager.budget_s(clock, control, 10)
    manager.moved(clock, 40.0)
    # The arena charged 140 ms for a move the bot timed at 40: 100 ms went to scheduling.
    later = {"remaining_ms": 900 + 50 - 140, "opponent_ms": 900, "increment_ms": 50}
    loaded = manager.budget_s(later, control, 12)
    assert manager.lag_ms == pytest.approx(100)
    fresh = TimeManager("yoxii").budget_s(later, control, 12)
    assert loaded[1] < fresh[1] and loaded[1] < quiet[1]
    # The lag fades when the machine is quiet again.
    manager.moved(later, 30.0)
    manager.budget_s({"remaining_ms": 810 + 50 - 30, "opponent_ms": 900, "increment_ms": 50}, control, 14)
    assert manager.lag_ms == pytest.approx(70)
    manager.new_game()  # a new game starts from no last move, keeping what it learnt
    manager.budget_s(clock, control, 0)
    assert manager.lag_ms == pytest.approx(70)


def _slowed(knowledge: Knowledge, seconds: float) -> Knowledge:
    def slow_evaluate(state):
        time.sleep(seconds)
        return knowledge.evaluate(state)

    def slow_wins(state):
        time.sleep(seconds)
        return knowledge.has_winning_move(state)

    return Knowledge(knowledge.winning_moves, slow_wins, slow_evaluate)


@pytest.mark.parametrize("bot_class", [AlphaBeta, MCTS])
@pytest.mark.parametrize("game", [OXONO, YOXII], ids=["oxono", "yoxii"])
def test_a_slow_turn_stays_within_the_hard_limit(bot_class, game):
    # Every leaf or playout step takes a millisecond or more, as on a loaded machine.
    bot = bot_class(game, {})
    bot.new_game(0)
    bot.knowledge = _slowed(bot.knowledge, 0.001)
    state = game.new_state(seed=1)
    started = time.monotonic()
    deadline = Deadline(started, 0.15, 0.3)
    move, info = bot.choose(state, game.legal_moves(state), None, deadline)
    elapsed = time.monotonic() - started
    assert move in game.legal_moves(state)
    # Slack for a busy machine; an unchecked search would take seconds here.
    assert elapsed < 0.3 + 0.5, info


# -- protocol, options, info --------------------------------------------------------


def _session(bot_class, game: str, options: dict, clock: dict, time_control: dict) -> list[dict]:
    g = engine.get_game(game)
    state = g.new_state(seed=0)
    lines = [
        {"type": "hello", "protocol": 1, "game": game, "name": "x", "options": options},
        {"type": "new_game", "game_id": "g", "game": game, "you": g.colors[0], "players": {},
         "time_control": time_control, "state": g.to_json(state), "seed": 4},
        {"type": "turn", "game_id": "g", "ply": 0, "state": g.to_json(state), "legal_moves": g.legal_moves(state),
         "last_move": None, "clock": clock},
        {"type": "quit"},
    ]
    out = io.StringIO()
    run_bot(bot_class, io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_options_cap_the_search_and_info_is_sent(game):
    clock = {"remaining_ms": 60_000, "opponent_ms": 60_000, "increment_ms": 0}
    tc = {"initial_ms": 60_000, "increment_ms": 0}
    ready, move = _session(MCTS, game, {"iterations": 30, "seed": 9}, clock, tc)
    assert ready["type"] == "ready" and ready["name"] == "MCTS"
    assert move["info"]["iterations"] == 30 and move["info"]["pv"][0] == move["move"]
    assert {"score", "nodes", "time_ms"} <= set(move["info"])
    # The same seed plays the same move.
    assert _session(MCTS, game, {"iterations": 30, "seed": 9}, clock, tc)[1]["move"] == move["move"]
    ready, move = _session(AlphaBeta, game, {"depth": 1}, clock, tc)
    assert ready["name"] == "AlphaBeta"
    assert move["info"]["depth"] == 1 and move["info"]["nodes"] > 0 and move["info"]["pv"][0] == move["move"]


@pytest.mark.parametrize("bot_class", [AlphaBeta, MCTS])
def test_answers_within_a_short_clock(bot_class):
    # 300 ms left and no increment: the bot must leave most of it on the clock.
    clock = {"remaining_ms": 300, "opponent_ms": 300, "increment_ms": 0}
    _, move = _session(bot_class, "yoxii", {}, clock, {"initial_ms": 1000, "increment_ms": 0})
    assert move["type"] == "move" and move["info"]["time_ms"] <= 150 + 300


def test_a_broken_turn_is_answered_with_an_error():
    out = io.StringIO()
    lines = [
        {"type": "hello", "protocol": 1, "game": "oxono", "name": "x", "options": {}},
        {"type": "turn", "game_id": "g", "ply": 0, "state": {"board": []}, "legal_moves": ["Xc4 c3"], "clock": {}},
    ]
    run_bot(MCTS, io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[1]["type"] == "error" and "MCTS" in answers[1]["message"]


# -- the real thing: both bots, both games, both colours ---------------------------


@pytest.mark.usefixtures("in_repo_root")
@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_both_bots_play_legally_with_both_colours(game, tmp_path):
    config = match_config(
        ["python -m bots.mcts", "python -m bots.alphabeta"], game, parse_time_control("move 0.5"),
        seed=3, output=tmp_path / "out",
    )
    # A generous clock, of which the bots use a tenth: a busy machine cannot flag them.
    bots = tuple(replace(bot, options={"time_fraction": 0.1}) for bot in config.bots)
    result = play_match(replace(config, bots=bots), 2)
    assert result.forfeits == {}
    seats = set()
    for record in result.records:
        assert record.reason in ("alignment", "exhausted", "blocked")
        seats.add(tuple(record.players.values()))
        assert all(m.info and "pv" in m.info and "score" in m.info for m in record.moves)
    assert seats == {("mcts", "alphabeta"), ("alphabeta", "mcts")}


@pytest.mark.parametrize("path", sorted([*(ROOT / "tournaments").glob("ladder-*.yaml"), *(ROOT / "tournaments").glob("tune-*.yaml")]), ids=lambda p: p.name)
def test_ladder_and_tuning_files_load(path):
    from arena.run.config import load_config

    config = load_config(path)
    commands = {" ".join(bot.cmd[1:]) for bot in config.bots}
    assert commands & {"-m bots.mcts", "-m bots.alphabeta"}
    if path.name.startswith("ladder-"):
        assert [bot.name for bot in config.bots] == ["random", "greedy", "mcts", "alphabeta"]
        assert config.competition.game == path.stem.split("-")[1]
