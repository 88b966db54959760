"""Random-playout speed of the rules engines, on one core.

Every ply generates the full legal-move list and plays a random entry of it,
the way a simple playout bot (or MCTS rollout) uses the engine:

    python benchmarks/engine_speed.py                 # every game, 3 s each
    python benchmarks/engine_speed.py --game oxono --seconds 10

Prints games/s and plies/s per game, plus how the random games ended (a quick
sanity check: the mix of results should be stable from run to run).
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from dataclasses import dataclass

import engine


@dataclass
class Measurement:
    game: str
    games: int
    plies: int
    seconds: float
    results: Counter[str]

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds

    @property
    def plies_per_second(self) -> float:
        return self.plies / self.seconds


def playouts(name: str, seconds: float, seed: int = 0) -> Measurement:
    """Play random games of ``name`` for about ``seconds`` and count them."""
    game = engine.get_game(name)
    rng = random.Random(seed)
    legal_moves, apply, outcome = game.legal_moves, game.apply, game.outcome
    games = plies = 0
    results: Counter[str] = Counter()
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.new_state(seed=games)
        while (result := outcome(state)) is None:
            state = apply(state, rng.choice(legal_moves(state)))
        games += 1
        plies += game.ply(state)
        winner = "draw" if result.winner is None else game.colors[result.winner]
        results[f"{winner} ({result.reason})"] += 1
    return Measurement(name, games, plies, time.perf_counter() - start, results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per game (default 3)")
    parser.add_argument("--game", choices=engine.GAMES, help="measure one game only")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 0.2
    for name in [args.game] if args.game else engine.GAMES:
        playouts(name, min(0.2, args.seconds))  # warm the engine's caches first
        m = playouts(name, args.seconds)
        print(
            f"{m.game:6}  {m.games_per_second:9,.0f} games/s  {m.plies_per_second:10,.0f} plies/s  "
            f"{m.plies / m.games:5.1f} plies/game  ({m.games:,} games in {m.seconds:.1f} s)"
        )
        mix = ", ".join(f"{k} {v / m.games:.1%}" for k, v in sorted(m.results.items()))
        print(f"        results: {mix}")


if __name__ == "__main__":
    main()
