"""The schedule: which bots play which games, on which seat and start position.

A pure function of the configuration, so a rerun (or another process)
rebuilds exactly the same list, and results can be matched to it by game id.

Each round, every pairing meets on every opening twice, back to back, once
with each bot on seat 0 (which moves first): a **game pair**, so no bot
gains from colours or openings.  The openings are the tournament's suite
(``openings:``, see :mod:`arena.game.openings`) or, without one, the game's start
positions.  Pairings are taken in file order: round-robin plays every pair
``(i, j)`` with ``i < j``; gauntlet plays the first bot against each other one.
"""

from __future__ import annotations

import hashlib

import engine
from arena.game.openings import Opening
from arena.game.records import GameSpec
from arena.run.config import TournamentConfig

__all__ = ["game_seed", "make_schedule", "pairings"]


def game_seed(tournament_seed: int, game_id: str) -> int:
    """The seed of one game: the first 4 bytes of the SHA-256 of
    ``"<tournament seed>:<game id>"`` as a big-endian integer, top bit cleared
    (so ``0 <= seed < 2**31``).  Stable across processes and Python versions,
    unlike ``hash()``."""
    digest = hashlib.sha256(f"{tournament_seed}:{game_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFF_FFFF


def pairings(bot_count: int, format: str) -> list[tuple[int, int]]:
    """The pairs of bot positions (in file order) that meet each round."""
    if format == "gauntlet":
        return [(0, j) for j in range(1, bot_count)]
    if format == "round-robin":
        return [(i, j) for i in range(bot_count) for j in range(i + 1, bot_count)]
    raise ValueError(f"unknown format {format!r}")


def make_schedule(config: TournamentConfig) -> list[GameSpec]:
    """Every game of the tournament in playing order: round by round, pair by
    pair; within a pair, opening by opening, first bot on seat 0 then second.
    Game ids read ``r<round>-p<pair>-g<k>``, with the pair numbered from 1 in
    pairing order and ``k`` from 1 within the pair and round."""
    openings = config.openings or [Opening(start, ()) for start in range(engine.get_game(config.game).openings)]
    names = [bot.name for bot in config.bots]
    specs: list[GameSpec] = []
    for round_ in range(1, config.rounds + 1):
        for pair, (i, j) in enumerate(pairings(len(names), config.format), start=1):
            k = 0
            for opening in openings:
                for players in ((names[i], names[j]), (names[j], names[i])):
                    k += 1
                    game_id = f"r{round_}-p{pair}-g{k}"
                    specs.append(
                        GameSpec(
                            index=len(specs),
                            game_id=game_id,
                            game=config.game,
                            round=round_,
                            players=players,
                            opening=opening.start,
                            seed=game_seed(config.seed, game_id),
                            pair=len(specs) // 2,
                            opening_moves=opening.moves,
                        )
                    )
    return specs
