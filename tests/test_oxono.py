"""Tests of the OXONO rules engine: one hand-built position per rule, plus
property tests over random games checked against a plain reference version of
the rules written here from the rule text."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import IllegalMove, InvalidState, Outcome
from engine.oxono import Oxono, OxonoState

GAME = Oxono()
FILES = "abcdef"
SQUARES = [f"{f}{r}" for r in range(1, 7) for f in FILES]


# ---------------------------------------------------------------- helpers


def state_dict(picture: str, ply: int | None = None) -> dict[str, Any]:
    """A protocol state object from a picture: six lines, rank 6 first, cells
    ``.``, ``TX``, ``TO``, ``PX``, ``PO``, ``BX``, ``BO``.  Reserves follow from
    the board, ``ply`` defaults to the number of pieces."""
    rows = [line.split() for line in picture.strip().splitlines()]
    board = [["" if cell == "." else cell for cell in row] for row in reversed(rows)]
    cells = [cell for row in board for cell in row]
    if ply is None:
        ply = sum(cell[:1] in ("P", "B") for cell in cells)
    totems = {
        board[r][f][1]: f"{FILES[f]}{r + 1}"
        for r in range(len(board))
        for f in range(len(board[r]))
        if board[r][f] in ("TX", "TO")
    }
    return {
        "board": board,
        "to_move": ("pink", "black")[ply % 2],
        "ply": ply,
        "totems": totems,
        "reserve": {
            color: {sym: 8 - cells.count(color[0].upper() + sym) for sym in "XO"} for color in ("pink", "black")
        },
    }


def position(picture: str, ply: int | None = None) -> OxonoState:
    return GAME.from_json(state_dict(picture, ply))


def destinations(state: OxonoState, totem: str) -> set[str]:
    return {m.split()[0][1:] for m in GAME.legal_moves(state) if m[0] == totem}


def placements(state: OxonoState, totem_move: str) -> set[str]:
    return {m.split()[1] for m in GAME.legal_moves(state) if m.split()[0] == totem_move}


def empty_squares(state: OxonoState) -> set[str]:
    board = GAME.to_json(state)["board"]
    return {f"{FILES[f]}{r + 1}" for r in range(6) for f in range(6) if board[r][f] == ""}


# ---------------------------------------------------------------- set-up


def test_openings_place_the_totems_on_the_dotted_squares() -> None:
    assert GAME.to_json(GAME.new_state(opening=0))["totems"] == {"X": "c3", "O": "d4"}
    assert GAME.to_json(GAME.new_state(opening=1))["totems"] == {"X": "d4", "O": "c3"}
    assert (GAME.name, GAME.colors, GAME.openings) == ("oxono", ("pink", "black"), 2)


@pytest.mark.parametrize("opening", [0, 1])
def test_start_position_has_68_distinct_moves(opening: int) -> None:
    moves = GAME.legal_moves(GAME.new_state(opening=opening))
    assert len(moves) == 68
    assert len(set(moves)) == 68


def test_seed_decides_the_opening_deterministically() -> None:
    drawn = [GAME.opening_of(seed) for seed in range(40)]
    assert set(drawn) == {0, 1}
    for seed in range(40):
        state = GAME.new_state(seed=seed)
        assert state == GAME.new_state(seed=seed)
        assert state == GAME.new_state(opening=drawn[seed])
    assert GAME.new_state(seed=3, opening=1) == GAME.new_state(opening=1)


@pytest.mark.parametrize("opening", [2, -1, 1.0, "0"])
def test_unknown_opening_is_refused(opening: Any) -> None:
    with pytest.raises(ValueError, match="openings 0 and 1"):
        GAME.new_state(opening=opening)


def test_start_state_json_has_the_protocol_shape() -> None:
    empty = [""] * 6
    assert GAME.to_json(GAME.new_state(opening=0)) == {
        "board": [empty, empty, ["", "", "TX", "", "", ""], ["", "", "", "TO", "", ""], empty, empty],
        "to_move": "pink",
        "ply": 0,
        "totems": {"X": "c3", "O": "d4"},
        "reserve": {"pink": {"X": 8, "O": 8}, "black": {"X": 8, "O": 8}},
    }


def test_to_json_after_a_move() -> None:
    state = GAME.apply(GAME.new_state(opening=0), "Xc5 c6")
    data = GAME.to_json(state)
    assert data["board"][4][2] == "TX" and data["board"][5][2] == "PX" and data["board"][2][2] == ""
    assert data["to_move"] == "black" and data["ply"] == 1
    assert data["totems"] == {"X": "c5", "O": "d4"}
    assert data["reserve"] == {"pink": {"X": 7, "O": 8}, "black": {"X": 8, "O": 8}}
    assert GAME.to_move(state) == 1 and GAME.ply(state) == 1 and GAME.outcome(state) is None


# ---------------------------------------------------------------- totem moves


def test_slide_stops_before_a_piece_and_before_the_other_totem() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  PX .  .  .
        .  .  .  .  .  .
        .  .  TX .  TO .
        .  .  .  .  .  .
        .  .  .  .  .  .
    """)
    assert destinations(state, "X") == {"c4", "d3", "c2", "c1", "b3", "a3"}
    with pytest.raises(IllegalMove, match="blocked at c5"):
        GAME.apply(state, "Xc6 b6")
    with pytest.raises(IllegalMove, match="blocked at e3"):
        GAME.apply(state, "Xf3 f4")
    with pytest.raises(IllegalMove, match="occupied"):
        GAME.apply(state, "Xe3 e4")


