"""A one-ply-lookahead bot built on the rules engine.

It plays a move that wins at once when there is one; otherwise it avoids the
moves that let the opponent win with their reply, and picks at random among
what is left.  Run it as ``python -m bots.greedy``.

Options (the ``options`` mapping of ``hello``): ``seed`` (int) replaces the
arena's per-game seed, so every game this bot plays uses the same seed.
"""

from __future__ import annotations

import json
import random
import sys
import traceback
from typing import Any, TextIO

import engine

__all__ = ["choose_move", "main"]

# Ranks of the moves that do not win at once, best first.  "Safe" also covers
# a move that ends the game in a draw: it cannot lose.
_SAFE, _ALLOWS_WIN, _LOSES = 2, 1, 0


def _winner(game: engine.Game[Any], state: Any) -> int | None:
    outcome = game.outcome(state)
    return None if outcome is None else outcome.winner


def _rank(game: engine.Game[Any], after: Any, me: int) -> int:
    """How good the position ``after`` (just after one of ``me``'s moves) is."""
    if game.is_over(after):
        # Only YOXII can end in a loss for the mover (the totem is blocked and
        # the scores favour the opponent); OXONO ends on the mover's row or in a draw.
        return _SAFE if _winner(game, after) is None else _LOSES
    for reply in game.legal_moves(after):
        if _winner(game, game.apply(after, reply)) not in (None, me):
            return _ALLOWS_WIN
    return _SAFE


def choose_move(game: engine.Game[Any], state: Any, moves: list[str], rng: random.Random) -> str:
    """The greedy choice among ``moves`` (legal in ``state``): a random immediate
    win if any, else a random move that gives the opponent no winning reply,
    else a random move that does not lose at once, else any move.

    Deterministic for a given ``rng`` state and order of ``moves``.
    """
    me = game.to_move(state)
    afters = [game.apply(state, move) for move in moves]
    wins = [move for move, after in zip(moves, afters) if _winner(game, after) == me]
    if wins:
        return rng.choice(wins)
    ranks = [_rank(game, after, me) for after in afters]
    best = max(ranks)
    return rng.choice([move for move, rank in zip(moves, ranks) if rank == best])


def _send(out: TextIO, message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def main(stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> None:
    """Speak the bot protocol on ``stdin``/``stdout`` until ``quit`` or end of input."""
    game_name = ""
    seed_option: int | None = None
    rng = random.Random()
    for line in stdin:
        message = json.loads(line)
        kind = message.get("type")
        try:
            if kind == "hello":
                game_name = message["game"]
                engine.get_game(game_name)  # an unknown game is refused here, before any game starts
                option = (message.get("options") or {}).get("seed")
                seed_option = option if isinstance(option, int) else None
                _send(stdout, {"type": "ready", "name": "Greedy", "version": "1.0", "author": "Totem Arena"})
            elif kind == "new_game":
                # No answer is allowed here, so a problem with the game surfaces at the first turn.
                game_name = message.get("game", game_name)
                rng = random.Random(seed_option if seed_option is not None else message.get("seed"))
            elif kind == "turn":
                game = engine.get_game(game_name)
                state = game.from_json(message["state"])
                _send(stdout, {"type": "move", "move": choose_move(game, state, message["legal_moves"], rng)})
            elif kind == "quit":
                return
        except Exception as exc:  # giving up with a reason beats crashing without one
            traceback.print_exc(file=sys.stderr)
            _send(stdout, {"type": "error", "message": f"greedy: {exc}"})


if __name__ == "__main__":
    main()
