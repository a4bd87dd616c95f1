"""make bench-sweep: the 200-point sweep of bench/sweep-10-50.toml on the
local executor (all cores, or --jobs N), from an empty directory, then
again from its cache. Prints points per minute and the share of wall time
spent outside the engine: 1 - (engine seconds summed over points) /
(wall seconds x workers), the cost of scheduling, resolving scenarios,
summaries, the cache and the table.

    .venv/bin/python bench/bench_sweep.py [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from ccarena.sweep import load_sweep, run_sweep

SWEEP = Path(__file__).resolve().parent / "sweep-10-50.toml"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    sweep = load_sweep(SWEEP)
    with tempfile.TemporaryDirectory(prefix="ccarena-bench-sweep-") as tmp:
        out = Path(tmp) / "sweep"
        done = run_sweep(sweep, out, jobs=args.jobs, progress=sys.stderr.isatty())
        per_min = done.computed / done.wall_s * 60
        outside = 1 - done.engine_s / (done.wall_s * args.jobs)
        print(f"sweep: {done.points} points (BBR 10 vs 50 ms, 60 s each) on {args.jobs} workers")
        print(f"  from scratch: {done.wall_s:.1f} s wall, {per_min:.0f} points/min, "
              f"engine {done.engine_s:.1f} s summed; outside the engine {100 * outside:.1f}% of wall x workers (goal <= 20%)")
        again = run_sweep(sweep, out, jobs=args.jobs, progress=False)
        print(f"  rerun from cache: {again.cached} cached, {again.computed} computed, {again.wall_s:.2f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
