"""`make bench-slow-start`: where a CUBIC flow's HyStart ends its slow
start, simulated and on real Linux, and how often Linux's receiver ACKs.

The scenario is the fidelity battery's CUBIC 10 vs 50 ms (100 Mbit/s, 2 MB)
cut to its first 2 s. What is compared is the 50 ms flow's exit: its cwnd
(packets) 50 ms after the first telemetry sample from which its cwnd grows
by less than 1.25x over the next 100 ms. Where that flow leaves slow start
decides the window its first loss cuts, and with it a mode of the 60-s
shares (docs/host.md, "CUBIC 10 vs 50 ms").

Simulated, over seeds (each flow does its handshake: its data starts a
round trip after its start, as a live flow's does). The 10 ms flow's exit
is printed too: whether the 50 ms flow's second round sees the queue the
10 ms flow built after its own exit decides which round HyStart's delay
test fires in. Live (``--live``, root), on the delay line's per-packet
queue (the simulator's kind) and on the kernel's TBF + bfifo; on the
first, the delay line's packet trace also gives the share of the 50 ms
flow's ACKs that cover one segment, in its first 0.3 s and after (Linux
ACKs each segment while its receive window grows: tcp_grow_window()),
and each flow's first ACKs as runs of equal sizes (2026-11-29, four runs:
the 50 ms flow's "1x22 2x5 1x24 2x8 1x...", as the simulator's).

    python bench/bench_slow_start_exit.py               # the simulator, seeds 1-20
    python bench/bench_slow_start_exit.py --live 6      # and 6 live runs per bottleneck (root, ~2 min)

A benchmark, not a test: it fails only if a run does.
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ccarena.units import MSS_BYTES

#: The scenario: the fidelity battery's cubic-10-50, its first 2 s.
SCENARIO: dict[str, Any] = {
    "duration": "2s",
    "output": {"interval": "10ms"},
    "bottleneck": {"rate": "100Mbit", "buffer": "2MB"},
    "flow": [{"cc": "cubic", "rtt": "10ms"}, {"cc": "cubic", "rtt": "50ms"}],
}
#: The flow whose exit is compared (the 50 ms one).
FLOW = 1
#: Slow start is over from the first sample whose cwnd grows by less than
#: this factor over the next LOOKAHEAD samples (100 ms; in slow start a 50
#: ms flow's cwnd grows ~4x in that time, CUBIC's after it far less).
GROWTH = 1.25
LOOKAHEAD = 10
#: The exit is read this many samples later (50 ms: the round that fired).
SETTLE = 5
#: The 50 ms flow's "first" ACKs, s from the first packet.
EARLY_S = 0.3
#: The live runs' ACKs are printed, segment by segment, for this many
#: segments of each flow: the receiver's start-up (16 quick ACKs, the
#: window's first growths, delayed ACKs until its buffer first grows), to
#: set beside the simulator's receiver (crates/sim/src/rcvbuf.rs).
FIRST_SEGMENTS = 130


def exit_cwnd(table: Any, flow: int = FLOW) -> int | None:
    """The flow's cwnd where its slow start ended (None if it did not)."""
    cwnd = [c for f, c in zip(table.column("flow").to_pylist(), table.column("cwnd").to_pylist()) if f == flow]
    for i, c in enumerate(cwnd[:-LOOKAHEAD]):
        if c >= 16 and cwnd[i + LOOKAHEAD] < GROWTH * c:
            return int(cwnd[i + SETTLE])
    return None


def simulated(seeds: range) -> list[tuple[int | None, int | None]]:
    """(the 50 ms flow's exit, the 10 ms flow's) per seed."""
    import ccarena

    tables = [ccarena.run({**SCENARIO, "seed": seed}).timeseries for seed in seeds]
    return [(exit_cwnd(t), exit_cwnd(t, 0)) for t in tables]


def flow_acks(records: np.ndarray, flow: int) -> np.ndarray:
    """The flow's ACKs as the delay line read them (from its SYN-ACK on),
    from a packet trace's records (``hostmodel.read_trace``)."""
    from ccarena.live.hostmodel import READ

    return records[(records["key"] == 2 * flow + 1) & (records["kind"] == READ) & (records["len"] == 0)]


