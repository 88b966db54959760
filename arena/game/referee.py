"""Referees one game, move by move, under a time control and returns its record.

The referee knows the protocol's messages and the engine's rules; it does not
know how processes are spawned (that is :mod:`arena.bot.process`, behind
:class:`arena.bot.player.BotPlayer`).  :class:`Referee` is one game in
progress, a move at a time; :func:`play_game` plays a tournament's game with
it, and ``arena play`` a person's game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import engine
from arena.bot import protocol
from arena.bot.forfeits import Forfeit
from arena.bot.player import BotPlayer
from arena.game.clock import MARGIN_MS, Clock, TimeControl
from arena.game.openings import play_opening
from arena.game.records import GameRecord, GameSpec, MoveRecord, timestamp

__all__ = ["Referee", "play_game"]

#: No move of either game is this long; a longer string is refused with a short message.
_MAX_MOVE_CHARS = 32


def _budget_text(clock: Clock, seat: int, budget_ms: float) -> str:
    """``its budget of 150 ms (100 ms on its clock + 50 ms margin)``, and
    ``+ 20 ms network margin`` for a remote bot granted one."""
    kind = "per move" if clock.controls[seat].per_move_ms is not None else "on its clock"
    network = clock.network_ms[seat]
    return (f"its budget of {budget_ms:.0f} ms ({budget_ms - clock.margin_ms - network:.0f} ms {kind} + "
            f"{clock.margin_ms} ms margin" + (f" + {network:.0f} ms network margin)" if network else ")"))


def over_budget(did: str, ms: float, clock: Clock, seat: int, budget_ms: float) -> str:
    """``no move after 151 ms, over its budget of 150 ms (...)``: ``ms`` to
    as many decimals as it takes not to read as the budget itself
    (``1050.3 ms, over its budget of 1050 ms``, not ``1050 ms``)."""
    shown = next((f"{ms:.{places}f}" for places in range(4) if f"{ms:.{places}f}" != f"{budget_ms:.{places}f}"),
                 f"{ms:.3f}")
    return f"{did} {shown} ms, over {_budget_text(clock, seat, budget_ms)}"


class Referee:
    """One game in progress: the engine state, the clock and the record being
    built.  A seat with a :class:`BotPlayer` is asked for its moves
    (:meth:`bot_move`); a seat of ``None`` moves from elsewhere (the person in
    ``arena play``) through :meth:`apply`.

    The bots are told ``game_id`` and ``opening_moves``, the record's own
    unless given: ``arena play`` restarts the bot's game after an undo under
    an id of its own, with the moves so far as its opening.  ``moves`` are the
    moves played since the bots were told the position.
    """

    __slots__ = ("game", "state", "record", "clock", "players", "game_id", "opening_moves", "moves",
                 "_turns", "_compact", "_told")

    def __init__(
        self,
        game: engine.Game[Any],
        state: Any,
        record: GameRecord,
        clock: Clock,
        players: Sequence[BotPlayer | None],
        *,
        game_id: str | None = None,
        opening_moves: Sequence[str] | None = None,
    ) -> None:
        self.game = game
        self.state = state
        self.record = record
        self.clock = clock
        self.players = players
        self.game_id = record.game_id if game_id is None else game_id
        self.opening_moves = list(record.opening_moves if opening_moves is None else opening_moves)
        self.moves: list[str] = []
        self._turns = protocol.TurnLines(self.game_id)
        self._compact = [False, False]
        self._told: list[BotPlayer] = []

    @property
    def over(self) -> bool:
        return bool(self.record.reason)

    def start(self) -> None:
        """Send each bot ``new_game``; the game is over at once if a bot
        cannot take it (it forfeits) or the position is already decided."""
        record = self.record
        # Both bots are started even if the first fails, so the opponent of a
        # bot that cannot start still sees the game begin and end.  Should
        # both fail, seat 0's failure is the one recorded.
        starts = self._new_game_lines(self.opening_moves)
        for seat, player in enumerate(self.players):
            if player is None:
                continue
            try:
                player.start_game(starts[seat])
                self._told.append(player)
            except Forfeit as exc:
                if not record.reason:
                    record.end_by_forfeit(seat, exc.reason, exc.detail)
        # Read once the processes are started: a bot says it in its ``ready``; a remote bot's claim, its round trip.
        self._compact = [player is not None and player.compact_turns for player in self.players]
        margins = [player.network_margin_ms if player is not None else None for player in self.players]
        self.clock.network_ms = [margin or 0.0 for margin in margins]
        if any(margin is not None for margin in margins):
            record.network_margin_ms = {color: round(margin, 1) for color, margin in zip(record.players, margins)
                                        if margin is not None}
        if not record.reason:
            self._end_if_decided()

    def bot_move(self) -> MoveRecord | None:
        """Ask the bot whose turn it is for its move, under the clock, and
        apply it; the move's record, or ``None`` when the bot forfeited.  A
        bot that misbehaves forfeits: its opponent wins, and the record names
        the reason and what the bot did."""
        game, state, clock = self.game, self.state, self.clock
        seat = game.to_move(state)
        player = self.players[seat]
        assert player is not None, "a seat without a bot moves through apply"
        line = self._turn_line(seat, self.moves[-1] if self.moves else None)
        budget_ms = clock.budget_ms(seat)
        try:
            try:
                move, info, elapsed_ms = player.ask_move(line, budget_ms, self._rejoin)
            except Forfeit as exc:
                if exc.waited_ms is None:
                    raise
                raise Forfeit("timeout", over_budget("no move after", exc.waited_ms, clock, seat, budget_ms)) from None
            if not clock.charge(seat, elapsed_ms):
                raise Forfeit("timeout", over_budget("took", elapsed_ms, clock, seat, budget_ms))
            move = move.strip()
            if len(move) > _MAX_MOVE_CHARS:
                raise Forfeit("illegal_move", f"played a {len(move)}-character string, not a move: {move[:40]!r}...")
            # The engine accepts exactly the listed moves (its property tests
            # hold it to that) and says what is wrong with any other string.
            return self.apply(move, elapsed_ms, info, player.latency_ms)
        except engine.IllegalMove as exc:
            self.record.end_by_forfeit(seat, "illegal_move", f"played {move!r}, not a legal move: {exc}")
        except Forfeit as exc:
            self.record.end_by_forfeit(seat, exc.reason, exc.detail)
        return None

    def _turn_line(self, seat: int, last_move: str | None) -> bytes:
        """The ``turn`` line of the position for ``seat``, in the form its bot
        asked for, ``last_move`` the move since the position it was told."""
        game, state, clock = self.game, self.state, self.clock
        if self._compact[seat]:
            # The move is checked by game.apply all the same: the engine
            # accepts exactly the moves legal_moves would have listed.
            return self._turns.compact(game.ply(state), last_move, clock.to_json_text(seat))
        return self._turns.full(
            game.ply(state), game.to_json_text(state), game.legal_moves(state), last_move, clock.to_json_text(seat)
        )

    def _rejoin(self) -> tuple[bytes, bytes]:
        """For the bot to move, a new program of it (a remote bot whose bridge
        started again, greeted anew): the game from the position reached, as
        a game that starts from a position (the moves so far its opening),
        and the turn again, in the form the new program asked for (no last
        move: the position it was just told is the one to move from)."""
        seat = self.game.to_move(self.state)
        player = self.players[seat]
        assert player is not None
        self._compact[seat] = player.compact_turns
        return self._new_game_lines([*self.opening_moves, *self.moves])[seat], self._turn_line(seat, None)

    def _new_game_lines(self, opening_moves: list[str]) -> list[bytes]:
        """Each seat's ``new_game`` line of the position now, reached by ``opening_moves``."""
        record = self.record
        return protocol.new_game_lines(
            self.game_id, record.game, record.players, [record.clock_of(color) for color in record.players],
            self.game.to_json_text(self.state), record.seed, opening_moves,
        )

    def apply(self, move: str, elapsed_ms: float, info: dict[str, Any] | None,
              latency_ms: float | None = None) -> MoveRecord:
        """Play ``move`` for the seat to move, its time already charged to the
        clock, and end the game if the rules end it; the move's record (with
        a remote bot's round trip, ``latency_ms``).
        Raises :class:`engine.IllegalMove`, changing nothing, for an illegal move."""
        self.state = self.game.apply(self.state, move)
        self.moves.append(move)
        played = MoveRecord(move, round(elapsed_ms, 3), info, latency_ms)
        self.record.moves.append(played)
        self._end_if_decided()
        return played

    def _end_if_decided(self) -> None:
        """End the game by the rules if the position is decided."""
        outcome = self.game.outcome(self.state)
        if outcome is not None:
            self.record.end_by_rules(outcome.winner, outcome.reason, outcome.scores)

    def finish(self) -> GameRecord:
        """Stamp the game's end and tell the bots how it ended; the record."""
        record = self.record
        record.ended_at = timestamp()
        # Both bots hear how it ended, the forfeiting one too: it may play again.
        # As in protocol 1, ``moves`` is the whole game from the start position.
        over = protocol.encode(protocol.game_over(
            self.game_id, record.winner, record.reason, [*self.opening_moves, *self.moves], record.scores,
            self.opening_moves,
        ))
        for player in self._told:
            player.end_game(over)
        return record


