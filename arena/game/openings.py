"""Opening suites: the positions every pair of bots starts its games from.

Without a suite, two deterministic bots replay the same few games (OXONO has
2 start positions, YOXII 1).  A suite gives each game pair its own position:
every pair of bots plays every opening twice, colours swapped.

A suite is either drawn from the tournament seed (:func:`random_suite`:
random legal moves from the start positions, OXONO's two starts in turn,
never a finished game and never a position the side to move wins at once) or
read from a file (:func:`load_suite`), each move checked against the engine.

The file format is one opening a line, moves separated by commas (an OXONO
move holds a space: ``Xc4 c3, Od5 d6``).  A line may begin with the start
position and a colon, ``1: Xc4 c3, Od5 d6`` (OXONO's start 1 has the totems
swapped); without it the start position is 0.  Empty lines and lines starting
with ``#`` are skipped.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine

__all__ = [
    "Opening",
    "OpeningError",
    "random_suite",
    "load_suite",
    "parse_suite",
    "play_opening",
    "suite_digest",
]

#: Draws per opening before a suite with too few distinct openings is refused.
_ATTEMPTS_PER_OPENING = 50


class OpeningError(ValueError):
    """A suite that cannot be used; ``line`` is the file's line (from 1) when there is one."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


@dataclass(frozen=True)
class Opening:
    """A start position (``Game.new_state``'s ``opening``) and the moves played from it."""

    start: int
    moves: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.start}: {', '.join(self.moves)}"


def play_opening(game: engine.Game[Any], start: int, moves: Iterable[str]) -> Any:
    """The position a game begins from: start position ``start`` after an
    opening's ``moves``, as the referee builds it and replays rebuild it.
    Raises ``IllegalMove``."""
    state = game.new_state(opening=start)
    for move in moves:
        state = game.apply(state, move)
    return state


def _wins_at_once(game: engine.Game[Any], state: Any) -> bool:
    me = game.to_move(state)
    for move in game.legal_moves(state):
        outcome = game.outcome(game.apply(state, move))
        if outcome is not None and outcome.winner == me:
            return True
    return False


def random_suite(game_name: str, plies: int, count: int, seed: int) -> tuple[Opening, ...]:
    """``count`` distinct openings of ``plies`` random legal moves, drawn from
    ``seed`` (the same seed gives the same suite on any machine), the start
    positions taken in turn.  No opening ends the game or leaves the side to
    move a win in one.  ``OpeningError`` when the game has too few such
    openings of that length."""
    if plies < 0 or count < 1:
        raise OpeningError(f"need plies >= 0 and count >= 1, got plies={plies}, count={count}")
    game = engine.get_game(game_name)
    rng = random.Random(f"openings:{game_name}:{seed}")
    suite: dict[Opening, None] = {}
    repeats = 0  # playable openings drawn again: too few of this length exist
    for attempt in range(_ATTEMPTS_PER_OPENING * count):
        if len(suite) == count:
            break
        start = len(suite) % game.openings
        state = game.new_state(opening=start)
        moves = []
        for _ in range(plies):
            legal = game.legal_moves(state)
            if not legal:
                break
            move = rng.choice(legal)
            moves.append(move)
            state = game.apply(state, move)
        if len(moves) == plies and not game.is_over(state) and not _wins_at_once(game, state):
            opening = Opening(start, tuple(moves))
            repeats += opening in suite
            suite.setdefault(opening)
    if len(suite) < count:
        # Few distinct ones: longer openings are more varied.  Few playable
        # ones: long random openings end the game or leave a win in one.
        advice = "longer" if repeats else "shorter"
        raise OpeningError(
            f"found only {len(suite)} distinct playable openings of {plies} plies in {game_name}, "
            f"not {count}: ask for fewer, or {advice} ones"
        )
    return tuple(suite)


def load_suite(path: Path, game_name: str) -> tuple[Opening, ...]:
    """Read and check a suite file.  ``OpeningError`` names the line at fault."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise OpeningError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise OpeningError(f"cannot read the file: {exc.strerror or exc}") from None
    return parse_suite(text.splitlines(), game_name)


def parse_suite(lines: Sequence[str], game_name: str) -> tuple[Opening, ...]:
    """Check an opening suite's lines (see the module's doc for the format)."""
    game = engine.get_game(game_name)
    suite: list[Opening] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        start, colon, rest = line.partition(":")
        if colon and start.strip().isdigit():
            start_position, line = int(start), rest
            if start_position >= game.openings:
                raise OpeningError(
                    f"start position {start_position}: {game_name} has {game.openings} "
                    f"(0{' or 1' if game.openings == 2 else ''})",
                    number,
                )
        else:
            start_position = 0
        moves = tuple(" ".join(m.split()) for m in line.split(",")) if line.strip() else ()
        state = game.new_state(opening=start_position)
        for ply, move in enumerate(moves, start=1):
            try:
                state = game.apply(state, move)
            except engine.IllegalMove as exc:
                raise OpeningError(f"move {ply} {move!r} is not legal: {exc}", number) from None
        if game.is_over(state):
            raise OpeningError(f"the opening ends the game after {len(moves)} moves; nothing is left to play", number)
        suite.append(Opening(start_position, moves))
    if not suite:
        raise OpeningError("the file holds no opening (one a line, moves separated by commas)")
    return tuple(suite)


def suite_digest(suite: Sequence[Opening]) -> str:
    """A short fingerprint of a suite, so a resumed tournament notices another one."""
    text = "\n".join(str(opening) for opening in suite)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