def test_slide_goes_any_distance_over_empty_squares() -> None:
    state = GAME.new_state(opening=0)  # X on c3, O on d4
    assert destinations(state, "X") == {"c4", "c5", "c6", "c2", "c1", "a3", "b3", "d3", "e3", "f3"}


def test_totem_enclosed_at_an_edge_jumps() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        PX .  .  .  .  .
        TX BO .  .  .  .
        PO .  .  .  .  TO
        .  .  .  .  .  .
    """)
    assert destinations(state, "X") == {"a5", "c3", "a1"}


def test_totem_enclosed_in_a_corner_jumps() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  .  TO .
        BX .  .  .  .  .
        TX PO .  .  .  .
    """)
    assert destinations(state, "X") == {"a3", "c1"}


def test_totem_beside_an_empty_square_of_the_last_rank_is_not_enclosed() -> None:
    state = position("""
        .  .  .  .  .  .
        .  PX TX BO .  .
        .  .  PO .  .  .
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  .  .  TO
    """, ply=3)
    assert destinations(state, "X") == {"c6"}
    with pytest.raises(IllegalMove, match="blocked at c4"):
        GAME.apply(state, "Xc3 c2")


def test_totem_beside_an_empty_square_of_the_last_file_is_not_enclosed() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  .  PX .
        .  .  .  BO TX .
        .  .  .  .  PO .
        TO .  .  .  .  .
    """)
    assert destinations(state, "X") == {"f3"}


def test_totem_on_the_last_rank_is_enclosed_by_the_edge() -> None:
    state = position("""
        .  PX TX BO .  .
        .  .  PO .  .  .
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  .  .  TO
    """)
    assert destinations(state, "X") == {"a6", "e6", "c4"}


def test_totem_on_the_last_file_is_enclosed_by_the_edge() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  PX
        .  .  .  .  BO TX
        .  .  .  .  .  PO
        .  .  .  .  .  .
        TO .  .  .  .  .
    """)
    assert destinations(state, "X") == {"f6", "d4", "f2"}


def test_jump_passes_over_a_run_that_includes_the_other_totem() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  PO .  .  .  .
        BX TX PX TO BO .
        .  PX .  .  .  .
        .  .  .  .  .  .
    """)
    # right: over c3, totem O on d3 and e3 to f3; left: a3 then the edge, no move.
    assert destinations(state, "X") == {"f3", "b5", "b1"}
    with pytest.raises(IllegalMove, match="enclosed and may only jump to"):
        GAME.apply(state, "Xe4 e5")


def test_jump_lands_on_the_first_empty_square_only() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  PO .  .  .  .
        BX TX PX .  .  TO
        .  BO .  .  .  .
        .  .  .  .  .  .
    """)
    assert "d3" in destinations(state, "X")
    with pytest.raises(IllegalMove, match="only jump to"):
        GAME.apply(state, "Xe3 e4")


