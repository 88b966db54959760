"""A person against a bot in the terminal (``arena play``).

The person types moves on standard input, one a line, so a game can be
driven from a pipe as well as from a keyboard.  Besides moves: ``?`` or
``moves`` lists the legal moves, ``undo`` takes back the last pair of moves
(the bot gets a new ``new_game`` with the position and ``opening_moves``, the
moves so far), ``quit`` resigns.  The bot's moves are refereed by the same
:class:`arena.game.referee.Referee` as in a tournament, under a chess clock;
the person's time runs on the same clock.
"""

from __future__ import annotations

import difflib
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import engine
from arena.bot.forfeits import Forfeit
from arena.bot.player import BotPlayer
from arena.bot.spec import STARTUP_TIMEOUT_S, BotConfig, split_command
from arena.base.text import safe
from arena.game.clock import Clock, TimeControl
from arena.game.records import GameRecord, RESIGNATION, timestamp
from arena.game.referee import Referee

__all__ = ["PlayError", "PlayOptions", "play", "render_position", "closest_moves", "describe_info", "save_record"]

HUMAN = "you"
_SQUARE = re.compile(r"[a-g][1-7]")
# What the bot says (its name, its info, a forfeit's detail) goes to the
# person's terminal through safe(): escaped, never raw, and bounded.
_INFO_KEYS = ("score", "depth", "iterations", "nodes", "time_ms", "pv")


class PlayError(Exception):
    """Something that stops the game before it starts (the bot cannot start); one line."""


@dataclass
class PlayOptions:
    game: str
    bot: str
    #: The person's colour; ``None`` is the first colour (the person moves first).
    color: str | None = None
    time_control: TimeControl = field(default_factory=lambda: TimeControl(initial_ms=300_000, increment_ms=5_000))
    #: Append the finished game to this file, in the format of ``games.jsonl``.
    save: Path | None = None
    #: Colour escapes; ``None`` decides from the output (a terminal, no ``NO_COLOR``).
    ansi: bool | None = None
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    startup_timeout_s: float = STARTUP_TIMEOUT_S
    #: The bot's standard error goes here (default: discarded).
    log: Path | None = None


# -- text helpers (pure, tested directly) ---------------------------------------


def closest_moves(text: str, legal: list[str], count: int = 5) -> list[str]:
    """The legal moves nearest to a mistyped or illegal ``text``: those that
    share its squares first, then by spelling."""
    squares = _SQUARE.findall(text.lower())

    def closeness(move: str) -> tuple[int, float]:
        shared = sum(1 for a, b in zip(squares, _SQUARE.findall(move)) if a == b)
        return shared, difflib.SequenceMatcher(None, text.lower(), move.lower()).ratio()

    return sorted(legal, key=closeness, reverse=True)[:count]


