"""How big the HTML report gets and how fast it opens, builds and filters.

For each results directory given (default: the demo tournaments' results, when
they have been played) and for a synthetic tournament of --games games (random
moves played with the engine, 10 bots, a third of the moves carrying an
``info``), prints the report's size, the time to build it, and in headless
Chromium the time until the page is ready, to filter the game list by a bot,
to sort it, and to open the longest game in the viewer.

    python benchmarks/report_size.py                     # demos + 10,000 games of OXONO
    python benchmarks/report_size.py --games 10000 --game yoxii --synthetic-only
    python benchmarks/report_size.py results/my-cup
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from arena.results.report import build_report, write_report  # noqa: E402
from arena.results.meta import TournamentMeta  # noqa: E402
from arena.results.reading import ReadResults, results_of  # noqa: E402
from arena.run.results_dir import read_results  # noqa: E402
from played_games import played_games  # noqa: E402

_MEASURE = """
const t0 = performance.now();
const select = document.getElementById('f-bot');
select.value = select.options[1].value;
select.dispatchEvent(new Event('change'));
const t1 = performance.now();
document.querySelector('#game-list th[data-sort="plies"]').click();
const t2 = performance.now();
location.hash = 'game=' + encodeURIComponent(arguments[0]) + '&ply=0';
window.dispatchEvent(new HashChangeEvent('hashchange'));
document.getElementById('v-last').click();
const t3 = performance.now();
const nav = performance.getEntriesByType('navigation')[0];
return {ready: nav.loadEventEnd, filter: t1 - t0, sort: t2 - t1, open: t3 - t2,
        shown: document.getElementById('game-count').textContent};
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
    return webdriver.Chrome(service=service, options=options), profile


def measure(label: str, results: ReadResults, driver, workdir: Path) -> None:
    records = results.records
    started = time.perf_counter()
    page = build_report(results)
    build_s = time.perf_counter() - started
    path = workdir / f"{label.replace('/', '_')}.html"
    write_report(path, page)
    size = path.stat().st_size
    plies = sum(len(r.moves) for r in records)
    line = f"{label:<28} {len(records):>6} games {plies:>7} moves  {size / 1e6:7.2f} MB  build {build_s:6.2f} s"
    if driver is not None:
        longest = max(records, key=lambda r: len(r.moves)).game_id
        runs = []
        for _ in range(3):
            driver.get("about:blank")
            driver.get(path.as_uri())
            runs.append(driver.execute_script(_MEASURE, longest))
        best = {key: min(run[key] for run in runs) for key in ("ready", "filter", "sort", "open")}
        line += (f"  open {best['ready']:6.0f} ms  filter {best['filter']:5.1f} ms  sort {best['sort']:5.1f} ms"
                 f"  viewer {best['open']:5.1f} ms")
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path, help="results directories (default: the demos' results)")
    parser.add_argument("--games", type=int, default=10_000, help="games in the synthetic tournament (default 10000)")
    parser.add_argument("--game", default="oxono", choices=("oxono", "yoxii"))
    parser.add_argument("--no-browser", action="store_true", help="only size and build time")
    parser.add_argument("--synthetic-only", action="store_true", help="skip the results directories")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.games, args.no_browser, args.synthetic_only = 200, True, True
    directories = args.results or [d for d in (ROOT / "results" / "oxono-demo", ROOT / "results" / "yoxii-demo")
                                   if (d / "games.jsonl").exists()]
    for directory in args.results:
        if not (directory / "games.jsonl").is_file():
            parser.error(f"no results in {directory} (no games.jsonl)")
    if args.synthetic_only:
        directories = []
    driver, profile = (None, None) if args.no_browser else browser()
    workdir = Path(tempfile.mkdtemp(prefix="report-size-"))
    try:
        for directory in directories:
            measure(str(directory.relative_to(ROOT) if directory.is_relative_to(ROOT) else directory),
                    read_results(directory), driver, workdir)
        bots = [f"bot-{i}" for i in range(10)]
        records = played_games(args.game, bots, args.games, seed=1, forfeit_every=50)
        meta = {"name": "synthetic", "game": args.game, "time_control": {"initial_ms": 5000, "increment_ms": 100},
                "bots": [{"name": b, "options": {}} for b in bots]}
        measure(f"synthetic {args.game}", results_of(workdir, TournamentMeta.from_json(meta), records), driver, workdir)
    finally:
        if driver is not None:
            driver.quit()
            shutil.rmtree(profile, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
