"""hock-rtt: three BBR flows with base RTTs of 20, 40 and 80 ms in the
large buffer.

Slides (L143-L151): "RTT Fairness: 3 concurrent BBR flows with different
RTT_min =20ms, 40ms, 80ms. Each BBR flow operates at inflight cap of 2
bdp. Larger RTT_min means more data inflight -> Higher throughput at the
bottleneck".
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .. import compare, traces
from ... import units
from ..common import half_range, key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec

RTTS_MS = (20, 40, 80)
COLUMNS = ("goodput_mbps", "inflight", "cwnd", "bw_estimate_mbps")
#: "Operates at inflight cap of 2 bdp" (L149): drawn in the figure.
PAPER_CAP_BDP = 2.0
#: "Operates at" the cap: cwnd-limited (in-flight within 2 packets of
#: cwnd) in more than half of the window's samples.
AT_CAP = 0.5


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed),
                    paper.scenario([paper.flow(paper.BBR, r) for r in RTTS_MS], seed=seed, quick=quick,
                                   buffer_ms=paper.LARGE_MS), COLUMNS)
            for seed in paper.seeds(quick)]


def own_bdp_packets(run: Outcome, index: int) -> np.ndarray:
    """The flow's own BDP as BBR sees it, packets: its bandwidth estimate
    (BtlBw, payload) times its base RTT."""
    bw = np.asarray(run.flow["bw_estimate_mbps"][index], dtype=float)
    return bw * 1e6 / 8 * RTTS_MS[index] / 1e3 / units.MSS_BYTES


def over_bdp(run: Outcome, index: int, lo: float, col: str = "inflight") -> float:
    """Median over the window of the flow's ``col`` (in-flight, cwnd) over its own BDP."""
    sel = run.t_s > lo
    bdp = own_bdp_packets(run, index)[sel]
    x = np.asarray(run.flow[col][index], dtype=float)[sel]
    ok = bdp > 0
    return float(np.median(x[ok] / bdp[ok])) if ok.any() else float("nan")


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    lo = paper.window_from_s(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds)
    n = len(RTTS_MS)
    share = [[r.share(i) for r in per] for i in range(n)]
    cap = [[over_bdp(r, i, lo) for r in per] for i in range(n)]
    cwnd = [[over_bdp(r, i, lo, "cwnd") for r in per] for i in range(n)]
    bdp_pkts = [mean([float(np.median(own_bdp_packets(r, i)[r.t_s > lo])) for r in per]) for i in range(n)]
    limited = [[traces.fraction(traces.cwnd_limited(r.flow["cwnd"][i], r.flow["inflight"][i]), r.t_s > lo)
                for r in per] for i in range(n)]
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"Three BBR flows of base RTT {', '.join(map(str, RTTS_MS))} ms, starting together, "
        f"{paper.RATE_MBPS / 1000:g} Gbit/s, {paper.LARGE_MS}-ms buffer ({paper.buffer_of(paper.LARGE_MS)}), "
        f"{paper.duration_s(quick):g} s, measured from {lo:g} s. \"Higher throughput\" for a larger RTT: each step up "
        "in RTT raises the share by more than the two points' seed half-ranges together. \"At inflight cap of 2 "
        "bdp\": a flow is cwnd-limited (in-flight within 2 packets of cwnd) in more than half of the window's samples; "
        "its cwnd and in-flight over its own BDP (its bandwidth estimate times its base RTT) are shown.")
    for i, r in enumerate(RTTS_MS):
        rep.numbers[f"bbr.share.{r}ms"] = mean(share[i])
        rep.numbers[f"bbr.inflight_bdp.{r}ms"] = mean(cap[i])
    ordered = all(mean(share[i + 1]) - mean(share[i]) > half_range(share[i]) + half_range(share[i + 1]) for i in range(n - 1))
    rep.comparisons.append(compare.claim(
        "shares ordered by RTT", "\"Larger RTT_min means more data inflight -> Higher throughput\" (L150-L151)",
        " < ".join(f"{100 * mean(share[i]):.1f}%" for i in range(n)) + f" ({', '.join(f'{r} ms' for r in RTTS_MS)})",
        ordered, spread_text="; ".join(filter(None, (compare.spread([100 * x for x in share[i]], ".1f") for i in range(n)))),
        reason="; ".join(f"{r} ms: {100 * mean(share[i]):.1f}%" for i, r in enumerate(RTTS_MS)) + "."))
    for i, r in enumerate(RTTS_MS):
        rep.comparisons.append(compare.claim(
            f"{r} ms flow: at its in-flight cap", "\"Each BBR flow operates at inflight cap of 2 bdp\" (L149): "
            f"cwnd-limited in most samples", f"{100 * mean(limited[i]):.0f}% cwnd-limited, {mean(cap[i]):.2f} BDP in flight",
            mean(limited[i]) - half_range(limited[i]) > AT_CAP, spread_text=compare.spread([100 * x for x in limited[i]], ".0f"),
            reason=f"its own BDP is {bdp_pkts[i]:.0f} packets and its cwnd {mean(cwnd[i]):.2f} of them (Linux 4.9's cap: "
                   "2 x BtlBw x RTprop plus 3 TSO bursts, with RTprop as the flow measured it); in flight "
                   f"{mean(cap[i]):.2f} of them."))
    rows = [[f"{r} ms", f"{100 * mean(share[i]):.1f}%", compare.spread([100 * x for x in share[i]], ".1f"),
             f"{bdp_pkts[i]:.0f}", f"{mean(cwnd[i]):.2f}", f"{mean(cap[i]):.2f}", f"{100 * mean(limited[i]):.0f}%"]
            for i, r in enumerate(RTTS_MS)]
    rep.sections.append(("Per flow (mean over seeds)", markdown_table(
        ["base RTT", "share", "range", "own BDP (packets)", "cwnd / own BDP", "in-flight / own BDP", "cwnd-limited"],
        rows)))
    if fig_dir is not None:
        run = per[0]
        t = run.t_s
        time_panels(
            fig_dir / "rtt.png", f"BBR (Linux 4.9) at {', '.join(map(str, RTTS_MS))} ms, {paper.LARGE_MS}-ms buffer, "
            f"{paper.RATE_MBPS / 1000:g} Gbit/s (seed {seeds[0]})", t,
            [Panel("goodput (Mbit/s)", [Line(f"{r} ms", run.flow["goodput_mbps"][i]) for i, r in enumerate(RTTS_MS)]),
             Panel("in-flight / own BDP",
                   [Line(f"{r} ms", np.asarray(run.flow["inflight"][i], dtype=float)
                         / np.maximum(own_bdp_packets(run, i), 1e-9)) for i, r in enumerate(RTTS_MS)]
                   + [Line("2 BDP (cap)", np.full(len(t), PAPER_CAP_BDP), style={"color": "gray", "ls": "--"})],
                   ymax=6.0)],
            spans=[(lo, float(t[-1]), "window")])
        rep.figures.append(Figure("rtt.png", "goodput per flow and each flow's in-flight over its own BDP"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-rtt",
    figure="RTT fairness",
    summary="three BBR flows at 20, 40 and 80 ms, 1 Gbit/s, 160-ms buffer: shares ordered by RTT, 2 BDP in flight",
    runs=runs,
    analyse=analyse,
)