def test_a_run_reaching_the_edge_gives_no_jump_that_way() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  PX .  .  .
        .  BO TX PX BO PX
        .  .  BO .  .  .
        .  .  .  .  .  TO
    """)
    # right: d3 e3 f3 then the edge.
    assert destinations(state, "X") == {"c5", "a3", "c1"}


def test_no_jump_for_a_totem_that_is_not_enclosed() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  PX .  .  .
        .  BO TX PX .  .
        .  .  .  .  .  .
        .  .  .  .  .  TO
    """)
    assert destinations(state, "X") == {"c2", "c1"}
    with pytest.raises(IllegalMove, match="blocked at d3"):
        GAME.apply(state, "Xe3 e2")


ANYWHERE = """
    BO .  .  .  .  .
    PX .  .  .  .  .
    BO .  .  .  .  .
    PO .  .  TO .  .
    BX .  .  .  .  .
    TX BO PX PO BX PX
"""


def test_enclosed_totem_without_a_landing_goes_to_any_empty_square() -> None:
    state = position(ANYWHERE)
    assert destinations(state, "X") == empty_squares(state)
    assert len(destinations(state, "X")) == 24
    assert placements(state, "Xb2") == {"b3", "c2"}


def test_placement_anywhere_when_no_neighbour_of_the_totem_is_empty() -> None:
    state = position("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        BO .  .  .  .  .
        PO .  .  TO .  .
        PX .  PO .  .  .
        TX BO .  BX .  .
    """)
    # X jumps over b1 to c1, whose neighbours b1 d1 c2 are all taken; a1, just left, is empty.
    assert destinations(state, "X") == {"a5", "c1"}
    spots = placements(state, "Xc1")
    assert spots == (empty_squares(state) - {"c1"}) | {"a1"}
    after = GAME.apply(state, "Xc1 a1")
    assert GAME.to_json(after)["board"][0][:3] == ["PX", "BO", "TX"]


def test_the_square_the_totem_left_may_receive_the_piece() -> None:
    state = GAME.new_state(opening=0)
    assert placements(state, "Xc4") == {"c3", "b4", "c5"}
    after = GAME.apply(state, "Xc4 c3")
    assert GAME.to_json(after)["board"][2][2] == "PX"


def test_placement_must_be_next_to_the_moved_totem() -> None:
    state = GAME.new_state(opening=0)
    assert placements(state, "Xc1") == {"b1", "d1", "c2"}
    with pytest.raises(IllegalMove, match=r"next to totem X on c1 \(b1, d1, c2\)"):
        GAME.apply(state, "Xc1 c6")


RESERVE = """
    PX PX BO PX PX .
    BO BO .  BO BO .
    PX PX .  PX PX .
    BO BO .  .  .  .
    .  .  TX .  TO .
    .  .  .  .  .  BO
"""


def test_a_totem_moves_only_while_the_mover_holds_its_symbol() -> None:
    state = position(RESERVE)
    moves = GAME.legal_moves(state)
    assert moves and all(m.startswith("O") for m in moves)
    with pytest.raises(IllegalMove, match="pink has no X piece left"):
        GAME.apply(state, "Xc1 b1")


# ---------------------------------------------------------------- winning


def test_colour_row_of_mixed_symbols_wins() -> None:
    state = position("""
        .  .  .  .  .  BO
        .  .  BX .  .  .
        BO .  .  .  .  .
        .  .  .  .  .  TO
        .  .  .  .  TX .
        PX PO PX .  .  .
    """)
    after = GAME.apply(state, "Xe1 d1")
    assert GAME.outcome(after) == Outcome(0, "alignment")
    assert GAME.legal_moves(after) == []


def test_symbol_row_of_mixed_colours_wins() -> None:
    state = position("""
        .  .  .  .  .  BO
        .  .  .  TX .  .
        .  PX .  .  .  .
        .  BX .  .  TO .
        .  PX .  .  .  .
        .  .  .  .  .  PO
    """)
    after = GAME.apply(state, "Xc5 b5")
    assert GAME.outcome(after) == Outcome(1, "alignment")


def test_symbol_row_made_mostly_of_opponent_pieces_wins_for_the_placer() -> None:
    state = position("""
        .  .  .  .  .  PO
        .  .  .  .  TX .
        BO BO BO .  .  .
        .  .  .  .  .  .
        .  .  .  TO .  .
        PX .  PX .  .  .
    """)
    after = GAME.apply(state, "Od3 d4")
    assert GAME.outcome(after) == Outcome(0, "alignment")


def test_a_totem_breaks_a_row() -> None:
    state = position("""
        BO .  BX .  .  BO
        .  .  .  .  TX .
        .  .  .  .  .  .
        PX PX TO PX .  .
        .  .  .  .  .  .
        .  .  .  .  .  .
    """)
    after = GAME.apply(state, "Xe4 e3")
    assert GAME.outcome(after) is None
    assert GAME.to_json(after)["board"][2] == ["PX", "PX", "TO", "PX", "PX", ""]


def test_three_in_a_row_does_not_win() -> None:
    after = GAME.apply(position("""
        BO .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  TX .  .  .
        .  .  .  TO .  .
        PX PX .  .  .  BX
    """), "Xc2 c1")
    assert GAME.outcome(after) is None


def test_a_run_of_five_wins() -> None:
    state = position("""
        .  BX .  .  .  BO
        BO .  .  .  BX .
        .  .  TX .  .  .
        .  .  .  .  .  TO
        PX PO .  PX PO .
        .  .  .  .  .  .
    """)
    after = GAME.apply(state, "Xc3 c2")
    assert GAME.outcome(after) == Outcome(0, "alignment")


def test_a_row_in_the_last_rank_wins() -> None:
    state = position("""
        .  .  BX BO BX .
        .  .  .  .  .  .
        .  .  .  .  .  TO
        PX .  .  .  .  .
        .  .  .  .  .  .
        PX PO .  PO .  TX
    """)
    after = GAME.apply(state, "Of5 f6")
    assert GAME.outcome(after) == Outcome(1, "alignment")


def test_a_row_in_the_last_file_wins() -> None:
    state = position("""
        PX .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  TO .  .
        .  .  .  .  .  BO
        .  .  TX .  .  PO
        .  .  .  .  .  BO
    """)
    after = GAME.apply(state, "Oe4 f4")
    assert GAME.outcome(after) == Outcome(0, "alignment")


# Ply 31, black to move with one piece left (X).  X on f3 is enclosed and jumps
# to f6, where no neighbour is free, so the piece may go on b5, c1 or f3.
LAST_PIECE = """
    PO BO TO PX BX .
    BO .  BO PX PO PX
    BO PX PX BO BX BX
    BX PO BO PX PX TX
    PO PX PO BX PO PO
    BO BX .  BO BX PO
"""


def test_a_row_made_by_the_32nd_piece_wins() -> None:
    state = position(LAST_PIECE)
    assert GAME.ply(state) == 31 and GAME.to_move(state) == 1
    assert sorted(GAME.legal_moves(state)) == ["Xf6 b5", "Xf6 c1", "Xf6 f3"]
    after = GAME.apply(state, "Xf6 c1")
    assert GAME.outcome(after) == Outcome(1, "alignment")
    assert GAME.ply(after) == 32


@pytest.mark.parametrize("move", ["Xf6 b5", "Xf6 f3"])
def test_32_pieces_without_a_row_is_a_draw(move: str) -> None:
    after = GAME.apply(position(LAST_PIECE), move)
    assert GAME.outcome(after) == Outcome(None, "exhausted")
    assert GAME.legal_moves(after) == []
    with pytest.raises(IllegalMove, match="game is over"):
        GAME.apply(after, "Xc1 c1")


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "move", ["", "Xc5c6", "xc5 c6", "Zc5 c6", "Xg5 c6", "Xc7 c6", "Xc5 c6 ", " Xc5 c6", "Xc5  c6", "X c5 c6", "pass"]
)
def test_malformed_moves_are_refused(move: str) -> None:
    with pytest.raises(IllegalMove, match="malformed move"):
        GAME.apply(GAME.new_state(), move)


def test_a_non_string_move_is_refused() -> None:
    with pytest.raises(IllegalMove, match="malformed move"):
        GAME.apply(GAME.new_state(), 42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("move", "why"),
    [
        ("Xd5 d6", "not on either"),
        ("Xc3 c4", "must move"),
        ("Xd4 d5", "occupied"),
        ("Xc5 c5", "where the totem lands"),
        ("Xc5 d4", "d4 is occupied"),
        ("Xc5 c1", "next to totem X on c5"),
    ],
)
def test_illegal_moves_say_why(move: str, why: str) -> None:
    with pytest.raises(IllegalMove, match=why):
        GAME.apply(GAME.new_state(opening=0), move)


def test_a_finished_game_refuses_moves() -> None:
    won = position("""
        .  .  .  .  .  BO
        .  .  BX .  .  .
        BO .  .  .  .  .
        .  .  .  .  .  TO
        .  .  .  .  TX .
        PX PO PX PX .  .
    """)
    with pytest.raises(IllegalMove, match=r"game is over \(pink won by alignment\)"):
        GAME.apply(won, "Of6 e6")


# ---------------------------------------------------------------- from_json


def test_from_json_round_trips_a_hand_built_position() -> None:
    data = state_dict(ANYWHERE)
    state = GAME.from_json(data)
    assert GAME.to_json(state) == data
    assert GAME.from_json(GAME.to_json(state)) == state


def test_from_json_reports_a_win_on_the_board() -> None:
    state = position("""
        .  .  .  .  .  BO
        .  .  BX .  .  .
        BO .  .  .  .  .
        .  .  .  .  .  TO
        .  .  .  .  TX .
        PX PO PX PX .  .
    """)
    assert GAME.outcome(state) == Outcome(0, "alignment")
    assert GAME.legal_moves(state) == []


def test_from_json_reports_a_win_by_the_32nd_piece_and_a_draw() -> None:
    won = GAME.apply(position(LAST_PIECE), "Xf6 c1")
    drawn = GAME.apply(position(LAST_PIECE), "Xf6 b5")
    assert GAME.outcome(GAME.from_json(GAME.to_json(won))) == Outcome(1, "alignment")
    assert GAME.outcome(GAME.from_json(GAME.to_json(drawn))) == Outcome(None, "exhausted")


def _start() -> dict[str, Any]:
    return GAME.to_json(GAME.new_state(opening=0))


def _refusal(data: Any, why: str) -> None:
    with pytest.raises(InvalidState, match=why):
        GAME.from_json(data)


def test_from_json_refuses_a_non_object_and_missing_keys() -> None:
    _refusal([], "JSON object")
    data = _start()
    del data["reserve"]
    _refusal(data, "lacks reserve")


def test_from_json_refuses_wrong_board_sizes() -> None:
    data = _start()
    data["board"] = data["board"][:5]
    _refusal(data, "list of 6 ranks")
    data = _start()
    data["board"][3].append("")
    _refusal(data, "rank 4 must be a list of 6 cells")


def test_from_json_refuses_unknown_cell_codes() -> None:
    data = _start()
    data["board"][0][0] = "PZ"
    _refusal(data, "unknown cell code 'PZ' on a1")
    data["board"][0][0] = None
    _refusal(data, "unknown cell code None")


def test_from_json_refuses_missing_or_duplicated_totems() -> None:
    data = _start()
    data["board"][3][3] = ""
    _refusal(data, "exactly one totem O, found 0")
    data = _start()
    data["board"][0][0] = "TX"
    _refusal(data, r"exactly one totem X, found 2 \(on a1, c3\)")


def test_from_json_refuses_totems_that_disagree_with_the_board() -> None:
    data = _start()
    data["totems"]["X"] = "a1"
    _refusal(data, "totems says X is on 'a1' but the board has it on c3")
    data = _start()
    data["totems"] = {"X": "c3"}
    _refusal(data, "totems must map")


def test_from_json_refuses_a_piece_and_totem_on_one_square() -> None:
    data = state_dict("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  TO .  .
        .  .  TX .  .  .
        .  .  .  .  .  .
        PX .  .  .  .  .
    """)
    data["totems"]["X"] = "a1"  # the board has a pink piece there
    _refusal(data, "totems says X is on 'a1'")


