"""hock-intra: six BBR flows of equal RTT, in both buffers.

Slides (L144-L147): "Intra-Protocol Fairness: 6 flows (2 per interface),
20ms RTT_min. No consistent fairness behavior"; L167: "No consistent
fairness behavior". The slides give no number for it: the claim
(claims.toml) is shown, not judged; the figure draws each flow's goodput
over time, as the slides do.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from ..common import GOODPUT_COLUMNS, key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

FLOWS = 6


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed, buffer=paper.bkey(b)),
                    paper.scenario([paper.flow(paper.BBR, paper.RTT_MS, count=FLOWS)], seed=seed, quick=quick,
                                   buffer_ms=b), GOODPUT_COLUMNS)
            for b in paper.BUFFERS_MS for seed in paper.seeds(quick)]


def jain(run: Outcome) -> float:
    return float(run.summary["jain"])


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    bufs = paper.BUFFERS_MS
    per = {b: runs_of(outcomes, paper.BBR.name, seeds, buffer=paper.bkey(b)) for b in bufs}
    j = {b: [jain(r) for r in per[b]] for b in bufs}
    spread = {b: [max(r.share(i) for i in range(FLOWS)) / max(min(r.share(i) for i in range(FLOWS)), 1e-9)
                  for r in per[b]] for b in bufs}
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"{FLOWS} BBR flows, all {paper.RTT_MS} ms, starting together, {paper.RATE_MBPS / 1000:g} Gbit/s, buffers of "
        f"{' and '.join(f'{b} ms' for b in bufs)}, {paper.duration_s(quick):g} s, measured from "
        f"{paper.window_from_s(quick):g} s. Fairness: Jain's index of the flows' goodput over the window.")
    for b in bufs:
        rep.numbers[f"bbr.jain.{paper.bkey(b)}"] = mean(j[b])
    rep.measured["intra.fairness"] = Measured(
        members={f"{b} ms": j[b] for b in bufs},
        note="; ".join(f"{b} ms: largest over smallest flow's goodput {mean(spread[b]):.1f}x (mean over seeds)"
                       for b in bufs) + ".")
    rows = [[str(s)] + [f"{j[b][k]:.3f}" for b in bufs] for k, s in enumerate(seeds)]
    rep.sections.append(("Jain's index per run", markdown_table(["seed"] + [f"{b} ms buffer" for b in bufs], rows)))
    if fig_dir is not None:
        lo = paper.window_from_s(quick)
        t = per[bufs[0]][0].t_s
        time_panels(
            fig_dir / "intra.png",
            f"{FLOWS} BBR flows (Linux 4.9), {paper.RTT_MS} ms, {paper.RATE_MBPS / 1000:g} Gbit/s (seed {seeds[0]})", t,
            [Panel(f"goodput (Mbit/s), {b}-ms buffer",
                   [Line(f"flow {i}", per[b][0].flow["goodput_mbps"][i]) for i in range(FLOWS)]) for b in bufs],
            spans=[(lo, float(t[-1]), "window")])
        rep.figures.append(Figure("intra.png", f"each flow's goodput over time in each buffer (seed {seeds[0]})"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-intra",
    figure="intra-protocol fairness",
    summary="six BBR flows of equal RTT, 1 Gbit/s, 20 ms, 16- and 160-ms buffers: Jain's index per run",
    runs=runs,
    analyse=analyse,
)