def play_game(
    spec: GameSpec,
    players: Sequence[BotPlayer],
    time_control: TimeControl,
    margin_ms: int = MARGIN_MS,
    seat_controls: Sequence[TimeControl] | None = None,
    on_move: Callable[[Referee], None] | None = None,
) -> GameRecord:
    """Play ``spec`` with ``players[seat]`` on each seat, under
    ``time_control``, or with time odds under ``seat_controls`` (each seat's
    own clock; the record keeps both).  ``on_move`` is told the game once
    started and after each move (the live view's feed).

    A bot that misbehaves forfeits: its opponent wins, and the record names
    the reason and what the bot did.  Both bots are sent ``game_over``.
    """
    game = engine.get_game(spec.game)
    colors = game.colors
    # The schedule's openings were checked against the engine when the suite was made.
    state = play_opening(game, spec.opening, spec.opening_moves)
    odds = seat_controls is not None and any(control != time_control for control in seat_controls)
    record = GameRecord.for_spec(spec, colors, time_control.to_json(),
                                 [control.to_json() for control in seat_controls] if odds and seat_controls else None)
    referee = Referee(game, state, record, Clock(seat_controls if odds and seat_controls else time_control, margin_ms), players)
    referee.start()
    if on_move is not None:
        on_move(referee)
    while not record.reason:
        referee.bot_move()
        if on_move is not None:
            on_move(referee)
    return referee.finish()
