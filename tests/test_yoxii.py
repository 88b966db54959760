"""Tests of the YOXII rules engine on hand-built positions, plus property tests
over random games checked against a naive reference implementation."""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import IllegalMove, InvalidState, Outcome, get_game
from engine.yoxii import Yoxii, YoxiiState

GAME = Yoxii()
FILES = "abcdefg"
HOLES = set("a1 b1 a2 f1 g1 g2 a6 a7 b7 g6 f7 g7".split())
SQUARES = [f"{f}{r}" for r in range(1, 8) for f in FILES if f"{f}{r}" not in HOLES]
FULL = {"1": 5, "2": 5, "3": 5, "4": 3}
COLORS = ("white", "red")
DIRECTIONS = [(dr, df) for dr in (-1, 0, 1) for df in (-1, 0, 1) if (dr, df) != (0, 0)]


# -- helpers -----------------------------------------------------------------------


def state_json(cells: dict[str, str]) -> dict:
    """A state object holding ``cells`` (square -> 'T' or a piece code); reserves,
    ply and the side to move follow from the pieces on the board."""
    board = [["#" if f"{f}{r}" in HOLES else "" for f in FILES] for r in range(1, 8)]
    reserve = {color: dict(FULL) for color in COLORS}
    for square, code in cells.items():
        board[int(square[1]) - 1][FILES.index(square[0])] = code
        if code != "T":
            reserve[COLORS["WR".index(code[0])]][code[1]] -= 1
    ply = sum(FULL.values()) * 2 - sum(sum(r.values()) for r in reserve.values())
    totem = next(square for square, code in cells.items() if code == "T")
    return {"board": board, "to_move": COLORS[ply % 2], "ply": ply, "totem": totem, "reserve": reserve}


def position_json(picture: str) -> dict:
    """A state object from a picture: seven lines, rank 7 first, one token per
    existing square ('.' empty, 'T' totem, 'W1'..'R4' pieces)."""
    rows = [line.split() for line in picture.strip("\n").splitlines() if line.strip()]
    assert len(rows) == 7, "a picture has seven ranks"
    cells = {}
    for tokens, rank in zip(rows, range(7, 0, -1)):
        files = [f for f in FILES if f"{f}{rank}" not in HOLES]
        assert len(tokens) == len(files), f"rank {rank} has {len(files)} squares"
        cells.update({f"{f}{rank}": token for f, token in zip(files, tokens) if token != "."})
    return state_json(cells)


def pieces(spec: str) -> YoxiiState:
    """A state from 'c1:T b2:W4 ...'."""
    return GAME.from_json(state_json(dict(item.split(":") for item in spec.split())))


def position(picture: str) -> YoxiiState:
    return GAME.from_json(position_json(picture))


def destinations(state: YoxiiState) -> set[str]:
    return {m.split()[0] for m in GAME.legal_moves(state)}


def placements(state: YoxiiState, dest: str) -> set[str]:
    return {m.split()[1][1:] for m in GAME.legal_moves(state) if m.split()[0] == dest}


def values_offered(state: YoxiiState) -> set[int]:
    return {int(m.split()[1][0]) for m in GAME.legal_moves(state)}


def cell(js: dict, square: str) -> str:
    return js["board"][int(square[1]) - 1][FILES.index(square[0])]


def step(square: str, dr: int, df: int) -> str | None:
    f, r = FILES.index(square[0]) + df, int(square[1]) + dr
    if not (0 <= f < 7 and 1 <= r <= 7) or f"{FILES[f]}{r}" in HOLES:
        return None
    return f"{FILES[f]}{r}"


def neighbours(square: str) -> list[str]:
    return [n for d in DIRECTIONS if (n := step(square, *d)) is not None]


