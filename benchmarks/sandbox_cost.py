"""What confining a bot costs: per move and per process start.

Four ways of running the same bot, side by side:

- ``bare``: no limits (still a clean environment, a scratch directory and,
  where the arena can mount, a /dev/shm of its own);
- ``limits``: the default limits (a cgroup where there is one, else rlimits;
  the scratch quota as a tmpfs where the arena can mount);
- ``watched``: the default limits with the scratch quota measured on a
  timer (``TOTEM_ARENA_MOUNTS=off``), as where the arena cannot mount;
- ``bwrap``: the default limits inside the bubblewrap sandbox, under its
  seccomp filter (no lock or file watch between sandboxes);
- ``unfiltered``: the same without the filter (``TOTEM_ARENA_SECCOMP=off``),
  what the filter costs being the difference.

Per move: the time charged to an instant bot (the C random bot, which does
no work worth measuring), i.e. what the arena and the confinement add to
every move, as the mean of every move of whole OXONO games.  Per start: the
median time from spawning the process to reading its ``ready``, for the C
bot and for the Python random bot.  Also checks that every mode played the
same moves.

    python benchmarks/sandbox_cost.py [--games 200] [--starts 30]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.bot import protocol  # noqa: E402
from arena.bot.cgroups import cgroup_mode  # noqa: E402
from arena.bot.limits import Limits  # noqa: E402
from arena.bot.player import BotPlayer  # noqa: E402
from arena.bot.process import BotProcess  # noqa: E402
from arena.bot.quota import mounts_mode  # noqa: E402
from arena.bot.sandbox import Confinement  # noqa: E402
from arena.bot.spec import BotConfig  # noqa: E402
from arena.game.clock import TimeControl  # noqa: E402
from arena.game.records import GameSpec  # noqa: E402
from arena.game.referee import play_game  # noqa: E402

CONTROL = TimeControl(initial_ms=600_000, increment_ms=0)
NO_LIMITS = Limits(memory_mb=None, processes=None, file_mb=None, cpu_s=None)
MODES = {"bare": (NO_LIMITS, "none"), "limits": (Limits(), "none"), "watched": (Limits(), "none"),
         "bwrap": (Limits(), "bwrap"), "unfiltered": (Limits(), "bwrap")}
#: The arena's environment for a mode: ``watched`` measures the scratch quota
#: instead of mounting it, ``unfiltered`` leaves out the seccomp filter.
SWITCHES = {"watched": "TOTEM_ARENA_MOUNTS", "unfiltered": "TOTEM_ARENA_SECCOMP"}


@contextlib.contextmanager
def mode_environment(mode: str) -> Iterator[None]:
    switch = SWITCHES.get(mode)
    if switch is None:
        yield
        return
    os.environ[switch] = "off"
    try:
        yield
    finally:
        del os.environ[switch]


def build_c_bot(directory: Path) -> Path:
    binary = directory / "random_bot"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(ROOT / "bots" / "c" / "random_bot.c")], check=True)
    return binary


def per_move(cmd: tuple[str, ...], mode: str, games: int) -> tuple[list[float], list[list[str]]]:
    """The ms charged for every move of ``games`` games, and the moves."""
    limits, sandbox = MODES[mode]
    seats = [
        BotPlayer(BotConfig(name=name, cmd=cmd, options={}, cwd=ROOT, env={}, limits=limits, sandbox=sandbox), "oxono")
        for name in ("a", "b")
    ]
    charged: list[float] = []
    moves: list[list[str]] = []
    try:
        for number in range(games):
            spec = GameSpec(index=number, game_id=f"bench-{number}", game="oxono", round=1,
                            players=("a", "b"), opening=number % 2, seed=number)
            record = play_game(spec, seats, CONTROL)
            assert record.forfeit_by is None, record.detail
            charged += [m.ms for m in record.moves]
            moves.append([m.move for m in record.moves])
    finally:
        for player in seats:
            player.close()
    return charged, moves


def per_start(cmd: tuple[str, ...], mode: str, starts: int) -> list[float]:
    """Ms from spawning the bot to reading its ``ready``, ``starts`` times."""
    limits, sandbox = MODES[mode]
    hello = protocol.encode(protocol.hello("oxono", "bench", {}))
    times = []
    for _ in range(starts):
        process = BotProcess(cmd, cwd=ROOT, confinement=Confinement(limits=limits, sandbox=sandbox))
        began = time.perf_counter()
        process.start()
        process.send_line(hello, time.monotonic() + 30)
        process.read_line(time.monotonic() + 30)
        times.append((time.perf_counter() - began) * 1000)
        process.kill()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="OXONO games per mode for the per-move figure")
    parser.add_argument("--starts", type=int, default=30, help="process starts per mode and bot")
    parser.add_argument("--rounds", type=int, default=5, help="the modes take turns this many times (machine noise hits all alike)")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.games, args.starts, args.rounds = 4, 2, 1
    modes = [m for m, (_, sandbox) in MODES.items() if sandbox != "bwrap" or shutil.which("bwrap")]
    print(f"limits enforced with: {cgroup_mode()}; private mounts: {mounts_mode() or 'none'}; modes: {', '.join(modes)}")
    with tempfile.TemporaryDirectory() as tmp:
        c_bot = (str(build_c_bot(Path(tmp))),)
        python_bot = (sys.executable, "-m", "bots.random_bot")
        rounds = max(1, args.rounds)
        charged: dict[str, list[float]] = {mode: [] for mode in modes}
        played: dict[str, list[list[str]]] = {mode: [] for mode in modes}
        for _ in range(rounds):
            for mode in modes:
                with mode_environment(mode):
                    times, moves = per_move(c_bot, mode, max(1, args.games // rounds))
                charged[mode] += times
                played[mode] += moves
        print(f"\nper move (C random bot, {args.games} OXONO games): time charged beyond the bot's own work")
        for mode in modes:
            print(f"  {mode:10} mean {statistics.fmean(charged[mode]) * 1000:6.1f} µs, "
                  f"median {statistics.median(charged[mode]) * 1000:6.1f} µs ({len(charged[mode])} moves)")
        same = all(played[mode] == played[modes[0]] for mode in modes)
        print(f"  same moves in every mode: {'yes' if same else 'NO'}")
        print(f"\nper start (median of {args.starts}): spawn to 'ready'")
        for name, cmd in (("C bot", c_bot), ("Python bot", python_bot)):
            starts: dict[str, list[float]] = {mode: [] for mode in modes}
            for _ in range(rounds):
                for mode in modes:
                    with mode_environment(mode):
                        starts[mode] += per_start(cmd, mode, max(1, args.starts // rounds))
            shown = "  ".join(f"{mode} {statistics.median(ms):6.1f} ms" for mode, ms in starts.items())
            print(f"  {name:10}  {shown}")


if __name__ == "__main__":
    main()
