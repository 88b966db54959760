"""A team's grade sheet: one bot's place, points, byes, forfeits and
result in every round, from the standings every command shows.

:func:`grade_sheet` takes the numbers from :class:`~arena.results.standings.Standings`
(the one fold, ranked by the tournament's rule) and each game's score from
:func:`~arena.formats.scoring.score_of` over the records as they score
(:func:`~arena.formats.scoring.scored`: a disqualified bot's games are its
losses), so the sheet says what the ranking says.  The report's bot page
shows it (as JSON, :meth:`GradeSheet.to_json`), and :func:`render_sheet`
writes it as text or Markdown to mail to the team.  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tabulate import tabulate

from arena.base.text import safe
from arena.formats.rounds import Rounds
from arena.formats.scoring import Tally, score_of, scored
from arena.formats.stages import BYE_SCORES
from arena.game.records import GameRecord, GameSpec, schedule_key
from arena.results.reading import ReadResults
from arena.results.standings import BotStanding, Standings, reference_rule

__all__ = ["SHEET_FORMATS", "GameLine", "GradeSheet", "OpponentLine", "RoundLine", "grade_sheet", "grade_sheets",
           "render_sheet"]

#: The formats :func:`render_sheet` writes (``arena report --bot NAME -f``).
SHEET_FORMATS = ("text", "md")


@dataclass
class GameLine:
    """One game of the bot: its colour, its score (1, 0.5, 0), and who forfeited it and why."""

    id: str
    color: str
    score: float
    forfeit_by: str | None = None
    reason: str = ""


@dataclass
class RoundLine:
    """The bot in one round: against one opponent (None: a bye)."""

    round: int
    opponent: str | None
    #: The bot's points and the opponent's in the games recorded (a bye: its points, None).
    score: tuple[float, float | None] = (0.0, 0.0)
    games: list[GameLine] = field(default_factory=list)
    #: The games the pairing has scheduled so far.
    scheduled: int = 0
    #: ``played``, ``being played`` (some recorded), ``not played``, ``not counted``, ``bye``.
    status: str = "not played"
    #: What else the line says: a knockout match's outcome, the forfeits.
    note: str = ""


@dataclass
class OpponentLine:
    name: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    #: Games the bot lost to this opponent by forfeit.
    forfeits: int


@dataclass
class GradeSheet:
    name: str
    #: Its rank as the tables show it (``3``, ``3=``, ``3–4``), among ``of`` bots, by ``rule`` (in words a
    #: student reads); a reference tournament's entrant among the entrants, by its score against the reference bots.
    place: str
    of: int
    rule: str
    games: int
    wins: int
    draws: int
    losses: int
    #: Points from games (a win 1, a draw ½), and from byes.
    score: float
    bye_points: float
    byes: int
    #: A Swiss's (or round-robin stage's) points, byes counted; None outside one.
    points: float | None
    #: Games it lost by forfeit, and games won because the opponent forfeited, by reason.
    forfeits: dict[str, int]
    forfeit_wins: dict[str, int]
    #: Pairings scheduled with no game recorded yet.
    unplayed: int
    withdrawn: bool
    disqualified: bool
    #: The tournament has more than one stage.
    staged: bool
    rounds: list[RoundLine]
    opponents: list[OpponentLine]

    def to_json(self) -> dict[str, Any]:
        """Every field, and the :meth:`summary` lines as the page shows them."""
        return {**asdict(self), "summary": self.summary()}

    def summary(self) -> list[str]:
        """The sheet's head, a line each: place, points, forfeits."""
        marks = [m for m, on in (("withdrawn", self.withdrawn), ("disqualified", self.disqualified)) if on]
        lines = [f"Place: {self.place} of {self.of}" + (f" ({', '.join(marks)})" if marks else ""),
                 f"Ranked by: {self.rule}"]
        if self.points is not None:  # what orders a Swiss: its games and byes, not a later stage's
            lines.append(f"Points: {_num(self.points)} (the {'first stage' if self.staged else 'Swiss'}'s, byes counted)")
        lines.append(f"Games: {self.games} ({self.wins} won, {self.draws} drawn, {self.losses} lost), "
                     f"score {_num(self.score)}")
        if self.byes:
            lines.append(f"Byes: {self.byes} ({_num(self.bye_points)} points)")
        lines.append(f"Forfeits lost: {_reasons(self.forfeits)}; won by forfeit: {_reasons(self.forfeit_wins)}; "
                     f"pairings not played yet: {self.unplayed}")
        return lines


def grade_sheet(results: ReadResults, standings: Standings, bot: str) -> GradeSheet:
    """``bot``'s sheet in ``results``, whose ``standings`` (``results.standings()``) rank it.
    Raises :class:`ValueError` for a bot the standings do not rank."""
    sheet = grade_sheets(results, standings, [bot]).get(bot)
    if sheet is None:
        raise ValueError(f"{bot} is not in the ranking (no longer in the tournament)")
    return sheet