def reference(js: dict) -> tuple[set[str], Outcome | None]:
    """The legal moves and result straight from the rules' wording, on the state object."""
    mover = "WR"[js["ply"] % 2]
    totem = js["totem"]
    dests = []
    for d in DIRECTIONS:
        sq = step(totem, *d)
        if sq is not None and cell(js, sq) == "":
            dests.append(sq)
            continue
        if sq is None or not cell(js, sq).startswith(mover):
            continue
        while sq is not None and cell(js, sq).startswith(mover):
            sq = step(sq, *d)
        if sq is not None and cell(js, sq) == "":
            dests.append(sq)
    if not dests:
        totals, counts = [0, 0], [0, 0]
        for sq in neighbours(totem):
            seat = "WR".index(cell(js, sq)[0])
            totals[seat] += int(cell(js, sq)[1])
            counts[seat] += 1
        key = [(totals[s], counts[s]) for s in (0, 1)]
        winner = None if key[0] == key[1] else (0 if key[0] > key[1] else 1)
        return set(), Outcome(winner, "blocked", (totals[0], totals[1]))
    values = [v for v, n in js["reserve"][COLORS[js["ply"] % 2]].items() if n > 0]
    moves = set()
    for dest in dests:
        free = [sq for sq in SQUARES if sq != dest and (cell(js, sq) == "" or sq == totem)]
        places = [sq for sq in neighbours(dest) if sq in free] or free
        moves |= {f"{dest} {v}{p}" for p in places for v in values}
    return moves, None


def play_random(seed: int) -> list[YoxiiState]:
    """The states of one random game, start to end."""
    rng = random.Random(seed)
    states = [GAME.new_state(seed)]
    while moves := GAME.legal_moves(states[-1]):
        states.append(GAME.apply(states[-1], rng.choice(moves)))
    return states


def illegal(state: YoxiiState, move: str, pattern: str) -> None:
    with pytest.raises(IllegalMove, match=pattern):
        GAME.apply(state, move)


# -- start position, steps and slides --------------------------------------------------


def test_registered_and_described() -> None:
    game = get_game("YOXII")
    assert isinstance(game, Yoxii)
    assert (game.name, game.colors, game.openings) == ("yoxii", ("white", "red"), 1)


def test_start_has_256_moves_all_distinct() -> None:
    start = GAME.new_state()
    moves = GAME.legal_moves(start)
    assert len(moves) == 256 == len(set(moves))
    assert moves == GAME.legal_moves(start)  # deterministic order
    assert destinations(start) == {"c3", "c4", "c5", "d3", "d5", "e3", "e4", "e5"}
    assert placements(start, "d5") == {"c4", "c5", "c6", "d4", "d6", "e4", "e5", "e6"}
    assert values_offered(start) == {1, 2, 3, 4}
    assert GAME.to_move(start) == 0 and GAME.ply(start) == 0 and GAME.outcome(start) is None


def test_seed_does_not_change_the_start_and_only_opening_0_exists() -> None:
    assert GAME.new_state(seed=12345) == GAME.new_state() == GAME.new_state(opening=0)
    with pytest.raises(ValueError):
        GAME.new_state(opening=1)


def test_steps_from_an_edge_square_stay_on_existing_squares() -> None:
    state = position("""
        . . .
      . . . . .
    . . . . . . .
    T . . . . . .
    . . . . . . .
      . . . . .
        . . .
    """)
    assert destinations(state) == {"a3", "a5", "b3", "b4", "b5"}


def test_steps_beside_cut_corners() -> None:
    # c1's neighbours: b1 is cut, so only b2 c2 d2 d1 remain.
    state = position("""
        . . .
      . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
      . . . . .
        T . .
    """)
    assert destinations(state) == {"b2", "c2", "d2", "d1"}


def test_occupied_neighbours_block_steps() -> None:
    state = position("""
        W1 .  .
      .  .  .  .  .
    .  .  .  .  R1 .  .
    .  .  .  T  .  .  .
    .  .  R1 .  .  .  W1
      .  .  .  .  .
        .  .  .
    """)
    assert destinations(state) == {"c4", "c5", "d3", "d5", "e3", "e4"}


