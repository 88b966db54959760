"""What ``arena run`` shows of the games a resumed run keeps, when its
plan did not read their records (:class:`~arena.run.resume_read.KeptRecords`):
its progress line's leader and its standings at the end, carried on from
the standings the results directory's index keeps over the games added
since (:func:`~arena.run.standings_read.carried_standings`, as ``arena
standings`` reads them).

Folding every kept record for them read each one (some 17 µs: at a
million games 17 s before the first new game).  The leader and the
standings are the same, to the last bit, as those of the records.  Where
they cannot be carried on these return None and the records are read, as
before: no standings kept, standings that do not carry on over the log,
games other than those the run keeps, a TrueSkill leader whose rated
games are not the schedule's first ones.  A run that read its records
(every one, to start or for its leader) folds them at its end into the
standings it shows and keeps them, as ``arena standings FILE`` keeps
them (:func:`~arena.run.standings_read.kept_of_read`: one fold, where
:func:`~arena.results.standings.compute_standings` made one): the next
run carries them on, as a run that carried them on keeps them again.
(Streaming every game into a fold to keep them, without the records,
costs more than reading the records.)
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

from arena.formats.schedule import FixedSchedule
from arena.game.records import GameRecord
from arena.results.reading import SortedRecords
from arena.results.standings import RunningLeader, Standings, StandingsFold
from arena.results.store import LoadedResults, StoreError
from arena.run.config import TournamentConfig
from arena.run.resume_read import KeptRecords
from arena.run.results_dir import FoundResults
from arena.run.standings_read import KeptStandings, carried_standings, kept_of_read

__all__ = ["carried_leader", "carried_run_standings"]


def carried_leader(config: TournamentConfig, records: Sequence[GameRecord]) -> RunningLeader | None:
    """The running leader of ``records``, a run's kept games, from the standings kept; None: fold the records."""
    carried = _carried(config, records)
    if carried is None:
        return None
    return RunningLeader.carried(config.competition.rules, carried[1], FixedSchedule(config.competition).index_of)


def carried_run_standings(config: TournamentConfig, records: Sequence[GameRecord], *, versions: dict[str, str],
                          opened: tuple[LoadedResults, SortedRecords] | None = None
                          ) -> tuple[Standings, list[GameRecord]] | None:
    """The standings of ``records`` (a run's games at its end: those it
    kept and those it played) as :func:`~arena.results.standings.compute_standings`
    ranks them for ``arena run``, and their forfeits in schedule order,
    from the standings kept, or else from those the run's whole read of the
    log (``opened``, or its kept records' read) folds and keeps; None:
    compute them from the records."""
    carried = _carried(config, records)
    if carried is None:
        carried = _kept_anew(config, records, opened)
    if carried is None:
        return None
    kept, fold = carried
    # (no SPRT, no rounds, no challenger: a run whose plan needs one reads its records)
    return fold.standings(versions=versions, remote=config.remote_bots), [record for _, record in kept.forfeits]


def _carried(config: TournamentConfig, records: Sequence[GameRecord]) -> tuple[KeptStandings, StandingsFold] | None:
    """The standings kept, carried on over the log, and their fold, when
    ``records`` are a resume's not read and the fold holds just their games,
    ranked as the run ranks them."""
    if not isinstance(records, KeptRecords) or records.read:
        return None
    try:
        carried = carried_standings(FoundResults(config.output, config), streamed=False)
    except StoreError:  # (reading the records says what is wrong)
        return None
    return _of_run(config, records, carried[0]) if carried is not None else None


def _kept_anew(config: TournamentConfig, records: Sequence[GameRecord],
               opened: tuple[LoadedResults, SortedRecords] | None) -> tuple[KeptStandings, StandingsFold] | None:
    """The standings of the run's whole read of the log (``opened``, or the
    read of its kept records), carried on over its own games and kept, and
    their fold, when it holds just ``records``' games: the one fold of the
    records at the run's end (:func:`~arena.run.standings_read.kept_of_read`)."""
    if config.competition.rules.sprt is not None or config.competition.challenger is not None:
        return None  # (ranked from its records as a whole: see carried_run_standings)
    try:
        if isinstance(records, KeptRecords):
            opened = records.whole_read()
        if opened is None:
            return None
        kept = kept_of_read(FoundResults(config.output, config), *opened)
    except StoreError:  # (computing the standings from the records says what is wrong)
        return None
    return _of_run(config, records, kept) if kept is not None else None


def _of_run(config: TournamentConfig, records: Sequence[GameRecord],
            kept: KeptStandings) -> tuple[KeptStandings, StandingsFold] | None:
    """``kept`` and its fold, when the fold holds just ``records``' games, ranked as the run ranks them."""
    fold: StandingsFold = pickle.loads(kept.fold)
    if fold.total != len(records) or fold.names != [bot.name for bot in config.bots] \
            or fold.rules != config.competition.rules:
        return None
    return kept, fold
