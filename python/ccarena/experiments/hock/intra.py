"""hock-intra: six BBR flows of equal RTT, in both buffers.

Slides (L135-L139): "Intra-Protocol Fairness: 6 flows (2 per interface),
20ms RTT_min. No consistent fairness behavior"; L191: "No consistent
fairness behavior".
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from .. import compare
from ..common import key, markdown_table, mean, runs_of
from ..figures import Series, grouped_bars
from ..framework import Experiment, Figure, Outcome, Report, RunSpec

FLOWS = 6
#: A run is fair when Jain's index of its flows' goodput reaches this
#: (six flows at +-1/4 of their mean, BBR's own gain cycle, give 0.94).
FAIR = 0.95


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed, buffer=paper.bkey(b)),
                    paper.scenario([paper.flow(paper.BBR, paper.RTT_MS, count=FLOWS)], seed=seed, quick=quick,
                                   buffer_ms=b, interval=None))
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
        f"{paper.window_from_s(quick):g} s. A run is fair when Jain's index of its flows' goodput is at least "
        f"{FAIR:g}. \"No consistent fairness behavior\" holds when, over the runs of both buffers, some are fair "
        "and some are not.")
    for b in bufs:
        rep.numbers[f"bbr.jain.{paper.bkey(b)}"] = mean(j[b])
    every = [x for b in bufs for x in j[b]]
    fair = sum(x >= FAIR for x in every)
    rep.comparisons += [
        compare.claim("fair runs (Jain >= 0.95)", "\"No consistent fairness behavior\" (L139): some runs fair, "
                      "some not", f"{fair} of {len(every)}", 0 < fair < len(every),
                      reason="; ".join(f"{b} ms: Jain {', '.join(f'{x:.2f}' for x in j[b])}" for b in bufs) + "."),
    ] + [compare.ours_only(f"{b} ms buffer: Jain's index", f"{mean(j[b]):.3f}", compare.spread(j[b], ".3f"),
                           note=f"largest over smallest flow's goodput: {mean(spread[b]):.1f}x (mean over seeds).")
         for b in bufs]
    rows = [[str(s)] + [f"{j[b][k]:.3f}" for b in bufs] for k, s in enumerate(seeds)]
    rep.sections.append(("Jain's index per run", markdown_table(["seed"] + [f"{b} ms buffer" for b in bufs], rows)))
    if fig_dir is not None:
        grouped_bars(fig_dir / "intra.png", f"{FLOWS} BBR flows (Linux 4.9), {paper.RTT_MS} ms, "
                     f"{paper.RATE_MBPS / 1000:g} Gbit/s: Jain's index per run", [f"seed {s}" for s in seeds],
                     [Series(f"{b} ms buffer", j[b]) for b in bufs], ylabel="Jain's index", ylim=(0.0, 1.05),
                     hline=(FAIR, f"fair ({FAIR:g})"))
        rep.figures.append(Figure("intra.png", "Jain's index of each run, per buffer"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-intra",
    figure="intra-protocol fairness",
    summary="six BBR flows of equal RTT, 1 Gbit/s, 20 ms, 16- and 160-ms buffers: Jain's index per run",
    runs=runs,
    analyse=analyse,
)