def test_no_slide_over_several_empty_squares() -> None:
    start = GAME.new_state()
    assert not {"d6", "d2", "b4", "f4", "b2", "f6", "b6", "f2"} & destinations(start)
    illegal(start, "d6 1d7", r"d6: the squares between are not all white pieces")
    illegal(start, "b2 1c2", r"cannot jump to b2")


# -- jumps ---------------------------------------------------------------------------

# White to move, nine pieces each.  From d4: north over W d5 d6 to d7; north-west
# over W c5 to b6; west over W c4 meets R b4; east over W e4 f4 g4 runs off the
# board; north-east over W e5 f6 reaches the cut corner g7; c3 and e3 are red.
JUMPS = """
        R1 .  R1
      .  R1 W1 R1 W1
    R1 .  W1 W1 W1 .  R2
    .  R2 W2 T  W2 W2 W2
    .  .  R2 .  R2 .  .
      .  .  .  .  .
        .  .  .
"""


def test_jumps_over_own_lines_in_several_directions() -> None:
    state = position(JUMPS)
    assert GAME.to_move(state) == 0
    # d3 is the only free neighbour; d7 is a jump over two pieces, b6 over one.
    assert destinations(state) == {"d3", "d7", "b6"}


def test_jump_lines_blocked_by_opponent_hole_or_edge_give_no_move() -> None:
    state = position(JUMPS)
    illegal(state, "a4 1a3", r"cannot jump to a4: the squares between are not all white")
    illegal(state, "b2 1b3", r"cannot jump to b2: the squares between are not all white")
    illegal(state, "g7 1e7", r"g7 is a cut corner")
    illegal(state, "h4 1g5", r"h4 is not a square")


def test_diagonal_jump_over_a_line_of_two() -> None:
    state = pieces("c1:T d2:W2 e3:W1 c2:R3 g5:R4")
    # North-east over d2 e3 to f4; the red c2 gives white nothing.
    assert destinations(state) == {"b2", "d1", "f4"}
    assert placements(state, "f4") == {"e4", "e5", "f3", "f5", "g3", "g4"}


def test_jump_lands_on_the_first_square_after_the_line_only() -> None:
    state = pieces("d4:T d5:W1 g3:R1")
    assert "d6" in destinations(state)
    assert "d7" not in destinations(state)
    illegal(state, "d7 1d6", r"cannot jump to d7: the squares between are not all white")


def test_jumps_are_the_movers_own_pieces_only() -> None:
    # Red to move: red jumps over c4 b4 to a4 and over e3 to f2; white's d5 d6
    # line gives red nothing.
    state = pieces("d4:T d5:W1 d6:W1 d1:W1 g5:W1 c4:R1 b4:R1 e3:R1")
    assert GAME.to_move(state) == 1
    assert destinations(state) == {"a4", "f2", "c3", "c5", "d3", "e4", "e5"}
    illegal(state, "d6 1d7", r"cannot move to d6, a piece stands there")
    illegal(state, "d7 1e7", r"cannot jump to d7: the squares between are not all red")


def test_a_jump_is_allowed_while_steps_are_free() -> None:
    state = pieces("d4:T d5:W1 e1:R1")
    assert {"c3", "c4", "c5", "d3", "e3", "e4", "e5", "d6"} == destinations(state)
    # d4, the square left, is no neighbour of d6, so it is not offered.
    assert placements(state, "d6") == {"c5", "e5", "c6", "e6", "c7", "d7", "e7"}
    illegal(state, "d6 1d4", r"the piece must go next to the totem on d6, and d4 is not a neighbour")


# -- placement ---------------------------------------------------------------------------


def test_the_square_the_totem_left_may_take_the_piece() -> None:
    start = GAME.new_state()
    after = GAME.apply(start, "d5 2d4")
    js = GAME.to_json(after)
    assert cell(js, "d4") == "W2" and cell(js, "d5") == "T"


