"""`make bench-reproduce`: the wall time of `ccarena reproduce all` (every
experiment of every paper package; today every figure and table of the BBQ
paper plus the experiments beyond it), which must stay within 15 minutes on
a 2-core machine.

Runs the real command in a child process, into a temporary directory (or
--out DIR to keep the reports), and prints the total wall time, the number
of simulations, the slowest runs and the budget left. A benchmark, not a
test: it fails only if the command does.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 15 * 60
PROGRESS = re.compile(r"^ccarena: \[\s*(\d+)/(\d+)\] (\S+)\s+([\d.]+) s$")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="keep the reports here (default: a temporary directory)")
    parser.add_argument("--jobs", type=int, help="processes (default: all cores)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ccarena-bench-") as tmp:
        out = args.out or Path(tmp) / "reproduce"
        cmd = [sys.executable, "-m", "ccarena", "reproduce", "all", "--out", str(out)]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall_s = time.perf_counter() - started
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            return proc.returncode
        runs = [m for m in map(PROGRESS.match, proc.stderr.splitlines()) if m]
        slowest = sorted(runs, key=lambda m: -float(m.group(4)))[:5]
        sim_s = sum(float(m.group(4)) for m in runs)
        jobs = args.jobs or os.cpu_count() or 1
        print(f"ccarena reproduce all: {wall_s:.1f} s wall on {jobs} processes, {len(runs)} simulations "
              f"({sim_s:.1f} s of simulation, {sim_s / wall_s:.2f} runs in parallel on average)")
        print("slowest runs: " + ", ".join(f"{m.group(3)} {float(m.group(4)):.1f} s" for m in slowest))
        verdict = "within" if wall_s <= BUDGET_S else "OVER"
        print(f"budget: {verdict} {BUDGET_S / 60:.0f} min ({100 * wall_s / BUDGET_S:.0f}% used)")
        if args.out:
            print(f"reports: {out / 'index.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
