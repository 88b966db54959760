"""Checks of the fields of a JSON file the arena wrote and reads back as
untrusted input (anyone may edit ``tournament.json``): each takes a value
and where it is (``bots[2].name``) and returns the value, or refuses it
with one line naming that place and the value, as ``error`` (a
``ValueError``; a reader passes its own kind)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["listed", "mapping", "short", "text", "whole"]


def short(value: Any) -> str:
    """``value`` as an error shows it: its repr, cut short."""
    return repr(value)[:60]


def mapping(value: Any, where: str, *, error: type[ValueError] = ValueError) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise error(f"{where}: must be a mapping, got {short(value)}")
    return value


def listed(value: Any, where: str, *, error: type[ValueError] = ValueError) -> list[Any]:
    if not isinstance(value, list):
        raise error(f"{where}: must be a list, got {short(value)}")
    return value


def text(value: Any, where: str, *, limit: int, error: type[ValueError] = ValueError) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise error(f"{where}: must be a string of at most {limit} characters, got {short(value)}")
    return value


def whole(value: Any, where: str, low: int, high: int, *, error: type[ValueError] = ValueError) -> int:
    """A whole number from ``low`` to ``high``; a float without a fraction counts (JSON may write 3.0)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise error(f"{where}: must be a whole number from {low} to {high}, got {short(value)}")
    return value
