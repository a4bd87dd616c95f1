"""hock-single: one BBR flow alone at 1 and 10 Gbit/s in the large buffer.

Slides (L15-L20): BBR's objective is "High throughput with a small queue"
with a "Model-based approach"; L56-L62: "Experimental Evaluation - Single
Flow: 1 Gbit/s bottleneck ... Works as expected since the model fits!"
(L96: the experiments ran "at 1 Gbit/s and 10 Gbit/s"). The slides give
no number for either, so both are shown, not judged (claims.toml).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .. import traces
from ..common import key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

RATES_MBPS = paper.RATES_MBPS
rkey = paper.rkey
#: The slides' single-flow picture: throughput and RTT over time.
COLUMNS = ("goodput_mbps", "rtt_ms")


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed, rate=rkey(r)),
                    paper.scenario([paper.flow(paper.BBR, paper.RTT_MS)], seed=seed, quick=quick,
                                   buffer_ms=paper.LARGE_MS, rate_mbps=r), COLUMNS)
            for r in RATES_MBPS for seed in paper.seeds(quick)]


def rtt_ratio(run: Outcome) -> float:
    return float(run.flows[0]["rtt_mean_ms"]) / paper.RTT_MS


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    per = {r: runs_of(outcomes, paper.BBR.name, seeds, rate=rkey(r)) for r in RATES_MBPS}
    util = {r: [run.utilization for run in per[r]] for r in RATES_MBPS}
    rtt = {r: [rtt_ratio(run) for run in per[r]] for r in RATES_MBPS}
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"One BBR flow, {paper.RTT_MS} ms, {paper.LARGE_MS}-ms buffer, at {' and '.join(rkey(r) for r in RATES_MBPS)}"
        f"; {paper.duration_s(quick):g} s, measured from {paper.window_from_s(quick):g} s.")
    for r in RATES_MBPS:
        rep.numbers[f"bbr.utilization.{rkey(r)}"] = mean(util[r])
        rep.numbers[f"bbr.rtt_ratio.{rkey(r)}"] = mean(rtt[r])
    rep.measured["single.throughput"] = Measured(members={rkey(r): util[r] for r in RATES_MBPS})
    rep.measured["single.queue"] = Measured(members={rkey(r): rtt[r] for r in RATES_MBPS})
    rows = [[rkey(r), f"{100 * mean(util[r]):.2f}%", f"{mean(rtt[r]) * paper.RTT_MS:.2f}",
             f"{mean([run.queue_delay_mean_ms for run in per[r]]):.2f}",
             f"{mean([float(run.flows[0]['retransmits']) for run in per[r]]):.0f}"] for r in RATES_MBPS]
    rep.sections.append(("Per rate (mean over seeds)", markdown_table(
        ["rate", "utilisation", "mean RTT (ms)", "mean queueing delay (ms)", "retransmits"], rows)))
    if fig_dir is not None:
        t = per[RATES_MBPS[0]][0].t_s
        time_panels(
            fig_dir / "single.png", f"One BBR flow (Linux 4.9), {paper.RTT_MS} ms, {paper.LARGE_MS}-ms buffer "
            f"(seed {seeds[0]})", t,
            [Panel("goodput, payload (% of the link rate)", [Line(rkey(r), 100 * per[r][0].flow["goodput_mbps"][0] / r)
                                               for r in RATES_MBPS], ymax=110.0),
             Panel("RTT (ms)", [Line(rkey(r), traces.rtt(per[r][0])) for r in RATES_MBPS]
                   + [Line("base RTT", np.full(len(t), float(paper.RTT_MS)), style={"color": "gray", "ls": ":"})])],
            spans=[(paper.window_from_s(quick), float(t[-1]), "window")])
        rep.figures.append(Figure("single.png", "one flow's goodput (share of the link) and RTT over time, at each "
                                                "rate, as the slides draw them"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-single",
    figure="single flow",
    summary="one BBR flow at 1 and 10 Gbit/s, 20 ms, 160-ms buffer: throughput and queue",
    runs=runs,
    analyse=analyse,
)
