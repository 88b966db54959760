"""A tournament's results directory as the run layer sees it: what
``tournament.json`` says of the tournament, the check that the results there
belong to the tournament asked for before a run appends to them, finding the
results a user points at, and keeping only the games that belong to their
tournament, for ``arena standings`` (and later readers).

A user may name a results directory, its ``games.jsonl``, or the tournament
file; a wrong guess (a parent directory, a typo) gets a message that says what
was looked for and what is there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.bot.spec import BotConfig
from arena.game.clock import TimeControl
from arena.game.openings import suite_digest
from arena.game.records import GameRecord, GameSpec
from arena.results.store import GAMES_FILE, LoadedResults, ResultsConflict, ResultsStore
from arena.run.config import TournamentConfig, load_config
from arena.run.schedule import make_schedule

__all__ = ["FoundResults", "find_results", "scheduled_records", "tournament_meta", "check_compatible", "open_results"]


def tournament_meta(config: TournamentConfig) -> dict[str, Any]:
    """What identifies the tournament whose results a directory holds."""
    return {
        "name": config.name,
        "description": config.description,
        "game": config.game,
        "time_control": config.time_control.to_json(),
        "seed": config.seed,
        "format": config.format,
        "bots": [{"name": b.name, "options": b.options} for b in config.bots],
        "openings": None if config.openings is None else {
            "count": len(config.openings), "digest": suite_digest(config.openings)
        },
        # Not part of what identifies the games (a new SPRT may judge them),
        # but ``arena standings`` reads it to show the test.
        "sprt": None if config.sprt is None else config.sprt.to_json(),
    }


def open_results(store: ResultsStore, config: TournamentConfig, schedule: Sequence[GameSpec]) -> LoadedResults:
    """Open ``store`` for a run of ``config``: refuse results of another
    tournament, record the tournament in ``tournament.json``, and return the
    games already there (see :meth:`ResultsStore.open_for_run`)."""
    return store.open_for_run(
        config.game, tournament_meta(config),
        lambda meta, records: check_compatible(store.directory, config, schedule, meta, records),
    )


def check_compatible(
    directory: Path, config: TournamentConfig, schedule: Sequence[GameSpec], meta: dict[str, Any] | None,
    records: Iterable[GameRecord],
) -> None:
    """Raise :class:`ResultsConflict` when the results in ``directory`` (its
    ``tournament.json``, ``meta``, and its ``records``) were made by another
    tournament than ``config`` schedules."""
    where = f"the results in {directory}"
    advice = "use another output directory, or remove that one to start over"
    # arena match has no tournament file: its command line is what asks.
    asker = "the tournament file" if config.path is not None else "this command"
    if meta is not None:
        new = tournament_meta(config)
        for key in ("game", "time_control", "seed", "format"):
            if meta.get(key) != new[key]:
                raise ResultsConflict(
                    f"{where} were played with {key} {_show(meta.get(key))}, {asker} now says {_show(new[key])}; {advice}"
                )
        if meta.get("openings") != new["openings"]:
            raise ResultsConflict(f"{where} were played with another opening suite than {asker} gives; {advice}")
        old_bots = {b["name"]: b.get("options", {}) for b in meta.get("bots", [])}
        for bot in config.bots:
            if bot.name in old_bots and old_bots[bot.name] != bot.options:
                raise ResultsConflict(f"{where} were played with other options for bot {bot.name!r}; {advice}")
    by_id = {spec.game_id: spec for spec in schedule}
    for record in records:
        spec = by_id.get(record.game_id)
        if (
            spec is None or spec.index != record.index or spec.seed != record.seed
            or spec.opening != record.opening or tuple(record.opening_moves) != spec.opening_moves
        ):
            raise ResultsConflict(f"{where} hold game {record.game_id!r}, which {asker} does not schedule; {advice}")
        if tuple(record.players.values()) != spec.players:
            raise ResultsConflict(
                f"{where} hold game {record.game_id!r} between {' and '.join(record.players.values())}, "
                f"but {asker} pairs {' and '.join(spec.players)} there; {advice}"
            )


def _show(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (dict, list)) else repr(value)


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
