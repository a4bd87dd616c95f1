"""hock-rtt: three BBR flows with base RTTs of 20, 40 and 80 ms in the
large buffer.

Slides (L151-L156): "RTT Fairness: 3 concurrent BBR flows with different
RTT_min =20ms, 40ms, 80ms. Each BBR flow operates at inflight cap of 2
bdp. Larger RTT_min means more data inflight -> Higher throughput at the
bottleneck". Both claims are in claims.toml; the in-flight cap is
measured as in hock-large-buffer (paper.over_own_bdp).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .. import traces
from ..common import key, markdown_table, mean, runs_of
from ..compare import spread
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

RTTS_MS = (20, 40, 80)
COLUMNS = ("goodput_mbps",) + paper.OWN_BDP_COLUMNS
#: The cwnd cap in own BDPs (2 x BtlBw x RTprop), drawn in the figure.
CAP_BDP = 2.0


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed),
                    paper.scenario([paper.flow(paper.BBR, r) for r in RTTS_MS], seed=seed, quick=quick,
                                   buffer_ms=paper.LARGE_MS), COLUMNS)
            for seed in paper.seeds(quick)]


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    lo = paper.window_from_s(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds)
    n = len(RTTS_MS)
    share = [[r.share(i) for r in per] for i in range(n)]
    cap = [[paper.over_own_bdp(r, i, RTTS_MS[i], lo) for r in per] for i in range(n)]
    cwnd = [[paper.over_own_bdp(r, i, RTTS_MS[i], lo, "cwnd") for r in per] for i in range(n)]
    bdp_pkts = [mean([float(np.nanmedian(paper.own_bdp_packets(r, i, RTTS_MS[i])[r.t_s > lo])) for r in per])
                for i in range(n)]
    limited = [[traces.fraction(traces.cwnd_limited(r.flow["cwnd"][i], r.flow["inflight"][i]), r.t_s > lo)
                for r in per] for i in range(n)]
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"Three BBR flows of base RTT {', '.join(map(str, RTTS_MS))} ms, starting together, "
        f"{paper.RATE_MBPS / 1000:g} Gbit/s, {paper.LARGE_MS}-ms buffer ({paper.buffer_of(paper.LARGE_MS)}), "
        f"{paper.duration_s(quick):g} s, measured from {lo:g} s. In-flight at the cap: each flow's in-flight over "
        "its own BDP (its bandwidth estimate times its base RTT), the median over the window's samples; its cwnd "
        "over the same and the share of samples in which it is cwnd-limited (in-flight within 2 packets of cwnd) "
        "are shown per flow.")
    for i, r in enumerate(RTTS_MS):
        rep.numbers[f"bbr.share.{r}ms"] = mean(share[i])
        rep.numbers[f"bbr.inflight_bdp.{r}ms"] = mean(cap[i])
    names = [f"{r} ms" for r in RTTS_MS]
    rep.measured["rtt.order"] = Measured(members=dict(zip(names, share)))
    rep.measured["rtt.inflight-cap"] = Measured(
        members=dict(zip(names, cap)),
        note="; ".join(f"{r} ms: own BDP {bdp_pkts[i]:.0f} packets, cwnd {mean(cwnd[i]):.2f} of them (Linux 4.9's "
                       f"cap: 2 x BtlBw x RTprop plus 3 TSO bursts, RTprop as the flow measured it), cwnd-limited "
                       f"in {100 * mean(limited[i]):.0f}% of the samples" for i, r in enumerate(RTTS_MS)) + ".")
    rows = [[f"{r} ms", f"{100 * mean(share[i]):.1f}%", spread([100 * x for x in share[i]], ".1f"),
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
                   [Line(f"{r} ms", paper.in_own_bdps(run, i, r)) for i, r in enumerate(RTTS_MS)]
                   + [Line("2 own BDP: the cwnd cap (2 x BtlBw x RTprop)", np.full(len(t), CAP_BDP),
                           style={"color": "gray", "ls": "--"})],
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
