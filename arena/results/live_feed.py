"""The live feed: the games in progress, for ``arena serve``.

The results directory holds one small file per slot, ``DIR/live/<slot>.json``:
the game the slot plays now, its moves and both clocks (a few hundred bytes).
:class:`LiveFeed` replaces it atomically after a move (at most every
:data:`WRITE_EVERY_S`, so a fast game costs a few writes a second, not one
per move) and removes it when the game ends.  A local worker writes its own;
a Ray actor, whose node may not see the results directory, only holds its
game (``LiveFeed(None, ...)``), and the driver asks for it and writes it
(:meth:`LiveFeed.publish`).  A reader (:func:`read_live_games`) polls the
folder; it works from any process, during a run or after it.

The files sit in a results directory, which anyone may have edited: every one
is read bounded, its fields checked, and its moves replayed through the
engine, so a forged file is skipped, never shown as it claims.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from arena.base import safe_files
from arena.game.openings import play_opening
from arena.game.records import MoveRecord
from arena.game.referee import Referee
from arena.results.report.data import INFO_CHARS, info_text

__all__ = ["LIVE_DIR", "WRITE_EVERY_S", "LiveFeed", "LiveGame", "board_cells", "infos_by_seat", "last_infos",
           "read_live_games", "touched"]

#: The folder of the live files in a results directory.
LIVE_DIR = "live"
#: Least seconds between two writes of one slot's file: a page a few moves
#: behind a fast game is still within a second of it.
WRITE_EVERY_S = 0.2
#: Larger live files are not read: a real one holds a few hundred bytes.
MAX_LIVE_BYTES = 16_384
#: Most live files read: more slots than any machine has workers.
MAX_SLOTS = 256
_MAX_PLIES = 400
#: A live file is written within a fraction of a second of its move; a day is no file this code wrote.
_MAX_THINKING_MS = 86_400_000


class LiveFeed:
    """One slot's game in progress, and its live file.

    The game loop only hands over the referee (:meth:`move`, a few
    microseconds); a thread of the feed writes the game as it is then, at
    most every ``interval_s``, so the last move of a burst is on file within
    that time even when the next one is long in coming.  With no
    ``directory`` nothing is written: the game is held for :meth:`snapshot`.
    A write that fails (disk full, folder removed) never stops the game: the
    feed goes quiet for the rest of the run."""

    def __init__(self, directory: Path | None, slot: str, interval_s: float = WRITE_EVERY_S) -> None:
        self.directory = directory
        self.name = f"{slot}.json"
        self.interval_s = interval_s
        self.broken = False
        self._referee: Referee | None = None
        #: When the game last moved (monotonic): a reader counts the clock down from there.
        self._moved = 0.0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._dir_fd: int | None = None
        # Whether the slot's file may be there: at first, one a run killed
        # mid-game left.  Most games end before their file is first written
        # (an instant game takes less than ``interval_s``): none to remove.
        self._on_file = True

    def move(self, referee: Referee) -> None:
        """The game of ``referee`` moved (or started): publish it soon."""
        self._referee = referee
        self._moved = time.monotonic()
        if self.directory is None or self.broken:
            return
        if self._thread is None:  # started here, in the process that plays: a thread does not survive a fork
            self._thread = threading.Thread(target=self._write_when_woken, name="arena-live-feed", daemon=True)
            self._thread.start()
        if not self._wake.is_set():  # set by an earlier move while the thread sleeps: every move of a burst
            self._wake.set()

    def end(self) -> None:
        """The game is over: its record is in the results, not here."""
        with self._lock:
            self._referee = None
            self._remove()

    def close(self) -> None:
        """:meth:`end`, and let go of the live folder (a feed that does not
        last as long as its process: the run's relay, a killed worker's)."""
        self.end()
        with self._lock:
            if self._dir_fd is not None:
                os.close(self._dir_fd)
                self._dir_fd = None

    def snapshot(self) -> bytes | None:
        """The live file of the game in progress, None between games."""
        referee = self._referee
        return _encode(referee, self._moved) if referee is not None else None

    def publish(self, data: bytes | None) -> None:
        """Write ``data`` (a :meth:`snapshot` of another process's feed) as
        this slot's file; None removes it."""
        with self._lock:
            if data is None:
                self._remove()
            elif not self.broken:
                self._write(data)

    def _write_when_woken(self) -> None:
        while not self.broken:
            self._wake.wait()
            self._wake.clear()
            with self._lock:
                referee = self._referee
                if referee is not None:
                    self._write(_encode(referee, self._moved))
            time.sleep(self.interval_s)

    def _remove(self) -> None:
        if not self._on_file:
            return
        try:
            os.unlink(self.name, dir_fd=self._directory_fd(make=False))
        except FileNotFoundError:
            pass
        except OSError:
            return  # tried again at the end of the next game
        self._on_file = False

    def _directory_fd(self, make: bool) -> int:
        """The live folder, opened once (never through a link)."""
        if self._dir_fd is None:
            if self.directory is None:
                raise FileNotFoundError("no live folder")
            if make:
                os.makedirs(self.directory, exist_ok=True)
            self._dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        return self._dir_fd

    def _write(self, data: bytes) -> None:
        tmp = f".{self.name}.tmp"
        try:
            folder = self._directory_fd(make=True)
            # Made anew (O_EXCL): whatever was planted at its name is never written through.
            try:
                os.unlink(tmp, dir_fd=folder)
            except FileNotFoundError:
                pass
            # Not synced to disk: a live file is worth nothing after a crash.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            os.replace(tmp, self.name, src_dir_fd=folder, dst_dir_fd=folder)
            self._on_file = True
        except OSError:
            self.broken = True


def _encode(referee: Referee, moved: float) -> bytes:
    """The live file of ``referee``'s game, which last moved at ``moved``
    (monotonic).  How long ago it moved, not when: the file's reader has
    the time it was written by its own clock (a Ray node's may differ)."""
    record, clock = referee.record, referee.clock
    # The moves first: the game loop appends a move's record after the move, so the records read
    # next hold at least these moves' (never an info of a move the file does not hold).
    moves = list(referee.moves)
    data = {
        "id": record.game_id, "game": record.game, "round": record.round,
        "players": list(record.players.values()), "opening": record.opening,
        "opening_moves": list(record.opening_moves), "moves": moves,
        "clock_ms": [int(ms) for ms in list(clock.remaining_ms)],
        "per_move_ms": [control.per_move_ms for control in clock.controls],
        "thinking_ms": int((time.monotonic() - moved) * 1000),
        "infos": {str(ply): text for ply, text in last_infos(record.moves[:len(moves)]).items()},
    }
    return json.dumps(data, separators=(",", ":")).encode()


@dataclass(frozen=True)
class LiveGame:
    """A game in progress as a live file tells it, replayed through the engine."""

    game_id: str
    game: str
    round: int
    players: tuple[str, str]
    moves: tuple[str, ...]
    #: The board now, rank 1 first, one code per cell ("" for empty), as the report's viewer draws it.
    cells: tuple[str, ...]
    to_move: int
    clock_ms: tuple[int, int]
    per_move: bool
    #: When ``clock_ms`` held (seconds since the epoch, by the reader's clock): the side to move's runs down from there.
    clock_at: float = 0.0
    #: The cells the last move changed (indices into ``cells``), for the board to mark it.
    last: tuple[int, ...] = ()
    #: Each seat's last ``info`` (score, depth, ...), as the report's viewer shows it; None when it sent none.
    infos: tuple[str | None, str | None] = (None, None)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.game_id, "game": self.game, "round": self.round, "players": list(self.players),
                "moves": list(self.moves), "cells": list(self.cells), "to_move": self.to_move,
                "clock_ms": list(self.clock_ms), "per_move": self.per_move, "clock_at": self.clock_at,
                "last": list(self.last), "infos": list(self.infos)}


