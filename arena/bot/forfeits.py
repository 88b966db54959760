"""Why a bot loses a game other than on the board: the reasons a record
may give, and the exception that carries one from where a bot misbehaved
to the referee."""

from __future__ import annotations

from arena.base.text import clean_text

__all__ = ["FORFEIT_REASONS", "Forfeit", "MAX_DETAIL_CHARS", "UNPLAYED_FORFEITS"]

#: The longest text a bot can get into a record's ``detail``.
MAX_DETAIL_CHARS = 1000

#: Why a bot can lose a game other than by the rules, as recorded in game records.
#: ``withdrawn``: the bot was withdrawn (by the organiser, ``withdrawn:``, or by
#: the arena after it crashed too many games in a row, ``withdraw_after_crashes``)
#: and its later games were recorded unplayed; ``disqualified``: a game of a
#: disqualified bot, scored as its loss (``disqualified:``); ``disconnected``: a
#: remote bot (:mod:`arena.bot.remote`) lost its connection in a game and did
#: not come back within ``reconnect_s``.
FORFEIT_REASONS = ("timeout", "illegal_move", "protocol_error", "crash", "startup_failure", "bot_error", "withdrawn",
                   "disqualified", "disconnected")
#: The forfeits of a game the bot never played (it did not start, or was
#: withdrawn): not a result of its play.
UNPLAYED_FORFEITS = ("startup_failure", "withdrawn", "disqualified")


class Forfeit(Exception):
    """A bot lost the game by misbehaving; ``reason`` is one of ``FORFEIT_REASONS``."""

    def __init__(self, reason: str, detail: str, *, waited_ms: float | None = None) -> None:
        assert reason in FORFEIT_REASONS, reason
        # The detail quotes what a bot sent or wrote, and is printed to the
        # organiser (the pre-flight's error, arena check, arena play) as
        # well as stored: one bounded, printable line from here on.
        detail = clean_text(detail, MAX_DETAIL_CHARS)
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        #: For a timeout: how long the arena waited for the move.
        self.waited_ms = waited_ms
