"""hock-intra: six BBR flows of equal RTT, in both buffers.

Slides (L144-L147): "Intra-Protocol Fairness: 6 flows (2 per interface),
20ms RTT_min. No consistent fairness behavior"; L167: "No consistent
fairness behavior". The slides give no number for it: the claim
(claims.toml) is shown, not judged; the figure draws each flow's goodput
over time, as the slides do. The slides name no rate here: the runs are at
1 and 10 Gbit/s (L96).
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
    return [RunSpec(key(paper.BBR.name, seed, buffer=paper.bkey(b), rate=paper.rkey(r)),
                    paper.scenario([paper.flow(paper.BBR, paper.RTT_MS, count=FLOWS)], seed=seed, quick=quick,
                                   buffer_ms=b, rate_mbps=r, bbr_only=True), GOODPUT_COLUMNS)
            for r in paper.rates(quick) for b in paper.BUFFERS_MS for seed in paper.seeds(quick)]


def jain(run: Outcome) -> float:
    return float(run.summary["jain"])


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    bufs = paper.BUFFERS_MS
    rates = paper.rates(quick)
    points = [(r, b) for r in rates for b in bufs]
    per = {p: runs_of(outcomes, paper.BBR.name, seeds, buffer=paper.bkey(p[1]), rate=paper.rkey(p[0])) for p in points}
    j = {p: [jain(r) for r in per[p]] for p in points}
    spread = {p: [max(r.share(i) for i in range(FLOWS)) / max(min(r.share(i) for i in range(FLOWS)), 1e-9)
                  for r in per[p]] for p in points}

    def name(p: tuple[int, float]) -> str:
        return f"{paper.rkey(p[0])}, {p[1]} ms"

    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"{FLOWS} BBR flows, all {paper.RTT_MS} ms, starting together, at {' and '.join(paper.rkey(r) for r in rates)} "
        f"(the slides name no rate here; L96), buffers of {' and '.join(f'{b} ms' for b in bufs)}, "
        + "; ".join(f"{paper.rkey(r)}: {paper.timing(quick, r, True)[0]:g} s measured from "
                    f"{paper.timing(quick, r, True)[1]:g} s" for r in rates)
        + ". Fairness: Jain's index of the flows' goodput over the window.")
    for (r, b) in points:
        suffix = "" if r == paper.RATE_MBPS else f".{paper.rkey(r)}"
        rep.numbers[f"bbr.jain.{paper.bkey(b)}{suffix}"] = mean(j[(r, b)])
    rep.measured["intra.fairness"] = Measured(
        members={name(p): j[p] for p in points},
        note="; ".join(f"{name(p)}: largest over smallest flow's goodput {mean(spread[p]):.1f}x (mean over seeds)"
                       for p in points) + ".")
    rows = [[str(s)] + [f"{j[p][k]:.3f}" for p in points] for k, s in enumerate(seeds)]
    rep.sections.append(("Jain's index per run", markdown_table(["seed"] + [f"{name(p)} buffer" for p in points],
                                                                rows)))
    if fig_dir is not None:
        for r in rates:
            lo = paper.timing(quick, r, True)[1]
            t = per[(r, bufs[0])][0].t_s
            fname = "intra.png" if r == paper.RATE_MBPS else f"intra-{paper.rkey(r)}.png"
            time_panels(
                fig_dir / fname,
                f"{FLOWS} BBR flows (Linux 4.9), {paper.RTT_MS} ms, {r / 1000:g} Gbit/s (seed {seeds[0]})", t,
                [Panel(f"goodput (Mbit/s), {b}-ms buffer",
                       [Line(f"flow {i}", per[(r, b)][0].flow["goodput_mbps"][i]) for i in range(FLOWS)]) for b in bufs],
                spans=[(lo, float(t[-1]), "window")])
            rep.figures.append(Figure(fname, f"each flow's goodput over time in each buffer at {paper.rkey(r)} "
                                             f"(seed {seeds[0]})"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-intra",
    figure="intra-protocol fairness",
    summary="six BBR flows of equal RTT, 1 and 10 Gbit/s, 20 ms, 16- and 160-ms buffers: Jain's index per run",
    runs=runs,
    analyse=analyse,
)