def read_live_games(results_dir: Path, recorded: Container[str] = (), since: float = 0.0) -> list[LiveGame]:
    """The games in progress in ``results_dir``, by game id, skipping those
    already ``recorded`` or written before ``since`` (files a killed worker
    or an earlier run left) and every file that is not a true game
    (unreadable, too big, a link, moves the rules refuse)."""
    try:
        names = sorted(os.listdir(results_dir / LIVE_DIR))[:MAX_SLOTS]
    except OSError:
        return []
    games: dict[str, LiveGame] = {}
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            written = os.stat(results_dir / LIVE_DIR / name, follow_symlinks=False).st_mtime
            if written < since:
                continue
            data = json.loads(safe_files.read_file(results_dir, Path(LIVE_DIR) / name, MAX_LIVE_BYTES))
            game = _live_game(data, written)
        # RecursionError: JSON nested deeper than the parser goes (a live file is two levels deep).
        except (OSError, ValueError, TypeError, KeyError, RecursionError, engine.IllegalMove):
            continue
        if game.game_id not in recorded:
            games[game.game_id] = game
    return [games[key] for key in sorted(games)]


def _live_game(data: Any, written: float) -> LiveGame:
    """Raises ValueError, TypeError, KeyError or IllegalMove for anything but a live file as :class:`LiveFeed` writes it."""
    if not isinstance(data, dict):
        raise ValueError("not an object")
    game_id, name, round_, players = data["id"], data["game"], data["round"], data["players"]
    opening, opening_moves, moves = data["opening"], data["opening_moves"], data["moves"]
    clock_ms, per_move, thinking_ms = data["clock_ms"], data["per_move_ms"], data.get("thinking_ms", 0)
    infos = data.get("infos", {})
    if not (isinstance(game_id, str) and 0 < len(game_id) <= 200 and name in engine.GAMES
            and type(round_) is int and type(opening) is int
            and isinstance(players, list) and len(players) == 2 and _strings(players, 2, 200) and _strings(opening_moves, _MAX_PLIES, 40) and _strings(moves, _MAX_PLIES, 40)
            and isinstance(clock_ms, list) and len(clock_ms) == 2 and all(type(ms) is int for ms in clock_ms)
            and isinstance(per_move, list) and len(per_move) == 2
            and type(thinking_ms) is int and 0 <= thinking_ms <= _MAX_THINKING_MS
            and isinstance(infos, dict) and len(infos) <= 2
            and all(ply.isdigit() and int(ply) < len(moves) and isinstance(text, str) and len(text) <= INFO_CHARS
                    for ply, text in infos.items())):
        raise ValueError("not a live file")
    game = engine.get_game(name)
    state = before = play_opening(game, opening, opening_moves)
    seats = []
    for move in moves:
        seats.append(game.to_move(state))
        before, state = state, game.apply(state, move)
    cells = board_cells(game, state)
    return LiveGame(game_id, name, round_, (players[0], players[1]), tuple(moves), cells, game.to_move(state),
                    (clock_ms[0], clock_ms[1]), any(ms is not None for ms in per_move), written - thinking_ms / 1000,
                    touched(board_cells(game, before), cells) if moves else (),
                    infos_by_seat({int(ply): text for ply, text in infos.items()}, seats))


