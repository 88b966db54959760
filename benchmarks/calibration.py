"""How much a node's measured speed (``ray: {calibrate: true}``) moves from one calibration to the next.

    python benchmarks/calibration.py [--game oxono] [--repeat 10]

Starts a two-node Ray cluster on this machine (one CPU each, a throw-away
token in ``RAY_AUTH_TOKEN`` so that no file is written in the home
directory) and calibrates it ``--repeat`` times in a row, as a run does
before its first game (:meth:`RayExecutor._survey`).  Prints each
calibration's driver figure (plies per second) and each node's speed over
it, then each node's median, range and standard deviation, and how long a
calibration took.  Both nodes and the driver share this machine's cores:
their speeds should be 1.00 but for the noise of the measurement.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import statistics
import time

from arena.run.config import parse_config
from arena.run.ray_executor import RayExecutor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="oxono")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="one calibration (checks that the script runs)")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(16))
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level=logging.ERROR, log_to_driver=False)
    try:
        config = parse_config(
            f"name: calibration\ngame: {args.game}\ntime_control: 10+0.1\nexecutor: ray\n"
            "ray: {calibrate: true}\nbots: [{name: a, cmd: python -m bots.random_bot}, "
            "{name: b, cmd: python -m bots.random_bot}]\n")
        executor = RayExecutor(config)
        speeds: dict[str, list[float]] = {}
        took = []
        for _ in range(repeat):
            start = time.monotonic()
            conditions = executor._survey()
            took.append(time.monotonic() - start)
            measured = {node[:8]: conditions.measured(node) for node in conditions.speeds}
            for node, speed in measured.items():
                speeds.setdefault(node, []).append(speed)
            print(f"driver {conditions.reference:,.0f} plies/s; speeds "
                  + ", ".join(f"{node} {speed:.2f}" for node, speed in measured.items()) + f"; {took[-1]:.2f} s")
        for node, figures in speeds.items():
            print(f"node {node}: median {statistics.median(figures):.2f}, range {min(figures):.2f} to "
                  f"{max(figures):.2f}, standard deviation {statistics.pstdev(figures):.3f}")
        print(f"a calibration took {statistics.median(took):.2f} s (median)")
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
