"""Rules engines for OXONO and YOXII.

Pure rules: no I/O, no processes, no randomness beyond the seed handed to
``new_state``.  Every game has the same interface (:class:`Game`), modelled on
OpenSpiel's game/state split: the game object is stateless and shared, states
are immutable values that ``apply`` turns into new states.

    >>> import engine
    >>> game = engine.get_game("oxono")
    >>> state = game.new_state(seed=0)
    >>> len(game.legal_moves(state))
    68
    >>> state = game.apply(state, game.legal_moves(state)[0])
    >>> game.to_move(state)
    1
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = [
    "GAMES",
    "Game",
    "IllegalMove",
    "InvalidState",
    "Outcome",
    "get_game",
]


class IllegalMove(ValueError):
    """A move string that is malformed or not legal in the position; the message says why."""


class InvalidState(ValueError):
    """A state object (``from_json``) that is malformed or inconsistent; the message says why."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended.

    ``winner`` is the winning seat (0 or 1) or ``None`` for a draw.  ``reason`` is
    the rule that ended it (``alignment``, ``exhausted``, ``blocked``).  ``scores``
    holds both seats' totals in YOXII and is ``None`` in OXONO.
    """

    winner: int | None
    reason: str
    scores: tuple[int, int] | None = None


S = TypeVar("S")


class Game(ABC, Generic[S]):
    """The interface both games implement.  States are immutable values."""

    #: Short lowercase name used in tournament files and the protocol.
    name: str
    #: Colour names by seat; seat 0 moves first.
    colors: tuple[str, str]
    #: Number of distinct start positions (OXONO: 2 totem placements, YOXII: 1).
    openings: int
    #: The most plies any game can last (OpenSpiel's ``MaxGameLength``):
    #: OXONO 32, YOXII 36.
    max_game_length: int
    #: The first letter of each seat's piece codes on the state object's
    #: board, by seat; a totem's code starts with ``T`` in every game.
    piece_letters: tuple[str, str]
    #: What the board's cell codes stand for, in one line.
    cell_legend: str

    @abstractmethod
    def new_state(self, seed: int = 0, opening: int | None = None) -> S:
        """The start position.  ``opening`` picks one of the ``openings`` start
        positions; when it is ``None`` the seed draws it."""

    @abstractmethod
    def legal_moves(self, state: S) -> list[str]:
        """Every legal move once, in the notation of the rules; empty when the game is over."""

    @abstractmethod
    def apply(self, state: S, move: str) -> S:
        """The state after ``move``.  Raises :class:`IllegalMove` saying why when the
        move is malformed, illegal, or the game is over."""

    @abstractmethod
    def normalise_move(self, text: str) -> str:
        """A move as a person may type it, in the exact notation :meth:`apply`
        accepts: white space collapsed to single spaces and letters in the
        case the rules write them.  Whether the move is legal is not checked."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """``None`` while the game runs."""

    @abstractmethod
    def to_move(self, state: S) -> int:
        """The seat (0 or 1) whose turn it is."""

    @abstractmethod
    def ply(self, state: S) -> int:
        """Number of moves played so far."""

    @abstractmethod
    def to_json(self, state: S) -> dict[str, Any]:
        """The protocol's state object."""

    def to_json_text(self, state: S) -> str:
        """:meth:`to_json` as compact JSON text (``json.dumps`` with
        ``separators=(",", ":")``).  The arena sends one every ply, so the
        games override this with a faster equivalent built from their bitboards."""
        return json.dumps(self.to_json(state), separators=(",", ":"))

    @abstractmethod
    def from_json(self, data: dict[str, Any]) -> S:
        """The inverse of :meth:`to_json`; raises :class:`InvalidState` on inconsistent input."""

    @abstractmethod
    def render(self, state: S) -> str:
        """A readable text board for terminals and logs."""

    def opening_of(self, seed: int) -> int:
        """The start position a seed draws (a stable function of the seed)."""
        # A multiplicative hash rather than ``seed % openings`` so that
        # consecutive seeds do not simply alternate.
        return ((seed * 0x9E3779B97F4A7C15) >> 32) % self.openings

    def tally(self, state: S) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """In a game decided by the pieces next to the totem (YOXII), what the
        rules would count there were the game to end now: ``(total, pieces)``
        by seat, the values of the seat's pieces next to the totem and how
        many they are.  ``None`` in a game decided otherwise (OXONO)."""
        return None

    def is_over(self, state: S) -> bool:
        return self.outcome(state) is not None

    def __repr__(self) -> str:
        return f"<engine game {self.name!r}>"


def _registry() -> dict[str, Game[Any]]:
    from engine.oxono import Oxono
    from engine.yoxii import Yoxii

    return {"oxono": Oxono(), "yoxii": Yoxii()}


_GAMES = _registry()

#: The names :func:`get_game` accepts.
GAMES: tuple[str, ...] = tuple(_GAMES)


def get_game(name: str) -> Game[Any]:
    """The game called ``name`` (case-insensitive); a clear ``ValueError`` lists the names when unknown."""
    try:
        return _GAMES[name.strip().lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(GAMES)}") from None
