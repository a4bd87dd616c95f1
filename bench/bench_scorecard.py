"""make bench-scorecard: the scorecard of every algorithm (`ccarena ccs`),
from empty directories, with seeds 1-5 and again with seeds 6-10, on all
cores (or --jobs N). Prints each run's wall time (budget: 30 minutes on 2
cores), both overall rankings and Kendall's tau between them (stability;
expected >= 0.8).

    .venv/bin/python bench/bench_scorecard.py [--jobs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from ccarena.scorecard import run_scorecard
from ccarena.stats import kendall_tau

SEED_SETS = ((1, 2, 3, 4, 5), (6, 7, 8, 9, 10))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", type=Path, help="write the two scorecards under DIR (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ccarena-bench-scorecard-") as tmp:
        root = args.keep or Path(tmp)
        rankings = []
        for seeds in SEED_SETS:
            name = f"seeds-{seeds[0]}-{seeds[-1]}"
            done = run_scorecard(root / name, seeds=seeds, jobs=args.jobs, progress=sys.stderr.isatty())
            ranking = [o["cc"] for o in done.record["overall"]]
            rankings.append(ranking)
            print(f"scorecard {name}: {len(done.record['algorithms'])} algorithms, {done.points} runs "
                  f"({done.computed} computed) in {done.wall_s / 60:.1f} min on {args.jobs} workers (budget: 30 min)")
            print(f"  overall: {', '.join(ranking)}")
        print(f"Kendall's tau between the two overall rankings: {kendall_tau(*rankings):.3f} (expected >= 0.8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
