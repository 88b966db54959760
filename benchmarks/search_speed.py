"""Search speed of the reference bots: alpha-beta nodes per second and MCTS
playouts per second, per game, on one core.

    python benchmarks/search_speed.py                 # both games, 1 s per position
    python benchmarks/search_speed.py --game yoxii --seconds 3

Each bot searches the same positions (the start, and positions after 6 and
14 random plies, for a few seeds) for a fixed time, in this process; the
rates are per second of CPU time, so other work on the machine does not
lower them.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine  # noqa: E402
from bots.alphabeta import AlphaBeta  # noqa: E402
from bots.harness import Deadline  # noqa: E402
from bots.mcts import MCTS  # noqa: E402


def positions(game: engine.Game, seeds: int = 3) -> list:
    found = []
    for seed in range(seeds):
        rng = random.Random(seed)
        state = game.new_state(seed=seed)
        for plies in range(15):
            if plies in (0, 6, 14) and not game.is_over(state):
                found.append(state)
            if game.is_over(state):
                break
            state = game.apply(state, rng.choice(game.legal_moves(state)))
    return found


def measure(bot_class, game: engine.Game, states: list, seconds: float) -> tuple[float, str]:
    count = 0
    spent = 0.0
    for state in states:
        bot = bot_class(game, {})
        bot.new_game(1)
        cpu = time.process_time()
        started = time.monotonic()
        _, info = bot.choose(state, game.legal_moves(state), None, Deadline(started, seconds, seconds))
        # Per second of this process's CPU time: the figure holds on a busy machine.
        spent += time.process_time() - cpu
        count += info.get("iterations", info.get("nodes", 0))
    return count / spent, "playouts/s" if bot_class is MCTS else "nodes/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=engine.GAMES, action="append")
    parser.add_argument("--seconds", type=float, default=1.0, help="search time per position")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 0.05
    print(f"{'game':<6} {'bot':<10} {'speed':>10}  unit  ({args.seconds:g} s per position)")
    for name in args.game or engine.GAMES:
        game = engine.get_game(name)
        states = positions(game)
        for bot_class in (AlphaBeta, MCTS):
            rate, unit = measure(bot_class, game, states, args.seconds)
            print(f"{name:<6} {bot_class.name.lower():<10} {rate:>10,.0f}  {unit}", flush=True)


if __name__ == "__main__":
    main()
