"""What the search bots (``bots.mcts``, ``bots.alphabeta``) share: the
protocol loop and the time manager.

A search bot is a :class:`Searcher`: the loop rebuilds the position from each
``turn``, asks the time manager for a budget, and lets the searcher think until
its :class:`Deadline`.  Everything here is standard library plus ``engine``.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, TextIO

import engine

__all__ = ["Deadline", "Searcher", "TimeManager", "run_bot", "options_number"]


class Deadline:
    """A search's time limit.  ``soft`` is when no new iteration should start;
    ``hard`` is when the search must stop at once and answer."""

    __slots__ = ("start", "soft", "hard")

    def __init__(self, start: float, soft_s: float, hard_s: float) -> None:
        self.start = start
        self.soft = start + soft_s
        self.hard = start + max(hard_s, soft_s)

    @classmethod
    def unlimited(cls) -> Deadline:
        return cls(time.monotonic(), 1e9, 1e9)

    def passed_soft(self) -> bool:
        return time.monotonic() >= self.soft

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.start) * 1000


@dataclass
class TimeManager:
    """Turns a ``turn``'s clock into a search budget.

    With a chess clock the bot spreads the time it has left, less a floor it
    keeps in hand, over the moves it may still have to play, plus most of the
    increment, and never bets more than half of what is left (the increment
    only comes after the move).  The floor (35 % of the initial time, at most
    1.5 s) absorbs a moment without CPU on a busy machine.

    The arena charges more than the bot measures: the time its process waits
    to be scheduled before reading the ``turn`` and after writing the move.
    The clock in each ``turn`` shows what the last move really cost, so the
    difference (the *lag*) is learnt and taken off every later budget; on a
    loaded machine the bot plays faster instead of running out of time.

    A fixed time per move is used only in part, for the same reasons, and
    because the lag cannot be seen there.  ``fraction`` (the
    ``time_fraction`` option) scales every budget.
    """

    game: str
    fraction: float = 1.0
    #: Taken off every budget for message handling and scheduling delays.
    reserve_ms: float = 25.0
    #: Charged minus measured time of recent moves (decays, jumps up at once).
    lag_ms: float = 0.0
    #: (remaining_ms at the last turn, time the bot measured for its move).
    _last: tuple[float, float] | None = field(default=None, init=False, repr=False)

    def new_game(self) -> None:
        self._last = None

    def moved(self, clock: dict[str, Any], measured_ms: float) -> None:
        """Note the time the bot measured for the move it just sent."""
        self._last = (float(clock.get("remaining_ms") or 0), measured_ms)

    def budget_s(self, clock: dict[str, Any], time_control: dict[str, Any], ply: int) -> tuple[float, float]:
        """``(soft, hard)`` seconds for this move."""
        remaining = float(clock.get("remaining_ms") or 0)
        if "per_move_ms" in time_control or "increment_ms" not in clock and "opponent_ms" not in clock:
            per_move = float(time_control.get("per_move_ms") or remaining)
            usable = max(per_move - self.reserve_ms, per_move * 0.3)
            soft, hard = usable * 0.25, usable * 0.4
        else:
            increment = float(clock.get("increment_ms") or 0)
            if self._last is not None:
                before, measured = self._last
                lag = before + increment - remaining - measured
                self.lag_ms = max(lag, self.lag_ms * 0.7, 0.0)
            initial = float(time_control.get("initial_ms") or remaining)
            floor = min(initial * 0.35, 1500.0)
            # Own moves still to come if the game runs to its end; most games
            # end earlier, so the time of the later moves is spent sooner.
            max_plies = engine.get_game(self.game).max_game_length
            moves_left = max(2.0, (max_plies - ply + 1) / 2 * 0.7)
            held_back = self.reserve_ms + self.lag_ms
            spare = max(0.0, remaining - held_back - floor)
            cap = min(spare * 0.5 + max(0.0, increment - self.lag_ms) * 0.7, max(0.0, remaining - held_back) * 0.5)
            soft = min(spare / moves_left + increment * 0.7, cap)
            hard = min(soft * 2.5, cap)
        soft, hard = soft * self.fraction, hard * self.fraction
        return max(soft, 1.0) / 1000, max(hard, 2.0) / 1000


class Searcher:
    """A search bot.  The loop calls :meth:`new_game` before each game and
    :meth:`choose` once per turn; ``choose`` must return by ``deadline.hard``."""

    name = "Searcher"

    def __init__(self, game: engine.Game[Any], options: dict[str, Any]) -> None:
        self.game = game
        self.options = options
        self.rng = random.Random()

    def new_game(self, seed: int | None) -> None:
        option = self.options.get("seed")
        self.rng = random.Random(option if isinstance(option, int) and not isinstance(option, bool) else seed)

    def choose(self, state: Any, legal: list[str], last_move: str | None, deadline: Deadline) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError

    def after_move(self) -> None:
        """Called once the move is sent, on the opponent's time: the place for
        housekeeping that would otherwise be charged to the bot's clock."""