def test_from_json_refuses_to_move_not_matching_ply() -> None:
    data = _start()
    data["to_move"] = "black"
    _refusal(data, "at ply 0 pink moves")
    data["to_move"] = "red"
    _refusal(data, "to_move must be 'pink' or 'black'")


@pytest.mark.parametrize("ply", [-1, 33, "0", 1.0, True, None])
def test_from_json_refuses_bad_ply_values(ply: Any) -> None:
    data = _start()
    data["ply"] = ply
    _refusal(data, "ply must be an integer")


def test_from_json_refuses_counts_that_do_not_add_up() -> None:
    data = _start()
    data["reserve"]["pink"]["X"] = 7
    _refusal(data, "reserve pink X is 7 but the board holds 0")
    data = _start()
    data["reserve"]["black"] = {"X": 8}
    _refusal(data, "reserve of black must map")
    data = _start()
    data["reserve"]["pink"]["O"] = 9
    _refusal(data, "from 0 to 8")
    # A piece on the board, reserve adjusted, but ply still 0.
    data = state_dict(ANYWHERE, ply=0)
    _refusal(data, "at ply 0 pink has placed 0 pieces, but the board holds 5")
    # Right total, wrong split between the colours.
    data = state_dict("""
        .  .  .  .  .  .
        .  .  .  .  .  .
        .  .  .  TO .  .
        .  .  TX .  .  .
        .  .  .  .  .  .
        BX BO .  .  .  .
    """)
    _refusal(data, "at ply 2 pink has placed 1 pieces, but the board holds 0")