def single_segment_acks(records: np.ndarray) -> tuple[float, float]:
    """Of the 50 ms flow's ACKs that advance, the share covering one
    segment: in its first EARLY_S and after."""
    from ccarena.live.hostmodel import READ

    t0 = records[records["kind"] == READ]["t"].min()
    acks = flow_acks(records, FLOW)
    advance = np.diff(acks["ack"].astype(np.int64))
    t = (acks["t"][1:] - t0) / 1e9
    one = advance == MSS_BYTES
    early, late = (advance > 0) & (t < EARLY_S), (advance > 0) & (t >= EARLY_S)
    return float(one[early].mean()), float(one[late].mean())


def ack_sizes(acks: np.ndarray, segments: int = FIRST_SEGMENTS) -> str:
    """The first ``segments`` segments' ACKs (``flow_acks``) as runs of
    equal size: "1x22 2x5 1x24 ..." (22 ACKs of one segment, then 5 of
    two, ...); sizes that are not whole segments are shown in segments to
    two decimals."""
    sizes = [a / MSS_BYTES for a in np.diff(acks["ack"].astype(np.int64)) if a > 0]
    sizes = sizes[:int(np.searchsorted(np.cumsum(sizes), segments, side="right"))]
    runs: list[list] = []
    for x in sizes:
        if runs and runs[-1][0] == x:
            runs[-1][1] += 1
        else:
            runs.append([x, 1])
    return " ".join(f"{int(x) if x == int(x) else round(x, 2)}x{n}" for x, n in runs)


def live(runs: int, bottleneck: str) -> list[tuple[int | None, tuple[float, float] | None]]:
    from ccarena.live.engine import load_live_scenario, run_live
    from ccarena.live.hostmodel import read_trace

    out = []
    with tempfile.TemporaryDirectory(prefix="ccarena-slow-start-") as tmp:
        for seed in range(1, runs + 1):
            trace = Path(tmp) / "trace" if bottleneck == "userspace" else None
            scenario = load_live_scenario({**SCENARIO, "seed": seed}, bottleneck=bottleneck)
            result = run_live(scenario, bottleneck=bottleneck, packet_trace=trace, log=lambda *_: None)
            records = read_trace(trace) if trace is not None else None
            acks = single_segment_acks(records) if records is not None else None
            out.append((exit_cwnd(result.timeseries), acks))
            print(f"  live, {bottleneck} bottleneck, run {seed}: exit {out[-1][0]}"
                  f" (the 10 ms flow's {exit_cwnd(result.timeseries, 0)})"
                  + (f"; one-segment ACKs {100 * acks[0]:.0f}% in the first {EARLY_S:g} s, "
                     f"{100 * acks[1]:.0f}% after" if acks else ""), flush=True)
            if records is not None:
                for f in (FLOW, 0):
                    print(f"    flow {f}'s first {FIRST_SEGMENTS} segments, ACKed as (segments x ACKs): "
                          f"{ack_sizes(flow_acks(records, f))}", flush=True)
    return out


def counts(exits: list[int | None]) -> str:
    c = collections.Counter(exits)
    return ", ".join(f"{k} ({n})" for k, n in sorted(c.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="simulator seeds 1..N (default 20)")
    parser.add_argument("--live", type=int, default=0, metavar="RUNS",
                        help="also RUNS live runs on each bottleneck (root)")
    args = parser.parse_args()
    seeds = range(1, args.seeds + 1)
    sim = simulated(seeds)
    rows = [(f"simulator, seeds 1-{args.seeds}", counts([e for e, _ in sim])),
            ("simulator, the 10 ms flow's exit", counts([e for _, e in sim]))]
    for bottleneck in ("userspace", "kernel") if args.live else ():
        rows.append((f"Linux, {bottleneck} bottleneck, {args.live} runs",
                     counts([e for e, _ in live(args.live, bottleneck)])))
    print("the 50 ms CUBIC flow's exit from slow start, packets (count):")
    for name, value in rows:
        print(f"  {name:<52} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
