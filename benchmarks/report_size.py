"""How big the HTML report gets and how fast it opens, builds and filters.

For each results directory given (default: the demo tournaments' results, when
they have been played) and for a synthetic tournament of --games games (random
moves played with the engine, 10 bots, a third of the moves carrying an
``info``), prints the report's size (the page, and the files of its games
beside it past 2,000 games), the time to build it, and in headless Chromium
the time until the page is ready, to filter the game list by a bot, to sort
it, and to open the longest game in the viewer.

With --sizes, round-robins of 10 bots of that many games (real random games
rewritten onto the schedule, as benchmarks/read_results.py writes them): the
CPU time and peak memory of one ``arena report`` process (the index of
``games.jsonl`` already built), the CPU time of a second one over the same
page (files of unchanged games kept), the page's size, the files' total, and
the milliseconds from opening the page in Chromium to its viewer showing the
list's last game (its file loaded).  --before SRC measures a checkout of
another version of the code (``git archive COMMIT | tar -x -C SRC``) the same way.

    python benchmarks/report_size.py                     # demos + 10,000 games of OXONO
    python benchmarks/report_size.py --games 10000 --game yoxii --synthetic-only
    python benchmarks/report_size.py results/my-cup
    python benchmarks/report_size.py --sizes 1000,10000,100000 --before /tmp/main-src
    python benchmarks/report_size.py --quick             # one small large report, in a few seconds
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from arena.results.report import build_report_files, games_folder, games_href, write_report  # noqa: E402
from arena.results.meta import TournamentMeta  # noqa: E402
from arena.results.reading import ReadResults, results_of  # noqa: E402
from arena.run.results_dir import read_results  # noqa: E402
from played_games import played_games  # noqa: E402
from read_results import write_results  # noqa: E402

#: The filter, the sort and opening a game, timed in the page (an async script: its last argument is the callback).
_MEASURE = """
const game = arguments[0], done = arguments[1];
const t0 = performance.now();
const select = document.getElementById('f-bot');
select.value = select.options[1].value;
select.dispatchEvent(new Event('change'));
const t1 = performance.now();
document.querySelector('#game-list th[data-sort="plies"]').click();
const t2 = performance.now();
location.hash = 'game=' + encodeURIComponent(game) + '&ply=0';
window.dispatchEvent(new HashChangeEvent('hashchange'));
const nav = performance.getEntriesByType('navigation')[0];
function shown() {  // a large report's game opens once its file is loaded
  if (!document.getElementById('v-title').textContent.startsWith('Game ' + game + ':')) return setTimeout(shown, 2);
  document.getElementById('v-last').click();
  done({ready: nav.loadEventEnd, filter: t1 - t0, sort: t2 - t1, open: performance.now() - t2});
}
shown();
"""

#: Milliseconds from the start of the page's navigation until the viewer shows the game of the address.
_OPENED = """
const game = arguments[0], done = arguments[1];
function shown() {
  const title = document.getElementById('v-title');
  if (!title || !title.textContent.startsWith('Game ' + game + ':')) return setTimeout(shown, 2);
  done(performance.now());
}
shown();
"""


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="report-bench-")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", f"--user-data-dir={profile}", "--window-size=1200,900"):
        options.add_argument(flag)
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(600)
    driver.set_script_timeout(120)
    return driver, profile


def folder_bytes(path: Path) -> tuple[int, int]:
    """The total size and number of the files of games beside the page at ``path``."""
    files = list(games_folder(path).glob("*.js"))
    return sum(f.stat().st_size for f in files), len(files)


def measure(label: str, results: ReadResults, driver, workdir: Path) -> None:
    records = results.records
    path = workdir / f"{label.replace('/', '_').replace(' ', '_')}.html"
    started = time.perf_counter()
    page, games = build_report_files(results, games_href(path))
    write_report(path, page, games)
    build_s = time.perf_counter() - started
    size = path.stat().st_size
    beside, files = folder_bytes(path) if games is not None else (0, 0)
    plies = sum(len(r.moves) for r in records)
    line = (f"{label:<28} {len(records):>6} games {plies:>7} moves  {size / 1e6:7.2f} MB"
            f" + {beside / 1e6:6.2f} MB in {files:>3} files  build {build_s:6.2f} s")
    if driver is not None:
        longest = max(records, key=lambda r: len(r.moves)).game_id
        runs = []
        for _ in range(3):
            driver.get("about:blank")
            driver.get(path.as_uri())
            runs.append(driver.execute_async_script(_MEASURE, longest))
        best = {key: min(run[key] for run in runs) for key in ("ready", "filter", "sort", "open")}
        line += (f"  open {best['ready']:6.0f} ms  filter {best['filter']:5.1f} ms  sort {best['sort']:5.1f} ms"
                 f"  viewer {best['open']:5.1f} ms")
    print(line, flush=True)


def arena_report(source: Path, directory: Path, page: Path) -> tuple[float, float]:
    """CPU time (s) and peak resident memory (MB) of one ``arena report`` process of ``source``'s code."""
    process = subprocess.Popen([sys.executable, "-m", "arena", "report", str(directory), "-o", str(page)], cwd=source,
                               env={**os.environ, "PYTHONPATH": str(source)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"arena report {directory} failed: {process.stderr.read().decode()[-500:]}")
    process.stderr.close()
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def opened_ms(driver, page: Path, game_id: str) -> float:
    """Milliseconds from opening ``page`` at ``game_id`` to the viewer showing it (the best of three)."""
    from urllib.parse import quote

    times = []
    for _ in range(3):
        driver.get("about:blank")
        driver.get(f"{page.as_uri()}#game={quote(game_id)}&ply=0")
        times.append(driver.execute_async_script(_OPENED, game_id))
    return min(times)


def scale(sizes: list[int], before: Path | None, driver) -> None:
    print("| games | code | page | files beside it | CPU time | peak memory | written again | open a game in Chromium |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for games in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            out = write_results(Path(tmp), games, 10).parent / "out"
            read_results(out)  # the index, as the first command after the run built it
            last = read_results(out).records[-1].game_id
            for name, source in (("before", before), ("this", ROOT)):
                if source is None:
                    continue
                page = Path(tmp) / f"{name}.html"
                cpu, memory = arena_report(source, out, page)
                again, _ = arena_report(source, out, page)
                beside, files = folder_bytes(page)
                opened = f"{opened_ms(driver, page, last):,.0f} ms" if driver is not None else "-"
                shown = f"{beside / 1e6:.1f} MB in {files} files" if files else "-"
                print(f"| {games:,} | {name} | {page.stat().st_size / 1e6:.2f} MB | {shown} | {cpu:.1f} s "
                      f"| {memory:,.0f} MB | {again:.1f} s | {opened} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path, help="results directories (default: the demos' results)")
    parser.add_argument("--games", type=int, default=10_000, help="games in the synthetic tournament (default 10000)")
    parser.add_argument("--game", default="oxono", choices=("oxono", "yoxii"))
    parser.add_argument("--no-browser", action="store_true", help="only size and build time")
    parser.add_argument("--synthetic-only", action="store_true", help="skip the results directories")
    parser.add_argument("--sizes", help="round-robins of these many games, comma-separated (e.g. 1000,10000,100000)")
    parser.add_argument("--before", type=Path, help="with --sizes: a checkout of another version to measure too")
    parser.add_argument("--quick", action="store_true", help="one round-robin of 2,500 games: a few seconds")
    args = parser.parse_args()
    for directory in args.results:
        if not (directory / "games.jsonl").is_file():
            parser.error(f"no results in {directory} (no games.jsonl)")
    if args.before is not None and not (args.before / "arena" / "__main__.py").is_file():
        parser.error(f"no checkout of the arena in {args.before} (no arena/__main__.py)")
    driver, profile = (None, None) if args.no_browser else browser()
    try:
        if args.quick or args.sizes:
            scale([2500] if args.quick else [int(n) for n in args.sizes.split(",")], args.before, driver)
            return
        directories = [] if args.synthetic_only else args.results or [
            d for d in (ROOT / "results" / "oxono-demo", ROOT / "results" / "yoxii-demo") if (d / "games.jsonl").exists()]
        workdir = Path(tempfile.mkdtemp(prefix="report-size-"))
        try:
            for directory in directories:
                measure(str(directory.relative_to(ROOT) if directory.is_relative_to(ROOT) else directory),
                        read_results(directory), driver, workdir)
            bots = [f"bot-{i}" for i in range(10)]
            records = played_games(args.game, bots, args.games, seed=1, forfeit_every=50)
            meta = {"name": "synthetic", "game": args.game, "time_control": {"initial_ms": 5000, "increment_ms": 100},
                    "bots": [{"name": b, "options": {}} for b in bots]}
            measure(f"synthetic {args.game}", results_of(workdir, TournamentMeta.from_json(meta), records), driver,
                    workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    finally:
        if driver is not None:
            driver.quit()
            shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