def test_from_json_refuses_rows_the_last_move_cannot_explain() -> None:
    # Two separate pink rows: one move cannot have made both.
    data = state_dict("""
        PX PX PO PO .  .
        .  .  .  .  .  .
        PO PO PX PX .  .
        .  .  TX .  .  .
        .  BO BO BX BX TO
        BO BO BX BX .  .
    """)
    _refusal(data, "cannot have completed together")
    # A black row, but pink moved last.
    data = state_dict("""
        .  .  .  .  .  PX
        PX PO PX .  .  .
        .  .  .  .  .  .
        .  .  TX TO .  .
        PO .  .  .  .  .
        BX BO BX BO .  .
    """)
    assert data["to_move"] == "black"
    _refusal(data, "cannot have completed together")


# ---------------------------------------------------------------- render


def test_render_shows_board_turn_reserves_and_result() -> None:
    text = GAME.render(GAME.new_state(opening=0))
    lines = text.splitlines()
    assert lines[0].split() == list("abcdef")
    assert lines[4].split() == ["3", ".", ".", "TX", ".", ".", ".", "3"]
    assert "pink X8 O8" in text and "black X8 O8" in text and "pink to move" in text
    over = GAME.render(GAME.apply(position(LAST_PIECE), "Xf6 b5"))
    assert "game over: draw (exhausted)" in over


