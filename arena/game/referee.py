"""Plays one game between two bots under a time control and returns its record.

The referee knows the protocol's messages and the engine's rules; it does not
know how processes are spawned (that is :mod:`arena.bot.process`, behind
:class:`arena.bot.player.BotPlayer`).
"""

from __future__ import annotations

from collections.abc import Sequence

import engine
from arena.bot import protocol
from arena.bot.player import BotPlayer, Forfeit
from arena.game.clock import Clock, TimeControl
from arena.game.openings import play_opening
from arena.game.records import GameRecord, GameSpec, MoveRecord, timestamp

__all__ = ["play_game"]


def _budget_text(clock: Clock, seat: int, budget_ms: float) -> str:
    """``its budget of 150 ms (100 ms on its clock + 50 ms margin)``."""
    kind = "per move" if clock.control.per_move_ms is not None else "on its clock"
    return f"its budget of {budget_ms:.0f} ms ({budget_ms - clock.margin_ms:.0f} ms {kind} + {clock.margin_ms} ms margin)"


def play_game(
    spec: GameSpec,
    players: Sequence[BotPlayer],
    time_control: TimeControl,
    margin_ms: int = 50,
) -> GameRecord:
    """Play ``spec`` with ``players[seat]`` on each seat.

    A bot that misbehaves forfeits: its opponent wins, and the record names
    the reason and what the bot did.  Both bots are sent ``game_over``.
    """
    game = engine.get_game(spec.game)
    colors = game.colors
    # The schedule's openings were checked against the engine when the suite was made.
    state = play_opening(game, spec.opening, spec.opening_moves)
    record = GameRecord(
        game_id=spec.game_id,
        game=spec.game,
        players={colors[seat]: players[seat].name for seat in (0, 1)},
        seed=spec.seed,
        opening=spec.opening,
        time_control=time_control.to_json(),
        index=spec.index,
        round=spec.round,
        started_at=timestamp(),
        opening_moves=list(spec.opening_moves),
        pair=spec.pair,
        versions={colors[seat]: spec.versions[seat] for seat in (0, 1)} if spec.versions else None,
    )
    clock = Clock(time_control, margin_ms)
    moves: list[str] = []

    def forfeit(seat: int, exc: Forfeit) -> None:
        record.end_by_forfeit(seat, exc.reason, exc.detail)

    # Both bots are started even if the first fails, so the opponent of a bot
    # that cannot start still sees the game begin and end.  Should both fail,
    # seat 0's failure is the one recorded.
    told: list[BotPlayer] = []
    starts = protocol.new_game_lines(
        spec.game_id, spec.game, record.players, record.time_control, game.to_json_text(state),
        spec.seed, spec.opening_moves,
    )
    for seat in (0, 1):
        try:
            players[seat].start_game(starts[seat])
            told.append(players[seat])
        except Forfeit as exc:
            if not record.reason:
                forfeit(seat, exc)
    # Read once the processes are started: a bot says it in its ``ready``.
    compact = [player.compact_turns for player in players]
    turns = protocol.TurnLines(spec.game_id)
    last_move = None
    while not record.reason:
        outcome = game.outcome(state)
        if outcome is not None:
            record.end_by_rules(outcome.winner, outcome.reason, outcome.scores)
            break
        seat = game.to_move(state)
        if compact[seat]:
            # The move is checked by game.apply all the same: the engine
            # accepts exactly the moves legal_moves would have listed.
            line = turns.compact(game.ply(state), last_move, clock.to_json_text(seat))
        else:
            line = turns.full(
                game.ply(state), game.to_json_text(state), game.legal_moves(state), last_move, clock.to_json_text(seat)
            )
        budget_ms = clock.budget_ms(seat)
        try:
            try:
                move, info, elapsed_ms = players[seat].ask_move(line, budget_ms)
            except Forfeit as exc:
                if exc.waited_ms is None:
                    raise
                raise Forfeit("timeout", f"{exc.detail}, over {_budget_text(clock, seat, budget_ms)}") from None
            if not clock.charge(seat, elapsed_ms):
                raise Forfeit("timeout", f"took {elapsed_ms:.0f} ms, over {_budget_text(clock, seat, budget_ms)}")
            move = move.strip()
            if len(move) > 32:  # no move of either game is this long; keep the message short
                raise Forfeit("illegal_move", f"played a {len(move)}-character string, not a move: {move[:40]!r}...")
            # The engine accepts exactly the listed moves (its property tests
            # hold it to that) and says what is wrong with any other string.
            state = game.apply(state, move)
        except engine.IllegalMove as exc:
            forfeit(seat, Forfeit("illegal_move", f"played {move!r}, not a legal move: {exc}"))
            break
        except Forfeit as exc:
            forfeit(seat, exc)
            break
        moves.append(move)
        last_move = move
        record.moves.append(MoveRecord(move, round(elapsed_ms, 3), info))
    record.ended_at = timestamp()
    # Both bots hear how it ended, the forfeiting one too: it may play again.
    # As in protocol 1, ``moves`` is the whole game from the start position.
    over = protocol.encode(protocol.game_over(
        spec.game_id, record.winner, record.reason, [*spec.opening_moves, *moves], record.scores, spec.opening_moves
    ))
    for player in told:
        player.end_game(over)
    return record
