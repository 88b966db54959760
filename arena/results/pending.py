"""What is left of the current round, and which games are being played:
``arena standings DIR --pending``.

The current round is the first round with a scheduled game not in
``games.jsonl`` (a Swiss or knockout schedules the rounds paired so far; a
round not paired yet is paired when a run goes on).  A game in progress is
known from the live view's files (:mod:`arena.results.live_feed`), read
only while a run holds the directory's lock
(:func:`~arena.results.store.current_run`) and only those written since it
took it: a run killed mid-game leaves its files behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.results.live_feed import read_live_games
from arena.results.reading import ReadResults
from arena.results.store import current_run

__all__ = ["PendingPairing", "PendingRound", "pending_round", "render_pending"]


@dataclass
class PendingPairing:
    """Two bots with games of the round not recorded yet."""

    bots: tuple[str, str]
    #: Their games of the round not recorded, and how many the round gives them.
    left: list[str]
    scheduled: int
    #: Those of ``left`` being played now.
    playing: list[str] = field(default_factory=list)


@dataclass
class PendingRound:
    #: The current round, None when every scheduled game is recorded.
    round: int | None
    #: Where the tournament is (``round 3 of 7``), when the rounds say.
    where: str
    pairings: list[PendingPairing]
    #: A run holds the directory's lock.
    run_playing: bool
    #: Games of other rounds being played (a round-robin plays rounds side by side).
    elsewhere: list[str] = field(default_factory=list)
    #: The bots with a bye in the current round.
    byes: list[str] = field(default_factory=list)
    #: Every scheduled game is recorded and the tournament is over.
    finished: bool = False

    @property
    def still_to_play(self) -> list[str]:
        return sorted({b for p in self.pairings for b in p.bots})


def pending_round(results: ReadResults) -> PendingRound:
    """The current round of ``results`` and what is left of it; ``ValueError``
    (one line) when the reader made only a part of its schedule."""
    done = {r.game_id for r in results.records}
    schedule = results.whole_schedule("--pending")
    left = [s for s in schedule if s.game_id not in done]
    run = current_run(results.directory)
    in_progress = {g.game_id for g in read_live_games(results.directory, done, run.since)} if run is not None else set()
    playing = run is not None
    rounds = results.rounds
    if not left:
        finished = rounds is None or rounds.finished
        where = rounds.describe() if rounds is not None else ""
        return PendingRound(None, where, [], playing, finished=finished)
    current = min(s.round for s in left)
    pairings: dict[frozenset[str], PendingPairing] = {}
    for spec in schedule:
        if spec.round != current:
            continue
        a, b = spec.players
        pairing = pairings.setdefault(frozenset((a, b)), PendingPairing((a, b), [], 0))
        pairing.scheduled += 1
        if spec.game_id not in done:
            pairing.left.append(spec.game_id)
            if spec.game_id in in_progress:
                pairing.playing.append(spec.game_id)
    byes: list[str] = []
    if rounds is not None:
        byes = [bot for p in rounds.pairings if p.round == current for bot in p.byes]
        where = rounds.describe()
    else:
        where = f"round {current} of {max(s.round for s in schedule)}"
    return PendingRound(current, where, [p for p in pairings.values() if p.left], playing,
                        sorted(g for g in in_progress if g not in {i for p in pairings.values() for i in p.left}), byes)


def render_pending(pending: PendingRound) -> str:
    """``pending`` as ``arena standings --pending`` prints it."""
    run = ("a run is playing (it holds the directory's lock)" if pending.run_playing
           else "no run is playing now (arena run FILE goes on)")
    if pending.round is None:
        state = ("every game is played" if pending.finished
                 else "every game paired so far is played; the next round is paired when a run goes on")
        return f"{pending.where}: {state}; {run}" if pending.where else f"{state[0].upper()}{state[1:]}; {run}"
    lines = [f"Round {pending.round} ({pending.where}): {len(pending.pairings)} pairing"
             f"{'s' if len(pending.pairings) != 1 else ''} still to play; {run}"]
    for p in pending.pairings:
        count = f"{len(p.left)} of {p.scheduled} game{'s' if p.scheduled != 1 else ''} left"
        playing = f", {len(p.playing)} being played: {', '.join(p.playing)}" if p.playing else ""
        lines.append(f"  {p.bots[0]} – {p.bots[1]}: {count}{playing}")
    lines.append(f"Still to play in round {pending.round}: {', '.join(pending.still_to_play)}")
    if pending.byes:
        lines.append(f"Bye: {', '.join(pending.byes)}")
    if pending.elsewhere:
        lines.append(f"Also being played (later rounds): {', '.join(pending.elsewhere)}")
    return "\n".join(lines)
