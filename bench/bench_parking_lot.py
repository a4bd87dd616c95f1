"""`make bench-parking-lot`: the parking lot's max-min shares, simulator
against real Linux: the max-min shares with CUBIC's flows, and with
BBR's, within 5 pp of the live engine (at least 5 live runs, 10 seeds).

examples/parking-lot.toml (three 100 Mbit/s links of 5 ms, one flow across
all three, a cross flow on each) with every flow's algorithm set to each
of --ccs in turn: the simulator over --seeds seeds (1..N), the live engine
over --live-runs runs (seeds 1..N: the seed draws nothing live but the
queues' randomness, so the runs differ by the machine alone). Prints, per
algorithm and flow, the mean goodput over its max-min fair share
(summary.json's ``of_maxmin``) on each engine with its spread (min-max),
and the difference in percentage points; a flow is within when the means
differ by at most 5 pp.

    python bench/bench_parking_lot.py                     # BBR and CUBIC, 10 seeds, 5 live runs (~15 min)
    python bench/bench_parking_lot.py --ccs cubic --live-runs 3
    python bench/bench_parking_lot.py --live-runs 0       # the simulator's column alone (no root, ~1 min)

Live runs need root and `make build`; takes the testbed lock like any live run
(waits up to CCARENA_LIVE_WAIT seconds, default 300). A benchmark, not a
test: live runs are not deterministic, and on a machine shared with other
work the numbers move with its load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "examples" / "parking-lot.toml"
#: The bound on each flow's share of max-min, percentage points.
TOLERANCE_PP = 5.0


def of_maxmin(results) -> list[list[float]]:
    """Per flow, each run's goodput over its max-min share."""
    return [[r.flows[i]["of_maxmin"] for r in results] for i in range(len(results[0].flows))]


def spread(values: list[float]) -> str:
    return f"{100 * statistics.fmean(values):6.1f}% ({100 * min(values):.1f}-{100 * max(values):.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ccs", default="bbr,cubic", help="algorithms, comma-separated (default bbr,cubic)")
    parser.add_argument("--seeds", type=int, default=10, help="simulator seeds 1..N (default 10)")
    parser.add_argument("--live-runs", type=int, default=5,
                        help="live runs, seeds 1..N (default 5; 0: the simulator's column alone)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a scenario value, e.g. duration=30s")
    args = parser.parse_args()
    if args.seeds < 1 or args.live_runs < 0:
        print("bench-parking-lot: --seeds must be at least 1 and --live-runs at least 0", file=sys.stderr)
        return 2
    if args.live_runs and os.geteuid() != 0:
        print("bench-parking-lot: needs root (the live engine creates network namespaces)", file=sys.stderr)
        return 2
    os.environ.setdefault("CCARENA_LIVE_WAIT", "300")
    from ccarena.api import run as run_sim
    from ccarena.live.compare import load_both
    from ccarena.live.engine import run_live
    from ccarena.scenario import parse_override, read_toml

    base = [parse_override(item) for item in args.overrides]
    n_flows = len(read_toml(SCENARIO)["flow"])
    started = time.monotonic()
    lines, verdicts = [], []
    for cc in args.ccs.split(","):
        def scenarios(seed: int):
            overrides = [*base, ("seed", seed), *((f"flow.{i}.cc", cc) for i in range(n_flows))]
            return load_both(SCENARIO, overrides)

        sim = [run_sim(scenarios(seed)[0]) for seed in range(1, args.seeds + 1)]
        live = []
        for seed in range(1, args.live_runs + 1):
            print(f"{cc}: live run {seed}/{args.live_runs} ...", file=sys.stderr, flush=True)
            live.append(run_live(scenarios(seed)[1], log=lambda line: print(line, file=sys.stderr, flush=True)))
        lines += [f"{cc} (sim: {args.seeds} seeds, live: {args.live_runs} runs), goodput / max-min share, mean (min-max):",
                  f"  {'flow':<12} {'sim':>24} {'live':>24} {'Δ pp':>7}"]
        live_shares = of_maxmin(live) if live else None
        for i, s in enumerate(of_maxmin(sim)):
            path = ">".join(sim[0].flows[i]["path"])
            if live_shares is None:
                lines.append(f"  {i} {path:<10} {spread(s):>24} {'-':>24} {'-':>7}")
                continue
            v = live_shares[i]
            gap = 100 * (statistics.fmean(s) - statistics.fmean(v))
            verdicts.append(abs(gap) <= TOLERANCE_PP)
            lines.append(f"  {i} {path:<10} {spread(s):>24} {spread(v):>24} {gap:+7.1f}")
        if live:
            drops = [r.summary["live"]["losses"]["testbed_total"] for r in live]
            lines.append(f"  host drops outside the links per live run: {drops}")
    judged = f"{sum(verdicts)} of {len(verdicts)} flows within ±{TOLERANCE_PP:g} pp" if verdicts else "no live runs"
    lines.append(f"{judged}; {time.monotonic() - started:.0f} s wall")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