def test_placement_anywhere_when_no_neighbour_is_free() -> None:
    # d6's neighbours other than d5 are all red; white jumps d4 -> d6 over d5.
    spec = "d4:T d5:W1 c5:R1 e5:R1 c6:R1 e6:R1 c7:R2 d7:R2 e7:R2 a3:W1 b2:W2 c1:W2 e1:W2 f2:W2 g3:W3"
    state = pieces(spec)
    assert GAME.to_move(state) == 0
    taken = {item.split(":")[0] for item in spec.split()}
    free_after_jump = (set(SQUARES) - taken - {"d6"}) | {"d4"}
    assert placements(state, "d6") == free_after_jump
    assert len([m for m in GAME.legal_moves(state) if m.startswith("d6 ")]) == 4 * len(free_after_jump)
    after = GAME.apply(state, "d6 3a5")
    assert cell(GAME.to_json(after), "a5") == "W3"
    # A step keeps the neighbour rule: from d3 a piece cannot go to a5.
    illegal(state, "d3 1a5", r"must go next to the totem on d3, and a5 is not a neighbour")


def test_placement_on_an_occupied_square_is_refused() -> None:
    state = pieces("d4:T d5:W1 e1:R1")
    illegal(state, "d6 1d5", r"cannot place on d5, it is not empty")


def test_a_value_with_none_left_is_not_offered() -> None:
    state = pieces("d4:T a3:W4 b2:W4 c1:W4 e1:R1 f2:R1 g3:R1")
    assert values_offered(state) == {1, 2, 3}
    illegal(state, "d5 4d6", r"white has no piece of value 4 left")
    red_turn = GAME.apply(state, "d5 1d6")
    assert values_offered(red_turn) == {1, 2, 3, 4}


def test_placing_takes_the_piece_from_the_reserve() -> None:
    after = GAME.apply(GAME.new_state(), "d5 3e6")
    assert GAME.reserve(after, 0) == {"1": 5, "2": 5, "3": 4, "4": 3}
    assert GAME.reserve(after, 1) == FULL
    # Grid index rank * 7 + file: e6 is 5 * 7 + 4, d5 is 4 * 7 + 3, a1 is a hole.
    assert (GAME.cell(after, 39), GAME.cell(after, 31), GAME.cell(after, 0)) == ("W3", "T", "#")
    assert GAME.to_json(after)["reserve"] == {
        "white": {"1": 5, "2": 5, "3": 4, "4": 3},
        "red": {"1": 5, "2": 5, "3": 5, "4": 3},
    }


# -- end of the game ---------------------------------------------------------------------

# White to move; "c1 1d2" fills c1's last free neighbour (d2, the square left).
# Red's lines from c1 (c2 -> c3, d1 -> e1) end on white pieces: red is stuck.
BEFORE_BLOCK = "d2:T b2:W4 c3:W1 e1:W1 c2:R2 d1:R1 g4:R1"


def test_game_ends_when_the_player_to_move_cannot_move_the_totem() -> None:
    state = pieces(BEFORE_BLOCK)
    assert placements(state, "c1") == {"d2"}
    end = GAME.apply(state, "c1 1d2")
    assert GAME.outcome(end) == Outcome(0, "blocked", (5, 3))
    assert GAME.is_over(end)
    assert GAME.legal_moves(end) == []
    illegal(end, "c2 1c3", r"the game is over")


def test_no_end_while_a_jump_still_frees_the_totem() -> None:
    # As above, but e1 is empty: red can jump over its own d1 to e1.
    state = pieces(BEFORE_BLOCK.replace("e1:W1", "a5:W1"))
    after = GAME.apply(state, "c1 1d2")
    assert GAME.outcome(after) is None
    assert destinations(after) == {"e1"}
    assert placements(after, "e1") == {"e2", "f2"}