def grade_sheets(results: ReadResults, standings: Standings, bots: Sequence[str]) -> dict[str, GradeSheet]:
    """The sheets of ``bots`` (see :func:`grade_sheet`)."""
    records = scored(results.records, results.rules.disqualified)
    wanted = set(bots)
    mine: dict[str, list[GameRecord]] = {b: [] for b in bots}
    for record in records:
        for name in set(record.players.values()) & wanted:
            mine[name].append(record)
    planned: dict[str, list[GameSpec]] = {b: [] for b in bots}
    for spec in results.schedule:
        for name in set(spec.players) & wanted:
            planned[name].append(spec)
    by_name = {b.name: b for b in standings.bots}
    events = _round_events(results.rounds, wanted)
    unplayed = results.unplayed()
    return {bot: _sheet(by_name[bot], standings, mine[bot], planned[bot], results.rounds, events.get(bot, []),
                        None if unplayed is None else unplayed.get(bot, 0))
            for bot in bots if bot in by_name}


#: What the rounds say of a bot beyond its games: (what, round, opponent, the bye's points or the knockout match).
_Event = tuple[str, int, str | None, Any]


def _round_events(rounds: Rounds | None, wanted: set[str]) -> dict[str, list[_Event]]:
    """Each bot's byes, pairings not counted and knockout matches, in the
    order of the rounds: read once for every sheet, not once per bot (a
    report of thousands of bots has a sheet for each)."""
    events: dict[str, list[_Event]] = {}
    if rounds is None:
        return events
    for state in rounds.stages:
        bye = BYE_SCORES[state.stage.bye] * 2
        for pairing in state.pairings:
            for name in set(pairing.byes) & wanted:
                events.setdefault(name, []).append(("bye", pairing.round, None, bye))
        for (round_, a, b), result in state.results.items():
            if not result.counted:
                for name, other in ((a, b), (b, a)):
                    if name in wanted:
                        events.setdefault(name, []).append(("not counted", round_, other, None))
        for matches in state.matches:
            for match in matches:
                first, second = match.bots
                for name, other in ((first, second), (second, first)):
                    if name is not None and name in wanted:
                        events.setdefault(name, []).append(("match", match.round, other, match))
    return events


def _sheet(standing: Any, standings: Standings, records: list[GameRecord], schedule: list[GameSpec],
           rounds: Rounds | None, events: Sequence[_Event], unplayed: int | None) -> GradeSheet:
    name = standing.name
    lines: dict[tuple[int, str | None], RoundLine] = {}
    for spec in schedule:
        opponent = next(p for p in spec.players if p != name)
        lines.setdefault((spec.round, opponent), RoundLine(spec.round, opponent)).scheduled += 1
    opponents: dict[str, tuple[Tally, list[int]]] = {}
    for record in sorted(records, key=schedule_key):
        color = next(c for c, n in record.players.items() if n == name)
        opponent = next(n for c, n in record.players.items() if c != color)
        line = lines.setdefault((record.round, opponent), RoundLine(record.round, opponent, scheduled=0))
        mine, theirs = score_of(record, name), score_of(record, opponent)
        by = record.players[record.forfeit_by] if record.forfeit_by is not None else None
        line.games.append(GameLine(record.game_id, color, mine, by, record.reason if by else ""))
        line.score = (line.score[0] + mine, (line.score[1] or 0.0) + theirs)
        tally, lost = opponents.setdefault(opponent, (Tally(), [0]))
        tally.add(mine)
        if by == name:
            lost[0] += 1
    byes = 0
    for what, round_, other, detail in events:
        if what == "bye":
            byes += 1
            lines[(round_, None)] = RoundLine(round_, None, (detail, None), status="bye", note=f"bye ({_num(detail)} points)")
        elif what == "not counted":
            line = lines.setdefault((round_, other), RoundLine(round_, other))
            line.status, line.note = "not counted", "not counted (a bot left the tournament)"
        elif other is not None:
            line = lines.setdefault((round_, other), RoundLine(round_, other))
            line.note = _match_note(name, detail.winner, detail.decided_by)
        else:
            lines[(round_, None)] = RoundLine(round_, None, (0.0, None), status="bye", note="bye (goes through)")
    for line in lines.values():
        if line.status in ("bye", "not counted"):
            continue
        line.scheduled = max(line.scheduled, len(line.games))
        line.status = ("played" if len(line.games) >= line.scheduled and line.games
                       else "being played" if line.games else "not played")
        forfeits = _forfeit_note(line.games)
        line.note = "; ".join(n for n in (line.note, forfeits) if n)
    ordered = sorted(lines.values(), key=lambda l: (l.round, l.opponent is not None, l.opponent or ""))
    place, of, rule = _place(standing, standings)
    return GradeSheet(
        name=name, place=place, of=of, rule=rule, games=standing.games, wins=standing.wins,
        draws=standing.draws, losses=standing.losses, score=standing.score, bye_points=standing.bye_points,
        byes=byes, points=standing.points, forfeits=dict(standing.forfeits),
        forfeit_wins=dict(sorted(standing.forfeit_wins.items())),
        unplayed=sum(1 for l in ordered if l.status == "not played") if unplayed is None else unplayed,
        withdrawn=standing.withdrawn,
        disqualified=standing.disqualified, staged=rounds is not None and rounds.stage_count > 1, rounds=ordered,
        opponents=[OpponentLine(o, t.games, t.wins, t.draws, t.losses, t.score, lost[0])
                   for o, (t, lost) in sorted(opponents.items())],
    )


