"""`make bench-agreement`: the simulator against real Linux, example by example.

Runs `ccarena compare` (ccarena.live.compare: the live engine first, then
the simulator) on every scenario in examples/ at its own length and
measurement window, and prints one Markdown table: each flow's share on
both engines and the difference, utilisation and mean queueing delay; the
last line counts the examples within the project's ±7 percentage points
per flow's share. Single-flow examples compare goodput instead of share.

    python bench/bench_agreement.py                 # every example, full length (~25 min)
    python bench/bench_agreement.py bbr-equal-rtt   # some of them
    python bench/bench_agreement.py --short         # 15-s runs, window 5-15 s (~5 min)

Needs root and `make build`; takes the testbed lock like any live run
(waits up to CCARENA_LIVE_WAIT seconds, default 300, for another run).
Writes both run directories of each example under --out (default
runs/agreement/NAME/{sim,live}) and the table to --out/agreement.md.
A benchmark, not a test: it fails only if a run does. Live runs are not
deterministic; on this 2-core machine, the other work on it shows.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SHORT = [("duration", "15s"), ("measure.from", "5s")]


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def row(name: str, sim, live) -> str:
    from ccarena.live.compare import max_share_gap_pp

    flows = " / ".join(f"{v['cc']} {s['rtt_ms']:g} ms" for s, v in zip(sim.flows, live.flows, strict=True))
    if len(sim.flows) == 1:
        s, v = sim.flows[0], live.flows[0]
        sim_col, live_col = f"{s['goodput_mbps']:.2f} Mbit/s", f"{v['goodput_mbps']:.2f} Mbit/s"
        gap = f"{s['goodput_mbps'] - v['goodput_mbps']:+.2f} Mbit/s"
    else:
        sim_col = " / ".join(pct(f["share"]) for f in sim.flows)
        live_col = " / ".join(pct(f["share"]) for f in live.flows)
        gap = f"{max_share_gap_pp(sim, live):.1f}"
    a, b = sim.summary, live.summary
    return (f"| {name} | {live.summary['live']['bottleneck'].split(' ')[0]} | {flows} | {sim_col} | {live_col} | "
            f"{gap} | {pct(a['utilization'])} / {pct(b['utilization'])} | "
            f"{a['queue_delay_ms']['mean']:.1f} / {b['queue_delay_ms']['mean']:.1f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("examples", nargs="*", help="example names (default: all of examples/)")
    parser.add_argument("--short", action="store_true", help="15-s runs, window 5-15 s")
    parser.add_argument("--out", default="runs/agreement", help="run directories and agreement.md")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench-agreement: needs root (the live engine creates network namespaces)", file=sys.stderr)
        return 2
    os.environ.setdefault("CCARENA_LIVE_WAIT", "300")
    from ccarena.errors import ScenarioError
    from ccarena.live.compare import TOLERANCE_PP, compare, max_share_gap_pp

    names = args.examples or sorted(p.stem for p in EXAMPLES.glob("*.toml"))
    missing = [n for n in names if not (EXAMPLES / f"{n}.toml").exists()]
    if missing:
        print(f"bench-agreement: no example named {missing[0]!r} in {EXAMPLES}", file=sys.stderr)
        return 2
    out = Path(args.out)
    header = ["| example | bottleneck | flows | sim | live | Δ pp (largest) | utilisation sim / live "
              "| queue ms sim / live |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    rows, within, multi, host_drops = [], 0, 0, []
    started = time.monotonic()
    for i, name in enumerate(names, 1):
        print(f"[{i}/{len(names)}] {name} ...", file=sys.stderr, flush=True)
        t = time.monotonic()
        try:
            sim, live = compare(EXAMPLES / f"{name}.toml", SHORT if args.short else None, out=out / name)
        except ScenarioError as err:
            print(f"bench-agreement: {name}: {err}", file=sys.stderr)
            return 1
        rows.append(row(name, sim, live))
        losses = live.summary["live"]["losses"]
        if losses["testbed_total"] or losses["unexplained_losses"]:
            host_drops.append(f"{name} {losses['testbed_total']}"
                              + (f" ({losses['unexplained_losses']} unexplained)" if losses["unexplained_losses"] else ""))
        if len(sim.flows) > 1:
            multi += 1
            within += max_share_gap_pp(sim, live) <= TOLERANCE_PP
        print(f"    {time.monotonic() - t:.0f} s: {rows[-1]}", file=sys.stderr, flush=True)
    kernel = live.summary["live"]["kernel"]
    lines = [f"simulator vs live (Linux {kernel}), {'15-s runs, window 5-15 s' if args.short else 'full length'}:",
             "", *header, *rows, "",
             f"{within} of {multi} multi-flow examples within ±{TOLERANCE_PP:g} pp on every flow's share; "
             f"{time.monotonic() - started:.0f} s wall",
             # Packets the host itself dropped outside the bottleneck (summary.json live.losses):
             # a live figure from such a run is partly the machine's.
             "host drops outside the bottleneck: " + (", ".join(host_drops) if host_drops else "none")]
    text = "\n".join(lines)
    print(text)
    (out / "agreement.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