def board_cells(game: Any, state: Any) -> tuple[str, ...]:
    """The board of ``state``, rank 1 first, one code per cell ("" for empty), as the report's viewer draws it."""
    return tuple(cell for row in game.to_json(state)["board"] for cell in row)


def touched(before: Sequence[str], after: Sequence[str]) -> tuple[int, ...]:
    """The cells a move changed (the totem's square it left, the one it took, the piece placed), as the
    viewer marks its last move."""
    return tuple(index for index, (was, now) in enumerate(zip(before, after)) if was != now)


def last_infos(moves: Sequence[MoveRecord]) -> dict[int, str]:
    """The last ``info`` of each side in ``moves`` (the sides alternate), as the viewer shows it, by its ply (from 0)."""
    infos: dict[int, str] = {}
    for ply in range(len(moves) - 1, -1, -1):
        info = moves[ply].info
        if info is not None and all((ply - other) % 2 for other in infos):
            infos[ply] = info_text(info)
            if len(infos) == 2:
                break
    return infos


def infos_by_seat(infos: Mapping[int, str], seats: Sequence[int]) -> tuple[str | None, str | None]:
    """``infos`` by ply (:func:`last_infos`) as each seat's, ``seats[ply]`` having played that ply."""
    by_seat: list[str | None] = [None, None]
    for ply, text in infos.items():
        by_seat[seats[ply]] = text
    return by_seat[0], by_seat[1]


def _strings(value: Any, most: int, chars: int) -> bool:
    return isinstance(value, list) and len(value) <= most and all(isinstance(v, str) and len(v) <= chars for v in value)