#: Each ranking rule as a student reads it, for the sheet's "Ranked by" line.
_RULE_SENTENCES = {
    "trueskill": "TrueSkill's cautious estimate of each bot's skill (mu − 3·sigma), which rises with wins, "
                 "more for wins against strong bots, and with the games played; then the score",
    "elo": "each bot's Elo, fitted on all the games (a win against a strong bot counts more than one against "
           "a weak bot); then the score",
    "points": "points (a win 1, a draw ½, a loss or a forfeit 0); equal points are split by the points scored "
              "in the games between the tied bots, then by Sonneborn–Berger (points taken from strong bots count "
              "more), then by wins",
}


def _place(standing: BotStanding, standings: Standings) -> tuple[str, int, str]:
    """The bot's place, among how many, and the rule that gives it, in words
    a student reads: a reference tournament's entrant is placed among the
    entrants by its score against the reference bots, as the standings'
    first table ranks them; any other bot by the tournament's ranking."""
    rule = _RULE_SENTENCES[standings.ranking] if standings.rounds is None else standings.rule
    if standings.reference and standing.name not in standings.reference:
        place = next(i for i, bot in enumerate(standings.entrants, start=1) if bot.name == standing.name)
        return str(place), len(standings.entrants), reference_rule(standings.reference, rule)
    shown = standing.rank_text if standings.ranking == "points" else \
        (f"{standing.rank}=" if standing.shared_rank else str(standing.rank))
    return shown, len(standings.bots), rule


def _match_note(name: str, winner: str | None, decided_by: str) -> str:
    if winner is None:
        return "match being played"
    how = {"score": "on score", "tie-break": "in the tie-break pairs", "seed": "as the better seed (tied)",
           "walkover": "by walkover"}.get(decided_by, "")
    return f"{'won' if winner == name else 'lost'} the match {how}".rstrip()


def _forfeit_note(games: Sequence[GameLine]) -> str:
    counts: dict[tuple[str, str], int] = {}
    for game in games:
        if game.forfeit_by is not None:
            counts[(game.forfeit_by, game.reason)] = counts.get((game.forfeit_by, game.reason), 0) + 1
    return ", ".join(f"{by} forfeited {n} ({reason})" if n > 1 else f"{by} forfeited ({reason})"
                     for (by, reason), n in counts.items())


def _num(points: float | None) -> str:
    return "-" if points is None else f"{points:g}"


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items())) if counts else "none"


def _games_cell(line: RoundLine) -> str:
    half = {1.0: "1", 0.5: "½", 0.0: "0"}
    return ", ".join(f"{g.color} {half.get(g.score, _num(g.score))}" for g in line.games) or "-"


def _score_cell(line: RoundLine) -> str:
    if line.status == "bye":
        return _num(line.score[0])
    return f"{_num(line.score[0])}–{_num(line.score[1])}" if line.games else "-"


def render_sheet(sheet: GradeSheet, fmt: str, *, title: str = "") -> str:
    """``sheet`` as ``text`` (plain, for an e-mail) or ``md`` (Markdown);
    ``title`` names the tournament.  Every name goes through :func:`safe`."""
    if fmt not in SHEET_FORMATS:
        raise ValueError(f"unknown grade sheet format {fmt!r}; choose one of: {', '.join(SHEET_FORMATS)}")
    where = "markdown" if fmt == "md" else "terminal"
    heading = safe(f"Grade sheet of {sheet.name}" + (f": {title}" if title else ""), where)
    rows = [[str(l.round), safe(l.opponent if l.opponent is not None else "-", where), _games_cell(l),
             _score_cell(l), l.status, safe(l.note, where)] for l in sheet.rounds]
    headers = ["round", "opponent", "colours and results", "score", "status", "note"]
    table = tabulate(rows, headers=headers, tablefmt="github" if fmt == "md" else "simple", disable_numparse=True)
    head = [safe(line, where) for line in sheet.summary()]
    if fmt == "md":
        return "\n".join([f"# {heading}", "", *(f"- {line}" for line in head), "", "## Rounds", "", table])
    return "\n".join([heading, "", *head, "", table])
