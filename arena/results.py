"""Finding the results a user points at, and keeping only the games that
belong to their tournament, for ``arena standings`` (and later readers).

A user may name a results directory, its ``games.jsonl``, or the tournament
file; a wrong guess (a parent directory, a typo) gets a message that says what
was looked for and what is there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.clock import TimeControl
from arena.config import BotConfig, TournamentConfig, load_config
from arena.records import GameRecord
from arena.schedule import make_schedule
from arena.store import GAMES_FILE

__all__ = ["FoundResults", "find_results", "scheduled_records"]


@dataclass(frozen=True)
class FoundResults:
    directory: Path
    #: The tournament file's config, when the user named the file.
    config: TournamentConfig | None = None


def find_results(target: Path) -> FoundResults:
    """The results directory ``target`` means.  Raises ``ConfigError`` for a
    broken tournament file and ``FileNotFoundError`` (its message one line for
    the user) when there are no results there."""
    wanted = f"a results directory holding {GAMES_FILE}, that file, or a tournament file"
    if target.is_file():
        if target.name == GAMES_FILE:
            return FoundResults(target.parent)
        if target.suffix == ".jsonl":
            raise FileNotFoundError(f"{target} is not a results file: expected {wanted}")
        config = load_config(target)
        if not (config.output / GAMES_FILE).is_file():
            raise FileNotFoundError(f"no results yet for {target}: no {GAMES_FILE} in its output directory {config.output}")
        return FoundResults(config.output, config)
    if target.is_dir():
        if (target / GAMES_FILE).is_file():
            return FoundResults(target)
        inside = sorted(str(p.parent) for p in target.glob(f"*/{GAMES_FILE}"))
        if inside:
            listed = ", ".join(inside[:5]) + (f" and {len(inside) - 5} more" if len(inside) > 5 else "")
            raise FileNotFoundError(f"no results in {target} itself (no {GAMES_FILE}); it holds results directories: {listed}")
        raise FileNotFoundError(f"no results in {target}: no {GAMES_FILE} there; expected {wanted}")
    raise FileNotFoundError(f"no such file or directory: {target}; expected {wanted}")


def scheduled_records(
    records: list[GameRecord], config: TournamentConfig | None, meta: dict[str, Any]
) -> tuple[list[GameRecord], list[str]]:
    """The records whose game the tournament schedules with those players, and
    a warning for each other one (a hand-merged file, an edited id): those are
    left out of the ranking.  The schedule comes from the tournament file, or
    else from the directory's ``tournament.json``; without either, all is kept."""
    if config is None:
        config = _config_from_meta(meta, max((r.round for r in records), default=1))
        if config is None:
            return records, []
    else:
        config = replace(config, rounds=max([config.rounds, *(r.round for r in records)]))
    by_id = {spec.game_id: spec for spec in make_schedule(config)}
    kept, warnings = [], []
    for record in records:
        spec = by_id.get(record.game_id)
        if spec is None or tuple(record.players.values()) != spec.players:
            warnings.append(f"ignored game {record.game_id!r} ({' vs '.join(record.players.values())}): "
                            "this tournament does not schedule it")
            continue
        kept.append(record)
    return kept, warnings


def _config_from_meta(meta: dict[str, Any], rounds: int) -> TournamentConfig | None:
    """Just enough of a config to rebuild the schedule from ``tournament.json``."""
    try:
        return TournamentConfig(
            name=str(meta["name"]), game=meta["game"], time_control=TimeControl.from_json(meta["time_control"]),
            rounds=rounds, format=meta["format"], concurrency=1, seed=int(meta["seed"]), output=Path("."),
            bots=tuple(BotConfig(name=b["name"], cmd=("-",), options={}, cwd=Path("."), env={}) for b in meta["bots"]),
            time_margin_ms=0, startup_timeout_s=1.0, path=None, description="",
        )
    except (KeyError, TypeError, ValueError):
        return None