# Blocked positions around c1 (neighbours b2 c2 d2 d1), red to move.  White
# pieces on a3 c3 e3 e1 end every line red could jump along; red fillers on the
# top ranks balance the counts.
@pytest.mark.parametrize(
    ("ring", "fillers", "expected"),
    [
        # Higher total wins even with fewer pieces.
        ("b2:W4 c2:R1 d2:R1 d1:R1", "c7:R1", Outcome(0, "blocked", (4, 3))),
        ("b2:W1 c2:R2 d2:R1 d1:R1", "c7:R1", Outcome(1, "blocked", (1, 4))),
        # Equal totals: more pieces on the ring wins.
        ("b2:W4 c2:R2 d2:R1 d1:R1", "c7:R1", Outcome(1, "blocked", (4, 4))),
        ("b2:W1 c2:W1 d2:W2 d1:R4", "c7:R1 d7:R1 e7:R1 b6:R1 c6:R1", Outcome(0, "blocked", (4, 4))),
        # Equal totals and counts: draw.
        ("b2:W3 c2:R2 d2:R2 d1:W1", "c7:R1 d7:R1 e7:R1", Outcome(None, "blocked", (4, 4))),
    ],
)
def test_scores_and_tie_breaks(ring: str, fillers: str, expected: Outcome) -> None:
    state = pieces(f"c1:T a3:W2 c3:W2 e3:W3 e1:W3 {ring} {fillers}")
    assert GAME.to_move(state) == 1
    assert GAME.outcome(state) == expected
    assert GAME.legal_moves(state) == []
    assert reference(GAME.to_json(state)) == (set(), expected)


def test_a_full_board_ends_the_game() -> None:
    # All 36 pieces placed; the totem on g4 is surrounded by f3 g3 f4 f5 g5.
    order = [sq for sq in SQUARES if sq != "g4"]
    bag = {"W": [4, 4, 4] + [3] * 5 + [2] * 5 + [1] * 5, "R": [4, 4, 4] + [3] * 5 + [2] * 5 + [1] * 5}
    cells = {"g4": "T"}
    for i, sq in enumerate(order):
        side = "WR"[i % 2]
        cells[sq] = f"{side}{bag[side].pop()}"
    state = GAME.from_json(state_json(cells))
    assert GAME.ply(state) == 36
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == "blocked"
    assert reference(GAME.to_json(state))[1] == outcome


# -- illegal moves -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("move", "pattern"),
    [
        ("d5 3e6x", r"malformed move"),
        ("d53e6", r"malformed move"),
        ("", r"malformed move"),
        ("D5 3E6", r"malformed move"),
        (" d5 3e6", r"malformed move"),
        ("d5  3e6", r"malformed move"),
        ("d5 e6", r"malformed move"),
        ("a1 1b2", r"a1 is a cut corner"),
        ("d5 1g7", r"g7 is a cut corner"),
        ("h4 1d5", r"h4 is not a square"),
        ("d8 1d5", r"d8 is not a square"),
        ("d5 5e6", r"piece values are 1 to 4, not 5"),
        ("d5 0e6", r"piece values are 1 to 4, not 0"),
        ("e6 1e7", r"cannot reach e6: it is neither a neighbour nor on a straight line"),
        ("d4 1d5", r"the totem must move"),
        ("d5 1d5", r"cannot go on the square the totem moves to"),
        ("d5 1d7", r"must go next to the totem on d5, and d7 is not a neighbour"),
    ],
)
def test_illegal_move_messages(move: str, pattern: str) -> None:
    illegal(GAME.new_state(), move, pattern)


@pytest.mark.parametrize("move", [None, 42, ["d5 3e6"], b"d5 3e6"])
def test_non_string_moves_are_refused(move: object) -> None:
    with pytest.raises(IllegalMove):
        GAME.apply(GAME.new_state(), move)  # type: ignore[arg-type]


# -- the state object --------------------------------------------------------------------


