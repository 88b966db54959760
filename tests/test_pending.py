"""``arena standings DIR --pending`` (arena.results.pending): who is still
to play in the current round, and which games are being played (a run
holds the directory's lock and a worker's live file of the game is newer than the lock)."""

from __future__ import annotations

import fcntl
import json
import os

from arena.results.live_feed import LIVE_DIR
from arena.results.pending import pending_round, render_pending
from arena.results.store import CurrentRun, current_run
from builders import arena, swiss_in_round_3


def begun(directory, spec, *, at: float) -> None:
    """A worker's live file of ``spec``'s game, as the feed writes it, last written at ``at``."""
    live = directory / LIVE_DIR
    live.mkdir(exist_ok=True)
    path = live / f"w{spec.game_id}.json"
    path.write_text(json.dumps({"id": spec.game_id, "game": "oxono", "round": spec.round, "players": list(spec.players),
                                "opening": 0, "opening_moves": [], "moves": [], "clock_ms": [1000, 1000],
                                "per_move_ms": [None, None]}))
    os.utime(path, (at, at))


def test_the_rest_of_the_current_round_and_the_games_being_played(tmp_path):
    results, _ = swiss_in_round_3(tmp_path)
    (unplayed,) = [s for s in results.schedule if s.round == 3 and s.game_id not in {r.game_id for r in results.records}][:1]
    first, second = [s for s in results.schedule if set(s.players) == set(unplayed.players)]
    lock = os.open(tmp_path / ".lock", os.O_WRONLY | os.O_CREAT)
    os.write(lock, b"4242\n")
    os.utime(tmp_path / ".lock", (1_000_000, 1_000_000))  # the run took the lock then
    begun(tmp_path, first, at=1_000_001)
    begun(tmp_path, second, at=999_999)  # an earlier run's, killed mid-game
    first, second = first.game_id, second.game_id
    # No run holds the lock: a live file is a game cut off, not one being played.
    idle = pending_round(results)
    assert idle.round == 3 and not idle.run_playing
    (pairing,) = idle.pairings
    assert (set(pairing.bots), pairing.left, pairing.scheduled, pairing.playing) == (
        set(unplayed.players), [first, second], 2, [])
    assert idle.still_to_play == sorted(unplayed.players)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as arena run holds it
        assert current_run(tmp_path) == CurrentRun(4242, 1_000_000)
        live = pending_round(results)
        assert live.run_playing and live.pairings[0].playing == [first]  # the older file is not this run's
        text = render_pending(live).splitlines()
        a, b = live.pairings[0].bots
        assert text[0] == "Round 3 (round 3 of 3): 1 pairing still to play; a run is playing (it holds the directory's lock)"
        assert text[1] == f"  {a} – {b}: 2 of 2 games left, 1 being played: {first}"
        assert text[2] == f"Still to play in round 3: {', '.join(sorted((a, b)))}"
        assert text[3].startswith("Bye: ")
    finally:
        os.close(lock)
    assert current_run(tmp_path) is None


def test_arena_standings_pending_reads_a_results_directory(tmp_path):
    from arena.results.meta import write_meta
    from arena.run.results_dir import tournament_meta

    out = tmp_path / "out"
    out.mkdir()
    _, run = swiss_in_round_3(tmp_path)
    (out / "games.jsonl").write_bytes(b"".join(r.to_line() for r in run.records))
    write_meta(out, tournament_meta(run.config, seeding=run.seeding, pairings=run.pairings))
    shown = arena("standings", out, "--pending")
    assert shown.exit_code == 0, shown.err
    assert shown.out.startswith("Round 3 (round 3 of 3): 1 pairing still to play; no run is playing now")


def test_a_finished_tournament_and_one_waiting_for_its_next_pairing(tmp_path):
    from builders import better_seed, read_run, start, tournament

    config = tournament(tmp_path, 5, "format: swiss\nrounds: 3\n")
    over = read_run(start(config).play(better_seed), tmp_path)
    assert render_pending(pending_round(over)) == (
        "round 3 of 3: every game is played; no run is playing now (arena run FILE goes on)")
    between = read_run(start(config).play(better_seed, until_round=2), tmp_path)
    assert render_pending(pending_round(between)).startswith(
        "round 2 of 3: every game paired so far is played; the next round is paired when a run goes on")