def _paint(text: str, code: str, ansi: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if ansi and code else text


def _clock_text(ms: float) -> str:
    seconds = max(0.0, ms) / 1000
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


#: Each colour's pieces on a terminal (black ones would vanish on a dark one).
_COLOR_PAINT = {"pink": "1;35", "black": "1;36", "white": "1;37", "red": "1;31"}
_TOTEM_PAINT = "1;30;43"


def render_position(
    game: engine.Game[Any],
    state: Any,
    last_move: str | None,
    *,
    names: dict[str, str],
    clocks: dict[str, float] | None = None,
    ansi: bool = False,
) -> str:
    """The board with file letters and rank numbers, the last move's squares
    in brackets (and highlighted in colour), both clocks, and the reserves
    (OXONO) or pieces and the score around the totem (YOXII)."""
    data = game.to_json(state)
    board = data["board"]
    size = len(board)
    marked = set(_SQUARE.findall(last_move or ""))
    # Cell codes start with the owner's letter, or T for a totem.
    paint = {letter: _COLOR_PAINT.get(color, "1") for letter, color in zip(game.piece_letters, game.colors)}
    paint["T"] = _TOTEM_PAINT
    files = "abcdefg"[:size]
    header = "    " + "".join(f" {f}  " for f in files)
    lines = [header]
    for r in reversed(range(size)):
        cells = []
        for f in range(size):
            code = board[r][f]
            square = f"{files[f]}{r + 1}"
            if code == "#":
                cells.append("    ")
                continue
            glyph = code.rjust(2) if code else " ."
            text = _paint(glyph, paint.get(code[:1], ""), ansi)
            if square in marked:
                cells.append(_paint("[", "1;33", ansi) + text + _paint("]", "1;33", ansi))
            else:
                cells.append(f" {text} ")
        lines.append(f"{r + 1:>2}  " + "".join(cells) + f"  {r + 1}")
    lines.append(header)
    lines.append(f"pieces: {game.cell_legend}")
    lines.extend(_sides(game, state, data, names, clocks))
    if last_move:
        lines.append(f"last move: {last_move}")
    outcome = game.outcome(state)
    if outcome is None:
        mover = game.colors[game.to_move(state)]
        lines.append(f"ply {game.ply(state)}: {mover} ({names[mover]}) to move")
    return "\n".join(lines)


def _sides(game: engine.Game[Any], state: Any, data: dict[str, Any], names: dict[str, str], clocks: dict[str, float] | None) -> list[str]:
    lines = []
    tally = game.tally(state)
    for seat, color in enumerate(game.colors):
        reserve = data["reserve"][color]
        held = " ".join(f"{k}:{v}" for k, v in reserve.items())
        parts = [f"{color:>5} ({names[color]})"]
        if clocks is not None:
            parts.append(f"clock {_clock_text(clocks[color])}")
        parts.append(f"reserve {held}")
        if tally is not None:
            total, count = tally[seat]
            parts.append(f"around the totem {total} ({count} piece{'s' if count != 1 else ''})")
        lines.append("  ".join(parts))
    return lines


def describe_info(info: dict[str, Any] | None) -> str:
    """A bot's ``info`` in one safe line (known keys, bounded, no control characters)."""
    if not info:
        return ""
    parts = []
    for key in _INFO_KEYS:
        if key not in info:
            continue
        value = info[key]
        if key == "pv" and isinstance(value, list):
            text = " ".join(str(m) for m in value[:12])
        elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
            text = str(value)
        else:
            continue
        parts.append(f"{key} {safe(text, limit=120)}")
    return ", ".join(parts)


# -- the game ---------------------------------------------------------------


class _Screen:
    def __init__(self, out: TextIO, ansi: bool) -> None:
        self.out = out
        self.ansi = ansi

    def say(self, text: str = "", code: str = "") -> None:
        self.out.write(_paint(text, code, self.ansi) + "\n")
        self.out.flush()

    def prompt(self, text: str) -> None:
        self.out.write(_paint(text, "1", self.ansi))
        self.out.flush()


def _is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _wants_color(out: TextIO) -> bool:
    return not os.environ.get("NO_COLOR") and _is_tty(out)


def play(options: PlayOptions, stdin: TextIO, stdout: TextIO) -> GameRecord:
    """Play one game between the person on ``stdin``/``stdout`` and the bot;
    returns its record (also appended to ``options.save`` when given).
    Raises :class:`PlayError` (one line) when the game cannot start and
    ``ValueError`` for a bad game, colour or command."""
    game = engine.get_game(options.game)
    color = options.color or game.colors[0]
    if color not in game.colors:
        raise ValueError(f"--color must be {' or '.join(game.colors)} in {game.name}, not {color!r}")
    human = game.colors.index(color)
    bot_seat = 1 - human
    if options.save is not None:
        # Find out now, not after the game, that the record cannot be written.
        options.save.parent.mkdir(parents=True, exist_ok=True)
        options.save.open("a").close()
    screen = _Screen(stdout, _wants_color(stdout) if options.ansi is None else options.ansi)
    config = BotConfig(name="bot", cmd=split_command(options.bot), options=dict(options.options), cwd=Path.cwd(), env={})
    player = BotPlayer(config, game.name, log_path=options.log, startup_timeout_s=options.startup_timeout_s)
    try:
        try:
            player.ensure_started()
        except Forfeit as exc:
            raise PlayError(f"the bot could not start: {safe(exc.detail)}") from None
        bot_name = safe(player.ready.get("name") or "bot", limit=40)
        return _Game(game, options, player, human, bot_seat, bot_name, screen).run(stdin)
    finally:
        player.close()


class _Game:
    """The person's side of a game: their turns, undo and resignation, and
    the screen.  The bot's moves, the clock and the record are the
    :class:`Referee`'s, as in a tournament."""

    def __init__(self, game: engine.Game[Any], options: PlayOptions, player: BotPlayer,
                 human: int, bot_seat: int, bot_name: str, screen: _Screen) -> None:
        self.game = game
        self.options = options
        self.player = player
        self.human = human
        self.bot_seat = bot_seat
        self.screen = screen
        self.colors = game.colors
        opening = game.opening_of(options.seed)
        self.start = game.new_state(seed=options.seed, opening=opening)
        # Seat order, as in every game record.
        self.names = {color: HUMAN if seat == human else bot_name for seat, color in enumerate(self.colors)}
        record = GameRecord(
            game_id=f"play-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S')}",
            game=game.name,
            players=dict(self.names),
            seed=options.seed,
            opening=opening,
            time_control=options.time_control.to_json(),
            winner=None,
            reason="",
            started_at=timestamp(),
        )
        self.undos = 0
        self.referee = self._referee(self.start, record, Clock(options.time_control))

    def _referee(self, state: Any, record: GameRecord, clock: Clock) -> Referee:
        """A referee from ``state``, where the bot's game begins: after an
        undo, under an id of its own with the moves so far as its opening."""
        seats: list[BotPlayer | None] = [None, None]
        seats[self.bot_seat] = self.player
        game_id = record.game_id + (f"-u{self.undos}" if self.undos else "")
        return Referee(self.game, state, record, clock, seats, game_id=game_id, opening_moves=_moves(record))

    def run(self, stdin: TextIO) -> GameRecord:
        screen = self.screen
        screen.say(f"{self.game.name}: you play {self.colors[self.human]} against {self.names[self.colors[self.bot_seat]]} "
                   f"at {self.options.time_control} (another clock: --tc, e.g. --tc 60+1). "
                   "Type a move, '?' for the legal moves, 'undo', or 'quit' to resign.")
        self.referee.start()
        self._show()
        while not self.referee.over:
            if self.game.to_move(self.referee.state) == self.bot_seat:
                self._bot_move()
            else:
                self._human_turn(stdin)
        return self._end()

    def _show(self) -> None:
        referee = self.referee
        clocks = {c: referee.clock.remaining_ms[seat] for seat, c in enumerate(self.colors)}
        moves = referee.record.moves
        last = moves[-1].move if moves else None
        self.screen.say()
        self.screen.say(render_position(self.game, referee.state, last, names=self.names, clocks=clocks, ansi=self.screen.ansi))

    def _human_turn(self, stdin: TextIO) -> None:
        screen = self.screen
        referee = self.referee
        legal = self.game.legal_moves(referee.state)
        started = time.monotonic()
        screen.prompt(f"{self.colors[self.human]} to move> ")
        line = stdin.readline()
        elapsed_ms = (time.monotonic() - started) * 1000
        if line and not _is_tty(stdin):
            screen.out.write(line if line.endswith("\n") else line + "\n")  # a piped move is shown where it was typed
        if not line:
            screen.say()
            screen.say("end of input: you resign")
            self._resign()
            return
        text = line.strip()
        command = text.lower()
        if not text:
            return
        if command in ("?", "moves", "help"):
            screen.say(f"{len(legal)} legal moves: " + ", ".join(legal))
            return
        if command == "quit":
            self._resign()
            return
        if command == "undo":
            self._undo()
            return
        move = self.game.normalise_move(text)
        if move not in legal:
            try:
                self.game.apply(referee.state, move)
                reason = "not a legal move"
            except engine.IllegalMove as exc:
                reason = str(exc)
            screen.say(f"illegal: {reason}", "31")
            screen.say("closest legal moves: " + ", ".join(closest_moves(text, legal)) + "   ('?' lists them all)")
            return
        if not referee.clock.charge(self.human, elapsed_ms):
            referee.record.end_by_forfeit(self.human, "timeout", f"you answered after {elapsed_ms / 1000:.1f} s, past your clock")
            return
        referee.apply(move, elapsed_ms, None)
        self._show()

    def _bot_move(self) -> None:
        name = self.names[self.colors[self.bot_seat]]
        self.screen.say(f"{name} is thinking...")
        played = self.referee.bot_move()
        if played is None:  # it forfeited
            return
        self.screen.say(f"{name} plays {played.move} ({played.ms / 1000:.2f} s)", "1")
        details = describe_info(played.info)
        if details:
            self.screen.say(f"  info: {details}")
        self._show()

    def _undo(self) -> None:
        # Back to the person's previous turn: their last move and the bot's reply.
        referee = self.referee
        record = referee.record
        back = 2
        if len(record.moves) < back:
            self.screen.say("nothing to undo: you have not moved yet")
            return
        del record.moves[len(record.moves) - back:]
        state = self.start
        for move in _moves(record):
            state = self.game.apply(state, move)
        self.undos += 1
        self.referee = self._referee(state, record, referee.clock)
        self.screen.say(f"took back {back} moves")
        self.referee.start()
        self._show()

    def _resign(self) -> None:
        self.referee.record.end_by_forfeit(self.human, RESIGNATION, "the person resigned")

    def _end(self) -> GameRecord:
        record = self.referee.finish()
        if record.winner is None:
            verdict = "draw"
        elif record.winner == self.colors[self.human]:
            verdict = "you win"
        else:
            verdict = f"{self.names[record.winner]} wins"
        how = record.reason + (f": {safe(record.detail)}" if record.detail else "")
        scores = f"; scores {', '.join(f'{c} {s}' for c, s in record.scores.items())}" if record.scores else ""
        self.screen.say(f"game over after {len(record.moves)} moves: {verdict} ({how}){scores}", "1")
        if self.options.save is not None:
            save_record(record, self.options.save)
            self.screen.say(f"saved to {self.options.save}")
        return record


def _moves(record: GameRecord) -> list[str]:
    return [m.move for m in record.moves]


def save_record(record: GameRecord, path: Path) -> None:
    """Append ``record`` to ``path`` as one line of the ``games.jsonl`` format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        handle.write(record.to_line())
