"""What ``python_packages`` costs: installing a list into a fresh cache, and
finding it installed again; then ``arena check --build`` of a two-bot file
whose bot imports the package, the first time (it installs) and after.

    python benchmarks/packages.py --wheels DIR --package 'numpy==2.4.*' --module numpy [--runs 3] [--sandbox bwrap]

``--wheels`` is a folder of wheels (``pip download -d DIR numpy``): every
install is offline, from it.  Each run starts from an empty cache of its
own (``TOTEM_ARENA_CACHE``).  ``--quick`` installs a wheel Python bundles
instead, once (tests/test_benchmarks.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Times an install into the cache named by TOTEM_ARENA_CACHE, then finding it again.
CHILD = """
import sys, time
from pathlib import Path
from arena.bot.packages import PackageList, build_environment
wanted = PackageList((sys.argv[1],), "python_packages", Path(sys.argv[2]))
began = time.perf_counter()
build_environment(wanted)
installed = time.perf_counter()
assert build_environment(wanted).reused
print(installed - began, time.perf_counter() - installed)
"""
BOT = "import {module}, runpy\nrunpy.run_module('bots.random_bot', run_name='__main__')\n"


def bundled_wheel() -> tuple[Path, str] | None:
    """A folder of the wheels Python bundles for ``ensurepip`` (pip's own,
    and setuptools' before 3.12; Debian keeps them in
    ``/usr/share/python-wheels``) and the name of its first: a real package
    to install offline.  None when this Python has none."""
    import ensurepip

    for folder in (Path(ensurepip.__file__).parent / "_bundled", Path("/usr/share/python-wheels")):
        found = sorted(folder.glob("*.whl"))
        if found:
            return folder, found[0].name.split("-")[0]
    return None


def check_seconds(path: Path, env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "arena", "check", str(path), "-n", "2", "--build"], env=env, check=True,
                   capture_output=True)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, help="a folder of wheels")
    parser.add_argument("--package", help="the requirement to install, e.g. 'numpy==2.4.*'")
    parser.add_argument("--module", help="what the bot imports, e.g. numpy")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sandbox", default="none", choices=("none", "bwrap"))
    parser.add_argument("--quick", action="store_true", help="a bundled wheel, one run: only checks that it runs")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="packages-bench-"))
    if args.quick:
        bundled = bundled_wheel()
        if bundled is None:
            parser.error("this Python bundles no wheel to install: give --wheels, --package and --module")
        args.wheels, args.module = bundled
        args.package, args.runs = args.module, 1
    elif not (args.wheels and args.package and args.module):
        parser.error("--wheels, --package and --module are needed (or --quick)")
    (base / "bot.py").write_text(BOT.format(module=args.module))
    path = base / "t.yaml"
    path.write_text(f"name: bench\ngame: oxono\ntime_control: 10+0.1\nsandbox: {args.sandbox}\n"
                    f"python_packages: ['{args.package}']\npython_wheels: {args.wheels.resolve()}\n"
                    f"bots:\n  - {{name: other, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n"
                    "  - {name: packaged, cmd: python bot.py}\n")
    print(f"{args.package} from {args.wheels}")
    print(f"{'run':>4} {'install s':>10} {'reuse ms':>9} {'check --build first s':>22} {'after s':>8}")
    for run in range(1, args.runs + 1):
        env = dict(os.environ, TOTEM_ARENA_CACHE=str(base / f"cache-{run}"))
        done = subprocess.run([sys.executable, "-c", CHILD, args.package, str(args.wheels)], env=env, capture_output=True,
                              text=True, check=True)
        install, reuse = map(float, done.stdout.split())
        env["TOTEM_ARENA_CACHE"] = str(base / f"check-cache-{run}")
        first, after = check_seconds(path, env), check_seconds(path, env)
        print(f"{run:4d} {install:10.2f} {reuse * 1000:9.2f} {first:22.2f} {after:8.2f}")
    subprocess.run(["rm", "-rf", str(base)], check=False)


if __name__ == "__main__":
    main()
