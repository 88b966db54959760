"""arena/run/progress_lines.py: a line at each tenth of the games, at least
every 30 s (a game ending or not), one more at the end; on a fake clock,
and once with the real thread."""

from __future__ import annotations

import re
import threading
import time

from arena.run.progress_lines import EVERY_S, Periodic, ProgressLines


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lines_for(clock: FakeClock, **kwargs) -> tuple[ProgressLines, list[str], list[int]]:
    written: list[str] = []
    state = [0]
    lines = ProgressLines(written.append, lambda: f"{state[0]} done", clock=clock, ticking=False, **kwargs)
    return lines, written, state


def test_a_line_at_each_tenth_of_the_games():
    clock = FakeClock()
    lines, written, state = lines_for(clock)
    lines.start(0, 200)
    for done in range(1, 201):
        state[0] = done
        clock.now += 0.01
        lines.update(done, 200)
    assert [line.split("] ")[1] for line in written] == [f"{20 * k} done" for k in range(1, 11)]
    lines.stop()
    assert len(written) == 10  # nothing new since the last line: no repeat


def test_a_line_at_least_every_30_seconds_and_a_last_one_at_the_end():
    clock = FakeClock()
    lines, written, state = lines_for(clock)
    lines.start(5, 10_000)  # resumed: 5 games already in
    for done in range(6, 12):
        state[0] = done
        clock.now += 7  # a game every 7 s: no tenth is crossed
        lines.update(done, 10_000)
    assert [line.split("] ")[1] for line in written] == ["10 done"]  # 35 s after the start
    assert written[0].startswith("[0:00:35] ")
    clock.now += 22  # 29 s since that line
    lines.tick()
    assert len(written) == 1
    clock.now += 2  # 31 s: no game ended since, the thread's tick writes anyway
    lines.tick()
    assert written[-1] == "[0:01:06] 11 done"
    state[0] = 12
    lines.update(12, 10_000)
    clock.now += 3700
    lines.stop()  # a game since the last line: the log ends on where the run stopped
    assert written[-1] == "[1:02:46] 12 done"


def test_the_thread_writes_while_no_game_ends():
    written: list[str] = []
    done = threading.Event()

    def write(text: str) -> None:
        written.append(text)
        done.set()

    lines = ProgressLines(write, lambda: "still playing", every_s=0.05)
    lines.start(0, 100)
    assert done.wait(5)
    lines.stop()
    assert re.fullmatch(r"\[0:00:00\] still playing", written[0])
    count = len(written)
    time.sleep(0.15)
    assert len(written) == count  # stopped: no line after


def test_the_default_interval_is_30_seconds():
    assert EVERY_S == 30.0


def test_a_periodic_view_is_computed_at_most_every_interval():
    clock = FakeClock()
    computed: list[float] = []
    view = Periodic(lambda: computed.append(clock.now) or len(computed), every_s=0.5, share=0.02, clock=clock)
    assert view.value() == 1
    clock.now += 0.4
    assert view.value() == 1 and len(computed) == 1  # not due: the value of a moment ago
    clock.now += 0.1
    assert view.value() == 2
    assert view.value(final=True) == 3  # the last line of a run says how it ended


def test_a_periodic_view_takes_no_more_than_its_share_of_the_time():
    clock = FakeClock()
    computed = []

    def costly() -> int:
        computed.append(clock.now)
        clock.now += 1.0  # it took a second: the next may come 1 / share seconds later
        return len(computed)

    view = Periodic(costly, every_s=0.5, share=0.02, clock=clock)
    for _ in range(200):
        view.value()
        clock.now += 0.5
    spent = len(computed) * 1.0
    assert 1 < len(computed) and spent / (clock.now - 1000.0) <= 0.02 + 1e-9, computed