def test_to_json_shape() -> None:
    js = GAME.to_json(GAME.new_state())
    assert set(js) == {"board", "to_move", "ply", "totem", "reserve"}
    assert js["board"][0] == ["#", "#", "", "", "", "#", "#"]
    assert js["board"][1] == ["#", "", "", "", "", "", "#"]
    assert js["board"][3] == ["", "", "", "T", "", "", ""]
    assert js["board"][6] == ["#", "#", "", "", "", "#", "#"]
    assert (js["to_move"], js["ply"], js["totem"]) == ("white", 0, "d4")
    assert js["reserve"] == {"white": FULL, "red": FULL}
    after = GAME.to_json(GAME.apply(GAME.apply(GAME.new_state(), "d5 3e6"), "e4 4d4"))
    assert (after["to_move"], after["ply"], after["totem"]) == ("white", 2, "e4")
    assert [cell(after, sq) for sq in ("e6", "d4", "d5", "e4")] == ["W3", "R4", "", "T"]


def test_states_cannot_be_changed() -> None:
    state = GAME.new_state()
    with pytest.raises(AttributeError, match="immutable"):
        state.ply = 3  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del state.totem
    assert GAME.ply(state) == 0 and GAME.to_json(state)["totem"] == "d4"


def test_from_json_round_trip_and_equality() -> None:
    state = position(JUMPS)
    again = GAME.from_json(GAME.to_json(state))
    assert again == state and hash(again) == hash(state)
    assert GAME.legal_moves(again) == GAME.legal_moves(state)
    assert again != GAME.new_state()


def _mutated(change) -> dict:
    js = GAME.to_json(GAME.apply(GAME.new_state(), "d5 3e6"))
    change(js)
    return js


def _set(path: tuple, value) -> object:
    def change(js: dict) -> None:
        target = js
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (_set(("board", 0, 0), "W1"), r"a1\) is a cut corner and must be '#'"),
        (_set(("board", 3, 0), "#"), r"a4\) is a square of the board"),
        (_set(("board", 5, 4), ""), r"white has 0 piece\(s\) of value 3 on the board and 4 in reserve"),
        (_set(("reserve", "red", "1"), 4), r"red has 0 piece\(s\) of value 1 on the board and 4"),
        (_set(("board", 3, 3), "T"), r"exactly one totem 'T', found 2 \(d4, d5\)"),
        (_set(("board", 4, 3), ""), r"exactly one totem 'T', found 0 \(nowhere\)"),
        (_set(("totem",), "d4"), r"totem is given as 'd4' but the board has it on d5"),
        (_set(("to_move",), "white"), r"to_move is 'white' but at ply 1 it must be 'red'"),
        (_set(("to_move",), "blue"), r"to_move is 'blue'"),
        (_set(("board", 2, 2), "W5"), r"unknown cell 'W5'"),
        (_set(("board", 2, 2), "X"), r"unknown cell 'X'"),
        (_set(("board", 2, 2), 3), r"unknown cell 3"),
        (_set(("board", 2, 2), None), r"unknown cell None"),
        (_set(("board", 6), ["#"] * 8), r"board must be 7 rows"),
        (lambda js: js["board"].pop(), r"board must be 7 rows"),
        (_set(("board",), "....."), r"board must be 7 rows"),
        (_set(("reserve", "white", "2"), -1), r"reserve.white.2 must be a non-negative integer"),
        (_set(("reserve", "white", "2"), True), r"reserve.white.2 must be a non-negative integer"),
        (lambda js: js["reserve"]["white"].pop("4"), r"reserve.white must be an object with exactly"),
        (lambda js: js["reserve"].pop("red"), r"reserve must be an object with exactly the keys"),
        (lambda js: js.pop("totem"), r"yoxii state lacks totem"),
        (_set(("ply",), -1), r"ply must be an integer from 0 to 36"),
        (_set(("ply",), 37), r"ply must be an integer from 0 to 36"),
        (_set(("ply",), True), r"ply must be an integer"),
        (_set(("ply",), "1"), r"ply must be an integer"),
        # Ply, side to move and reserves agree, but red has a piece too many.
        (
            lambda js: (js.update(ply=3, to_move="red"), js["board"][0].__setitem__(3, "R1"),
                        js["reserve"]["red"].__setitem__("1", 4)),
            r"after 3 plies white must have 2 pieces on the board and red 1, but there are 1 white and 1 red",
        ),
    ],
)
def test_from_json_refuses_inconsistent_states(change, pattern: str) -> None:
    with pytest.raises(InvalidState, match=pattern):
        GAME.from_json(_mutated(change))