def options_number(options: dict[str, Any], key: str, default: float | None, low: float, high: float) -> float | None:
    """A numeric option clamped to ``[low, high]``; ``default`` when absent or not a number."""
    value = options.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return min(max(float(value), low), high)


def _send(out: TextIO, message: dict[str, Any]) -> None:
    out.write(json.dumps(message, separators=(",", ":")) + "\n")
    out.flush()


def run_bot(make: type[Searcher], stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> None:
    """Speak the bot protocol on ``stdin``/``stdout`` until ``quit`` or end of input."""
    # The search bots build no reference cycles, so reference counting frees
    # their memory; the cyclic collector, which would pause a search for as long
    # as it takes to walk a large transposition table, runs between games only.
    enabled = gc.isenabled()
    gc.disable()
    try:
        _serve(make, stdin, stdout)
    finally:
        if enabled:
            gc.enable()


def _serve(make: type[Searcher], stdin: TextIO, stdout: TextIO) -> None:
    searcher: Searcher | None = None
    options: dict[str, Any] = {}
    time_control: dict[str, Any] = {}
    manager = TimeManager("")
    for line in stdin:
        received = time.monotonic()  # the arena's clock runs from here
        kind = None
        try:
            message = json.loads(line)
            kind = message.get("type")
            if kind == "hello":
                game = engine.get_game(message["game"])
                options = message.get("options") or {}
                searcher = make(game, options)
                fraction = options_number(options, "time_fraction", 1.0, 0.01, 1.0)
                manager = TimeManager(game.name, fraction or 1.0)
                _send(stdout, {"type": "ready", "name": searcher.name, "version": "1.0", "author": "Totem Arena"})
            elif kind == "new_game":
                if searcher is None or message.get("game", searcher.game.name) != searcher.game.name:
                    searcher = make(engine.get_game(message["game"]), options)
                    manager = TimeManager(searcher.game.name, manager.fraction, lag_ms=manager.lag_ms)
                time_control = message.get("time_control") or {}
                seed = message.get("seed")
                searcher.new_game(seed if isinstance(seed, int) else None)
                manager.new_game()
                gc.collect()
            elif kind == "turn":
                if searcher is None:
                    raise ValueError("a turn came before hello")
                legal = message["legal_moves"]
                state = searcher.game.from_json(message["state"])
                soft, hard = manager.budget_s(message.get("clock") or {}, time_control, searcher.game.ply(state))
                deadline = Deadline(received, soft, hard)
                if len(legal) == 1:
                    move, info = legal[0], {"score": None, "pv": [legal[0]], "forced": True}
                else:
                    move, info = searcher.choose(state, legal, message.get("last_move"), deadline)
                if move not in legal:  # cannot happen with the engine's rules; never forfeit over it
                    print(f"{make.name}: searched move {move!r} is not listed; playing {legal[0]!r}", file=sys.stderr)
                    move = legal[0]
                info["time_ms"] = round(deadline.elapsed_ms(), 1)
                _send(stdout, {"type": "move", "move": move, "info": info})
                manager.moved(message.get("clock") or {}, info["time_ms"])
                searcher.after_move()
            elif kind == "quit":
                return
        except Exception as exc:  # giving up with a reason beats crashing without one
            traceback.print_exc(file=sys.stderr)
            if kind in ("hello", "turn"):  # the only messages that expect an answer
                _send(stdout, {"type": "error", "message": f"{make.name}: {exc}"})
