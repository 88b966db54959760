"""Game pairs: the unit every format schedules.  A game pair is two games
between the same two bots on the same opening, each bot on seat 0 once, so
neither gains from the colours or the opening.  This module is the one
place that names the games of a pair and gives each its seed and opening.

A pair's games are ``r<round>-<a>~<b>-g<k>`` (the names in order); its
``j``-th game pair (from 0) holds games ``k = 2j+1`` and ``2j+2``.  A
result-dependent round plays opening ``(round - 1 + j) mod len(suite)``,
every pairing of a round on the same one, each round on the next.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from arena.formats.competition import Competition
from arena.game.openings import Opening
from arena.game.records import GameSpec, game_id, pair_id

__all__ = ["add_game_pair", "game_ids", "game_seed", "pair_game", "round_opening"]


def game_seed(tournament_seed: int, game_id: str) -> int:
    """The seed of one game: the first 4 bytes of the SHA-256 of
    ``"<tournament seed>:<game id>"`` as a big-endian integer, top bit cleared
    (so ``0 <= seed < 2**31``).  Stable across processes and Python versions,
    unlike ``hash()``."""
    digest = hashlib.sha256(f"{tournament_seed}:{game_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFF_FFFF


def game_ids(round_: int, a: str, b: str, pairs: int) -> list[str]:
    """The ids of the first ``pairs`` game pairs of ``a`` and ``b`` in a round."""
    first, second = sorted((a, b))
    return [game_id(round_, pair_id(first, second), k) for k in range(1, 2 * pairs + 1)]


def round_opening(suite: Sequence[Opening], round_: int, j: int) -> Opening:
    """The opening of game pair ``j`` (from 0) of a pairing in a result-dependent round."""
    return suite[(round_ - 1 + j) % len(suite)]


def add_game_pair(specs: list[GameSpec], competition: Competition, round_: int, label: str, players: tuple[str, str],
                  opening: Opening, j: int, versions: Mapping[str, str] | None) -> None:
    """Append game pair ``j`` (from 0) of a pair to ``specs``: games
    ``r<round>-<label>-g<2j+1>`` and ``g<2j+2>`` on ``opening``,
    ``players[0]`` on seat 0 in the first and ``players[1]`` in the second,
    each with its seed, the pair's number and the bots' ``versions``."""
    for seat in (0, 1):
        specs.append(pair_game(competition, round_, label, players, opening, j, seat, len(specs), versions))


def pair_game(competition: Competition, round_: int, label: str, players: tuple[str, str], opening: Opening, j: int,
              seat: int, index: int = 0, versions: Mapping[str, str] | None = None) -> GameSpec:
    """Game ``seat`` (0 or 1) of game pair ``j`` of a pair (see
    :func:`add_game_pair`), at ``index`` in its schedule."""
    a, b = players
    seats = (a, b) if seat == 0 else (b, a)
    this = game_id(round_, label, 2 * j + 1 + seat)
    return GameSpec(
        index=index,
        game_id=this,
        game=competition.game,
        round=round_,
        players=seats,
        opening=opening.start,
        seed=game_seed(competition.seed, this),
        pair=index // 2,
        opening_moves=opening.moves,
        versions=(versions[seats[0]], versions[seats[1]]) if versions else (),
    )