def test_from_json_refuses_non_objects() -> None:
    with pytest.raises(InvalidState, match="must be a JSON object"):
        GAME.from_json([])  # type: ignore[arg-type]


def test_from_json_of_a_finished_game_reports_its_outcome() -> None:
    end = GAME.apply(pieces(BEFORE_BLOCK), "c1 1d2")
    again = GAME.from_json(GAME.to_json(end))
    assert GAME.outcome(again) == Outcome(0, "blocked", (5, 3))
    assert GAME.legal_moves(again) == []


def test_render_shows_board_turn_reserves_and_result() -> None:
    text = GAME.render(GAME.apply(GAME.new_state(), "d5 3e6"))
    lines = text.splitlines()
    assert lines[0].split() == ["7", ".", ".", "."]
    assert lines[1].split() == ["6", ".", ".", ".", "W3", "."]
    assert lines[2].split() == ["5", ".", ".", ".", "T", ".", ".", "."]
    assert lines[7].split() == list("abcdefg")
    # Columns line up with the file letters.
    assert lines[1].index("W3") + 1 == lines[7].index("e")
    assert "white reserve: 1x5  2x5  3x4  4x3" in text
    assert "red to move" in text
    end_text = GAME.render(GAME.apply(pieces(BEFORE_BLOCK), "c1 1d2"))
    assert "white wins" in end_text and "white 5, red 3" in end_text


# -- properties over random games ------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_random_games_follow_the_rules(seed: int) -> None:
    rng = random.Random(seed ^ 0x5EED)
    states = play_random(seed)
    assert len(states) - 1 <= 36
    for state in states:
        js = GAME.to_json(state)
        moves = GAME.legal_moves(state)
        expected_moves, expected_outcome = reference(js)
        assert len(moves) == len(set(moves))
        assert set(moves) == expected_moves
        assert GAME.outcome(state) == expected_outcome
        for seat, letter in enumerate("WR"):
            on_board = sum(c.startswith(letter) for row in js["board"] for c in row)
            assert on_board + sum(js["reserve"][COLORS[seat]].values()) == 18
        again = GAME.from_json(copy.deepcopy(js))
        assert again == state
        assert GAME.legal_moves(again) == moves and GAME.outcome(again) == GAME.outcome(state)
        for move in moves:
            GAME.apply(state, move)
        assert GAME.to_json(state) == js  # applying never changes the old state
        listed = set(moves)
        for _ in range(30):
            move = (f"{rng.choice(FILES)}{rng.randint(1, 7)} "
                    f"{rng.randint(0, 9)}{rng.choice(FILES)}{rng.randint(1, 7)}")
            if move not in listed:
                with pytest.raises(IllegalMove):
                    GAME.apply(state, move)
    assert GAME.is_over(states[-1])


def test_every_well_formed_string_is_accepted_exactly_when_listed() -> None:
    everything = [f"{d} {v}{p}" for d in (f + str(r) for f in FILES for r in range(1, 8))
                  for v in range(1, 5) for p in (f + str(r) for f in FILES for r in range(1, 8))]
    for seed in (1, 2):
        for state in play_random(seed)[::3]:
            listed = set(GAME.legal_moves(state))
            accepted = set()
            for move in everything:
                try:
                    GAME.apply(state, move)
                except IllegalMove:
                    continue
                accepted.add(move)
            assert accepted == listed
