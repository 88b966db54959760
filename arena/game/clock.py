"""Time controls and the chess clock a referee keeps during one game."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MARGIN_MS", "MAX_CLOCK_MS", "TimeControl", "Clock", "parse_time_control"]

#: The longest time a control may give (ms): what a game record holds
#: (below 2**31, some 24 days), far below what a timer overflows at.
MAX_CLOCK_MS = 2**31 - 1
#: Milliseconds the arena grants each move beyond the clock by default (a tournament's ``time_margin``):
#: the time a line takes through the pipe and the scheduler is not the bot's.
MARGIN_MS = 50


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Either a chess clock (``initial_ms`` + ``increment_ms`` after each move)
    or a fixed budget for every move (``per_move_ms``)."""

    initial_ms: int = 0
    increment_ms: int = 0
    per_move_ms: int | None = None

    def __post_init__(self) -> None:
        if max(self.initial_ms, self.increment_ms, self.per_move_ms or 0) > MAX_CLOCK_MS:
            raise ValueError(f"a time control may give at most {MAX_CLOCK_MS // 1000:,} seconds (some 24 days)")
        if self.per_move_ms is not None:
            if self.per_move_ms <= 0:
                raise ValueError("the time per move must be positive")
        elif self.initial_ms <= 0 or self.increment_ms < 0:
            raise ValueError("the initial time must be positive and the increment not negative")

    def to_json(self) -> dict[str, int]:
        """The protocol's ``time_control`` object."""
        if self.per_move_ms is not None:
            return {"per_move_ms": self.per_move_ms}
        return {"initial_ms": self.initial_ms, "increment_ms": self.increment_ms}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TimeControl:
        if "per_move_ms" in data:
            return cls(per_move_ms=int(data["per_move_ms"]))
        return cls(initial_ms=int(data["initial_ms"]), increment_ms=int(data.get("increment_ms", 0)))

    def __str__(self) -> str:
        if self.per_move_ms is not None:
            return f"move {_seconds(self.per_move_ms)}"
        return f"{_seconds(self.initial_ms)}+{_seconds(self.increment_ms)}"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g}"


_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"
_CHESS_CLOCK = re.compile(rf"^\s*{_NUMBER}\s*(?:\+\s*{_NUMBER})?\s*$")
_PER_MOVE = re.compile(rf"^\s*move\s+{_NUMBER}\s*$", re.IGNORECASE)


def parse_time_control(text: str | int | float) -> TimeControl:
    """Parse ``"5+0.1"`` (seconds, initial+increment), ``"10"`` (no increment)
    or ``"move 0.5"`` (seconds per move).  Raises ``ValueError`` saying what is wrong."""
    if isinstance(text, bool):
        raise ValueError(f"bad time control {text!r}")
    if isinstance(text, (int, float)):
        text = str(text)
    if not isinstance(text, str):
        raise ValueError(f"bad time control {text!r}: write '5+0.1' or 'move 0.5'")
    if m := _PER_MOVE.match(text):
        return TimeControl(per_move_ms=_ms(m.group(1)))
    if m := _CHESS_CLOCK.match(text):
        return TimeControl(initial_ms=_ms(m.group(1)), increment_ms=_ms(m.group(2) or "0"))
    raise ValueError(f"bad time control {text!r}: write '5+0.1' (seconds, initial+increment) or 'move 0.5'")


def _ms(seconds: str) -> int:
    value = float(seconds) * 1000
    if value > MAX_CLOCK_MS:  # before rounding: 1e400 seconds is an infinity, which no integer holds
        raise ValueError(f"{seconds[:30]} seconds: a time control may give at most {MAX_CLOCK_MS // 1000:,} seconds (some 24 days)")
    return round(value)


class Clock:
    """Both players' remaining time during one game.  The referee measures each
    move and charges it here; the clock decides whether the flag fell.  Each
    seat has its own time control when given two (time odds), else both have
    ``controls``.  A remote bot's seat has a network margin too
    (:attr:`network_ms`), granted on each move like the arena's margin."""

    def __init__(self, controls: TimeControl | Sequence[TimeControl], margin_ms: int = MARGIN_MS) -> None:
        self.controls = (controls, controls) if isinstance(controls, TimeControl) else (controls[0], controls[1])
        self.margin_ms = margin_ms
        self.remaining_ms = [float(_start_ms(control)) for control in self.controls]
        self.network_ms = [0.0, 0.0]

    def budget_ms(self, seat: int) -> float:
        """How long ``seat`` may think now before losing on time (margins included)."""
        return max(0.0, self.remaining_ms[seat]) + self.margin_ms + self.network_ms[seat]

    def charge(self, seat: int, elapsed_ms: float) -> bool:
        """Charge a move's time; ``False`` when it came too late (the flag fell)."""
        if elapsed_ms > self.budget_ms(seat):
            return False
        control = self.controls[seat]
        if control.per_move_ms is None:
            self.remaining_ms[seat] = max(0.0, self.remaining_ms[seat] - elapsed_ms) + control.increment_ms
        return True

    def to_json(self, seat: int) -> dict[str, int]:
        """The protocol's ``clock`` object for the player on ``seat``."""
        control = self.controls[seat]
        if control.per_move_ms is not None:
            return {"remaining_ms": control.per_move_ms}
        return {
            "remaining_ms": int(self.remaining_ms[seat]),
            "opponent_ms": int(self.remaining_ms[1 - seat]),
            "increment_ms": control.increment_ms,
        }

    def to_json_text(self, seat: int) -> str:
        """:meth:`to_json` as compact JSON text, built directly (every ply)."""
        control = self.controls[seat]
        if control.per_move_ms is not None:
            return f'{{"remaining_ms":{control.per_move_ms}}}'
        remaining = self.remaining_ms
        return (
            f'{{"remaining_ms":{int(remaining[seat])},"opponent_ms":{int(remaining[1 - seat])},'
            f'"increment_ms":{control.increment_ms}}}'
        )


def _start_ms(control: TimeControl) -> int:
    return control.per_move_ms if control.per_move_ms is not None else control.initial_ms