# ---------------------------------------------------------------- reference rules

DIRECTIONS = ((0, 1), (0, -1), (-1, 0), (1, 0))


def _step(sq: str, d: tuple[int, int]) -> str | None:
    f, r = FILES.index(sq[0]) + d[0], int(sq[1]) + d[1]
    return f"{FILES[f]}{r}" if 0 <= f < 6 and 1 <= r <= 6 else None


def reference_moves(data: dict[str, Any]) -> set[str]:
    """The legal moves, straight from the rule text, on a dict board."""
    board = {f"{FILES[f]}{r + 1}": data["board"][r][f] for r in range(6) for f in range(6)}
    moves: set[str] = set()
    for totem in "XO":
        if data["reserve"][data["to_move"]][totem] == 0:
            continue
        pos = data["totems"][totem]
        neighbours = [n for n in (_step(pos, d) for d in DIRECTIONS) if n]
        dests: list[str] = []
        if any(board[n] == "" for n in neighbours):
            for d in DIRECTIONS:
                sq = _step(pos, d)
                while sq and board[sq] == "":
                    dests.append(sq)
                    sq = _step(sq, d)
        else:
            for d in DIRECTIONS:
                sq = _step(pos, d)
                while sq and board[sq] != "":
                    sq = _step(sq, d)
                if sq:
                    dests.append(sq)
            if not dests:
                dests = [sq for sq, cell in board.items() if cell == ""]
        for dest in dests:
            after = dict(board, **{pos: "", dest: "T" + totem})
            free = [n for n in (_step(dest, d) for d in DIRECTIONS) if n and after[n] == ""]
            for place in free or [sq for sq, cell in after.items() if cell == ""]:
                moves.add(f"{totem}{dest} {place}")
    return moves


