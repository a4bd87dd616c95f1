"""hock-rtt: three BBR flows with base RTTs of 20, 40 and 80 ms in the
large buffer.

Slides (L151-L156): "RTT Fairness: 3 concurrent BBR flows with different
RTT_min =20ms, 40ms, 80ms. Each BBR flow operates at inflight cap of 2
bdp. Larger RTT_min means more data inflight -> Higher throughput at the
bottleneck". Both claims are in claims.toml; the in-flight cap is
measured as in hock-large-buffer (paper.over_own_bdp). The slides name no
rate here: the runs are at 1 and 10 Gbit/s (L96).
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
    return [RunSpec(key(paper.BBR.name, seed, rate=paper.rkey(rate)),
                    paper.scenario([paper.flow(paper.BBR, r) for r in RTTS_MS], seed=seed, quick=quick,
                                   buffer_ms=paper.LARGE_MS, rate_mbps=rate, bbr_only=True), COLUMNS)
            for rate in paper.rates(quick) for seed in paper.seeds(quick)]


def measure(per: list[Outcome], lo: float) -> dict[str, list]:
    """Per flow (in RTTS_MS's order), per seed: share, in-flight and cwnd
    over own BDP, own BDP (packets, mean over seeds), cwnd-limited share."""
    n = len(RTTS_MS)
    return {
        "share": [[r.share(i) for r in per] for i in range(n)],
        "cap": [[paper.over_own_bdp(r, i, RTTS_MS[i], lo) for r in per] for i in range(n)],
        "cwnd": [[paper.over_own_bdp(r, i, RTTS_MS[i], lo, "cwnd") for r in per] for i in range(n)],
        "bdp": [mean([float(np.nanmedian(paper.own_bdp_packets(r, i, RTTS_MS[i])[r.t_s > lo])) for r in per])
                for i in range(n)],
        "limited": [[traces.fraction(traces.cwnd_limited(r.flow["cwnd"][i], r.flow["inflight"][i]), r.t_s > lo)
                     for r in per] for i in range(n)],
    }


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    rates = paper.rates(quick)
    lo = {rate: paper.timing(quick, rate, True)[1] for rate in rates}
    per = {rate: runs_of(outcomes, paper.BBR.name, seeds, rate=paper.rkey(rate)) for rate in rates}
    m = {rate: measure(per[rate], lo[rate]) for rate in rates}
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"Three BBR flows of base RTT {', '.join(map(str, RTTS_MS))} ms, starting together, "
        f"{' and '.join(paper.rkey(r) for r in rates)} (the slides name no rate here; L96), {paper.LARGE_MS}-ms "
        "buffer (at the bottleneck's rate), "
        + "; ".join(f"{paper.rkey(r)}: {paper.timing(quick, r, True)[0]:g} s measured from {lo[r]:g} s" for r in rates)
        + ". In-flight at the cap: each flow's in-flight over its own BDP (its bandwidth estimate times its base "
        "RTT), the median over the window's samples; its cwnd over the same and the share of samples in which it "
        "is cwnd-limited (in-flight within 2 packets of cwnd) are shown per flow.")
    names = [f"{r} ms" for r in RTTS_MS]
    for rate in rates:
        suffix = "" if rate == paper.RATE_MBPS else f".{paper.rkey(rate)}"
        for i, r in enumerate(RTTS_MS):
            rep.numbers[f"bbr.share.{r}ms{suffix}"] = mean(m[rate]["share"][i])
            rep.numbers[f"bbr.inflight_bdp.{r}ms{suffix}"] = mean(m[rate]["cap"][i])
    rep.measured["rtt.order"] = Measured(chains={paper.rkey(rate): dict(zip(names, m[rate]["share"])) for rate in rates})
    rep.measured["rtt.inflight-cap"] = Measured(
        members={f"{paper.rkey(rate)}, {n}": m[rate]["cap"][i] for rate in rates for i, n in enumerate(names)},
        note=" ".join(f"{paper.rkey(rate)}: " + "; ".join(
            f"{r} ms: own BDP {m[rate]['bdp'][i]:.0f} packets, cwnd {mean(m[rate]['cwnd'][i]):.2f} of them, "
            f"cwnd-limited in {100 * mean(m[rate]['limited'][i]):.0f}% of the samples" for i, r in enumerate(RTTS_MS))
            + "." for rate in rates)
        + " Linux 4.9's cap: 2 x BtlBw x RTprop plus 3 TSO bursts, RTprop as the flow measured it.")
    rows = [[paper.rkey(rate), f"{r} ms", f"{100 * mean(m[rate]['share'][i]):.1f}%",
             spread([100 * x for x in m[rate]["share"][i]], ".1f"), f"{m[rate]['bdp'][i]:.0f}",
             f"{mean(m[rate]['cwnd'][i]):.2f}", f"{mean(m[rate]['cap'][i]):.2f}",
             f"{100 * mean(m[rate]['limited'][i]):.0f}%"]
            for rate in rates for i, r in enumerate(RTTS_MS)]
    rep.sections.append(("Per flow (mean over seeds)", markdown_table(
        ["rate", "base RTT", "share", "range", "own BDP (packets)", "cwnd / own BDP", "in-flight / own BDP",
         "cwnd-limited"], rows)))
    if fig_dir is not None:
        for rate in rates:
            run = per[rate][0]
            t = run.t_s
            fname = "rtt.png" if rate == paper.RATE_MBPS else f"rtt-{paper.rkey(rate)}.png"
            time_panels(
                fig_dir / fname, f"BBR (Linux 4.9) at {', '.join(map(str, RTTS_MS))} ms, {paper.LARGE_MS}-ms buffer, "
                f"{rate / 1000:g} Gbit/s (seed {seeds[0]})", t,
                [Panel("goodput (Mbit/s)", [Line(f"{r} ms", run.flow["goodput_mbps"][i])
                                            for i, r in enumerate(RTTS_MS)]),
                 Panel("in-flight / own BDP",
                       [Line(f"{r} ms", paper.in_own_bdps(run, i, r)) for i, r in enumerate(RTTS_MS)]
                       + [Line("2 own BDP: the cwnd cap (2 x BtlBw x RTprop)", np.full(len(t), CAP_BDP),
                               style={"color": "gray", "ls": "--"})],
                       ymax=6.0)],
                spans=[(lo[rate], float(t[-1]), "window")])
            rep.figures.append(Figure(fname, f"goodput per flow and each flow's in-flight over its own BDP, "
                                             f"{paper.rkey(rate)}"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-rtt",
    figure="RTT fairness",
    summary="three BBR flows at 20, 40 and 80 ms, 1 and 10 Gbit/s, 160-ms buffer: shares ordered by RTT, 2 BDP in "
            "flight",
    runs=runs,
    analyse=analyse,
)
