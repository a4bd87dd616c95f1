"""hock-small-buffer: six BBR flows in the small buffer, and six CUBIC
flows in the same place.

Slides (L113-L116): "Multiple Flows and Small Buffer (0.8 BDP): 6 BBR flows
(2 per interface). BBR causes massive packet loss"; L122-L125: "Comparison
to CUBIC ... Three Orders of Magnitude"; L88-L90: "Small buffer (< bdp):
BBR ignores packet loss as congestion signal". Claims: claims.toml.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from ... import units
from .. import compare
from ..common import key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

FLOWS = 6
VARIANTS = (paper.BBR, paper.CUBIC)
BBR, CUBIC = (v.name for v in VARIANTS)
COLUMNS = ("goodput_mbps", "retransmits")

def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(v.name, seed),
                    paper.scenario([paper.flow(v, paper.RTT_MS, count=FLOWS)], seed=seed, quick=quick,
                                   buffer_ms=paper.SMALL_MS), COLUMNS)
            for v in VARIANTS for seed in paper.seeds(quick)]


def sending_rate_mbps(run: Outcome, flow: int, dt_s: float) -> np.ndarray:
    """What the flow put on the wire per telemetry interval, Mbit/s: its
    goodput plus its retransmitted segments (full MSS each)."""
    retx = np.asarray(run.flow["retransmits"][flow], dtype=float)
    return np.asarray(run.flow["goodput_mbps"][flow], dtype=float) + retx * units.MSS_BYTES * 8 / dt_s / 1e6


def orders(bbr: float, cubic: float) -> float:
    """log10 of BBR's retransmission rate over CUBIC's (inf when CUBIC has none)."""
    if cubic <= 0:
        return math.inf
    return math.log10(bbr / cubic) if bbr > 0 else -math.inf


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    per = {cc: runs_of(outcomes, cc, seeds) for cc in (BBR, CUBIC)}
    rate = {cc: [paper.retransmit_rate(r) for r in per[cc]] for cc in (BBR, CUBIC)}
    util = {cc: [r.utilization for r in per[cc]] for cc in (BBR, CUBIC)}
    jain = {cc: [float(r.summary["jain"]) for r in per[cc]] for cc in (BBR, CUBIC)}
    order = [orders(b, c) for b, c in zip(rate[BBR], rate[CUBIC])]
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"{FLOWS} flows of one algorithm (the slides' \"2 per interface\" of three senders is {FLOWS} flows on one "
        f"bottleneck here), {paper.RTT_MS} ms, {paper.SMALL_MS}-ms buffer ({paper.SMALL_MS / paper.RTT_MS:g} BDP) at "
        f"{paper.RATE_MBPS / 1000:g} Gbit/s, {paper.duration_s(quick):g} s, measured from "
        f"{paper.window_from_s(quick):g} s. Retransmission rate: retransmitted segments over all segments sent in "
        "the window. \"Three orders of magnitude\" is measured as log10 of BBR's rate over CUBIC's, per seed.")
    for cc in (BBR, CUBIC):
        rep.numbers[f"{cc}.retransmit_rate"] = mean(rate[cc])
        rep.numbers[f"{cc}.utilization"] = mean(util[cc])
    finite = [o for o in order if math.isfinite(o)]
    rep.numbers["orders"] = mean(finite) if finite else math.nan
    ratio_text = (f"BBR retransmits {100 * mean(rate[BBR]):.2f}% of its segments, CUBIC {100 * mean(rate[CUBIC]):.4f}% "
                  f"(per seed: {', '.join(f'{10 ** o:.0f}x' if math.isfinite(o) else 'CUBIC none' for o in order)}); "
                  f"BBR keeps {100 * mean(util[BBR]):.1f}% utilisation while losing them (it ignores loss, L90), "
                  f"CUBIC {100 * mean(util[CUBIC]):.1f}%.")
    rep.measured["small-buffer.loss"] = Measured(rate[BBR])
    # A seed in which CUBIC retransmits nothing has no finite ratio: it is
    # left out, and the claim is judged only on the seeds that have one.
    rep.measured["small-buffer.orders"] = Measured(finite, note=ratio_text)
    rep.comparisons += [
        compare.ours_only("CUBIC: retransmitted segments", f"{100 * mean(rate[CUBIC]):.4f}%",
                          compare.spread([100 * x for x in rate[CUBIC]], ".4f")),
        compare.ours_only("Jain's index, BBR / CUBIC", f"{mean(jain[BBR]):.3f} / {mean(jain[CUBIC]):.3f}"),
    ]
    rows = [[str(s), f"{100 * rb:.3f}%", f"{100 * rc:.5f}%", f"{10 ** o:.0f}x" if math.isfinite(o) else "-",
             f"{100 * ub:.1f}%", f"{100 * uc:.1f}%"]
            for s, rb, rc, o, ub, uc in zip(seeds, rate[BBR], rate[CUBIC], order, util[BBR], util[CUBIC])]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "BBR retransmitted", "CUBIC retransmitted", "ratio", "BBR utilisation", "CUBIC utilisation"], rows)))
    if fig_dir is not None:
        t = per[BBR][0].t_s
        dt = float(t[1] - t[0])
        panels = [Panel(f"{paper.LABEL[cc]}: sending rate (Mbit/s)",
                        [Line(f"flow {i}", sending_rate_mbps(per[cc][0], i, dt)) for i in range(FLOWS)],
                        legend_loc="upper right") for cc in (BBR, CUBIC)]
        panels.append(Panel("retransmissions per second (all flows)",
                            [Line(paper.LABEL[cc], np.nansum(per[cc][0].flow["retransmits"], axis=0) / dt)
                             for cc in (BBR, CUBIC)], symlog=1.0))
        time_panels(fig_dir / "small_buffer.png",
                    f"{FLOWS} flows, {paper.RTT_MS} ms, {paper.SMALL_MS}-ms buffer, {paper.RATE_MBPS / 1000:g} Gbit/s "
                    f"(seed {seeds[0]})", t, panels)
        rep.figures.append(Figure("small_buffer.png", "each flow's sending rate (goodput plus retransmitted "
                                                      "segments), BBR and CUBIC, as the slides' \"Sender's "
                                                      "transmission rate\" (L118), and the retransmissions per "
                                                      "second of each (log scale above 1/s, linear below)"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-small-buffer",
    figure="small buffer, vs CUBIC",
    summary="six BBR or six CUBIC flows, 1 Gbit/s, 20 ms, 16-ms buffer: retransmissions (three orders of magnitude)",
    runs=runs,
    analyse=analyse,
)