def reference_has_row(data: dict[str, Any]) -> bool:
    board = data["board"]
    lines = [board[r] for r in range(6)] + [[board[r][f] for r in range(6)] for f in range(6)]
    for line in lines:
        for start in range(3):
            cells = line[start : start + 4]
            if all(c[:1] in ("P", "B") for c in cells) and (
                len({c[0] for c in cells}) == 1 or len({c[1] for c in cells}) == 1
            ):
                return True
    return False


def _random_move_string(rng: random.Random) -> str:
    return f"{rng.choice('XO')}{rng.choice(SQUARES)} {rng.choice(SQUARES)}"


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_random_games_follow_the_reference_rules(seed: int) -> None:
    rng = random.Random(seed)
    state = GAME.new_state(seed=seed)
    while GAME.outcome(state) is None:
        data = GAME.to_json(state)
        moves = GAME.legal_moves(state)
        assert len(moves) == len(set(moves))
        assert set(moves) == reference_moves(data)
        assert moves == GAME.legal_moves(state)  # deterministic order
        for _ in range(10):
            candidate = _random_move_string(rng)
            if candidate in moves:
                GAME.apply(state, candidate)
            else:
                with pytest.raises(IllegalMove):
                    GAME.apply(state, candidate)
        for move in moves:
            GAME.apply(state, move)  # every listed move applies
        before = copy.deepcopy(data)
        mover = GAME.to_move(state)
        state_after = GAME.apply(state, rng.choice(moves))
        assert GAME.to_json(state) == before  # the old state is untouched
        state = state_after
        after = GAME.to_json(state)
        for color in ("pink", "black"):
            code = color[0].upper()
            on_board = sum(cell.startswith(code) for rank in after["board"] for cell in rank)
            assert on_board + sum(after["reserve"][color].values()) == 16
        if reference_has_row(after):
            assert GAME.outcome(state) == Outcome(mover, "alignment")
        elif GAME.ply(state) == 32:
            assert GAME.outcome(state) == Outcome(None, "exhausted")
        else:
            assert GAME.outcome(state) is None
        assert GAME.ply(state) <= 32
    assert GAME.legal_moves(state) == []


@PROPERTY
@given(seed=st.integers(min_value=0, max_value=2**32), stop=st.integers(min_value=0, max_value=32))
def test_json_round_trip_keeps_moves_and_outcome(seed: int, stop: int) -> None:
    rng = random.Random(seed)
    state = GAME.new_state(seed=seed)
    while GAME.outcome(state) is None and GAME.ply(state) < stop:
        state = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
    back = GAME.from_json(GAME.to_json(state))
    assert back == state and hash(back) == hash(state)
    assert GAME.legal_moves(back) == GAME.legal_moves(state)
    assert GAME.outcome(back) == GAME.outcome(state)
    assert GAME.to_json(back) == GAME.to_json(state)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=8))
def test_apply_refuses_any_string_not_listed(text: str) -> None:
    state = GAME.new_state(opening=1)
    if text in GAME.legal_moves(state):
        assert GAME.ply(GAME.apply(state, text)) == 1
    else:
        with pytest.raises(IllegalMove):
            GAME.apply(state, text)
