"""cws-fig8: one flow alone (50 Mbit/s, 10 ms, 60 s) on 0.5, 0.8 and 1 BDP
buffers: throughput, retransmissions and mean cwnd of BBR, Modest BBR and
BBR-CWS (Fig. 8a), and BBR-CWS's upper_scaling_factor over time (Fig. 8b).

Paper, Sec. 5.3 (L264-266): the original BBR "creates significant packet
retransmission ... the original BBR show that average congestion window
sizes are similar, regardless of buffer size." Modest BBR "has smaller
average congestion window size than the original BBR for shallow buffer
environments, reducing retransmission by up to 75%." "BBR-CWS has a
smaller average congestion window when operating on links with a smaller
buffer, although they have similar throughput to the original BBR. For
example, BBR-CWS has 50 MSS average congestion window when operating on
the 0.5 BDP buffer, whereas the original BBR average congestion window
size is 82 MSS for the same buffer environment. However, when buffer size
is 1 BDP, BBR-CWS has congestion window size of 71 MSS." "the
upper_scaling_factor has a lower value when the buffer size is smaller."
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .paper import LABEL
from .. import compare
from ..common import half_range, key, markdown_table, mean, runs_of, values
from ..figures import Line, Panel, Series, grouped_bars, time_panels
from ..framework import MIN_SEEDS, Experiment, Figure, Outcome, Report, RunSpec

VARIANTS = (paper.BBR, paper.MODEST, paper.BBR_CWS, paper.BBR_414)
CCS = tuple(v.name for v in VARIANTS)
BBR, MODEST, CWS, BBR414 = CCS
BUFFERS = (0.5, 0.8, 1.0)
INTERVAL = "10ms"
COLUMNS = ("goodput_mbps", "cwnd", "retransmits")
#: The paper's numbers (MSS).
PAPER_BBR_CWND_05 = 82.0
PAPER_CWS_CWND_05 = 50.0
PAPER_CWS_CWND_1 = 71.0
PAPER_MODEST_RETX = 0.75
#: "Similar, regardless of buffer size": BBR's mean cwnd varies across the
#: buffers by less than BBR-CWS's, which the paper calls different: 71 / 50.
SIMILAR = PAPER_CWS_CWND_1 / PAPER_CWS_CWND_05


def runs(quick: bool) -> list[RunSpec]:
    specs = []
    for v in VARIANTS:
        cols = COLUMNS + (paper.usf_columns() if v is paper.BBR_CWS else ())
        for b in BUFFERS:
            for seed in paper.seeds(quick):
                doc = paper.scenario([paper.flow(v, paper.SHORT_MS)], seed=seed,
                                     duration=paper.single_duration_s(quick), buffer_bdp=b, interval=INTERVAL)
                specs.append(RunSpec(key(v.name, seed, buffer=paper.bkey(b)), doc, cols))
    return specs


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    judged = len(seeds) >= MIN_SEEDS
    dur = paper.single_duration_s(quick)
    bdp = paper.bdp_packets(paper.RATE_MBPS, paper.SHORT_MS)
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"Sec. 5.3: one flow alone, {paper.RATE_MBPS} Mbit/s, {paper.SHORT_MS} ms, {dur} s, buffers "
        f"{', '.join(f'{b:g}' for b in BUFFERS)} BDP (1 BDP = {bdp:.1f} MSS). \"Average congestion window\": the "
        "time mean of cwnd sampled every 10 ms over the run, in MSS (1448 B); retransmissions over the whole run. "
        "\"Smaller with a smaller buffer\" holds when no step down from one buffer to the next larger exceeds the two "
        "points' seed half-ranges together (docs/experiments.md's rule for such claims)."
    )
    per = {cc: {b: runs_of(outcomes, cc, seeds, buffer=paper.bkey(b)) for b in BUFFERS} for cc in CCS}
    cwnd = {cc: {b: values(per[cc][b], lambda r: float(np.mean(r.flow["cwnd"][0]))) for b in BUFFERS} for cc in CCS}
    good = {cc: {b: values(per[cc][b], lambda r: r.goodput(0)) for b in BUFFERS} for cc in CCS}
    retx = {cc: {b: values(per[cc][b], lambda r: r.flows[0]["retransmits_total"]) for b in BUFFERS} for cc in CCS}
    usf = {b: [paper.usf_mean(r) for r in per[CWS][b]] for b in BUFFERS}
    has_usf = all(len(usf[b]) == len(seeds) for b in BUFFERS) and all(np.isfinite(usf[b]).all() for b in BUFFERS)
    for cc in CCS:
        for b in BUFFERS:
            rep.numbers[f"{cc}.cwnd_mss.{b:g}bdp"] = mean(cwnd[cc][b])
            rep.numbers[f"{cc}.goodput_mbps.{b:g}bdp"] = mean(good[cc][b])
            rep.numbers[f"{cc}.retransmits.{b:g}bdp"] = mean(retx[cc][b])
    if has_usf:
        for b in BUFFERS:
            rep.numbers[f"{CWS}.usf_mean.{b:g}bdp"] = mean(usf[b])

    reduction = {b: [1 - m / x if x > 0 else 0.0 for m, x in zip(retx[MODEST][b], retx[BBR][b])] for b in BUFFERS}
    best = max(BUFFERS, key=lambda b: mean(reduction[b]))
    bbr_spread = max(mean(cwnd[BBR][b]) for b in BUFFERS) / min(mean(cwnd[BBR][b]) for b in BUFFERS)
    cws_order = [mean(cwnd[CWS][b]) for b in BUFFERS]
    #: "Shallow": below 1 BDP (the paper's Fig. 1: "buffer size < 1 BDP (shallow)").
    shallow = [b for b in BUFFERS if b < 1]
    modest_not_smaller = [b for b in shallow if mean(cwnd[MODEST][b]) >= mean(cwnd[BBR][b])]
    over = [b for b in BUFFERS if mean(reduction[b]) - half_range(reduction[b]) > PAPER_MODEST_RETX]

    def cwnd_reason(cc: str, b: float) -> str:
        return (f"at {b:g} BDP the pipe plus buffer hold {(1 + b) * bdp:.0f} MSS; our {LABEL[cc]} averages "
                f"{mean(cwnd[cc][b]):.1f} MSS with {mean(retx[cc][b]):.0f} retransmissions in {dur} s; BBR with "
                f"Linux 4.14's cwnd (no ACK-aggregation allowance) averages {mean(cwnd[BBR414][b]):.1f} MSS.")

    rep.comparisons += [
        compare.numeric("BBR: mean cwnd at 0.5 BDP", PAPER_BBR_CWND_05, cwnd[BBR][0.5], fmt=".1f", unit=" MSS",
                        reason=cwnd_reason(BBR, 0.5)),
        compare.numeric("BBR-CWS: mean cwnd at 0.5 BDP", PAPER_CWS_CWND_05, cwnd[CWS][0.5], fmt=".1f", unit=" MSS",
                        reason=cwnd_reason(CWS, 0.5) + _usf_note(usf, 0.5, has_usf)),
        compare.numeric("BBR-CWS: mean cwnd at 1 BDP", PAPER_CWS_CWND_1, cwnd[CWS][1.0], fmt=".1f", unit=" MSS",
                        reason=cwnd_reason(CWS, 1.0) + _usf_note(usf, 1.0, has_usf)),
        compare.claim("BBR-CWS: mean cwnd below BBR's at 0.5 BDP", "\"50 MSS ... whereas the original BBR ... 82 MSS\"",
                      f"{mean(cwnd[CWS][0.5]):.1f} vs {mean(cwnd[BBR][0.5]):.1f} MSS",
                      all(c < x for c, x in zip(cwnd[CWS][0.5], cwnd[BBR][0.5])) if judged else None,
                      reason=cwnd_reason(CWS, 0.5)),
        compare.claim("BBR: mean cwnd across buffers (largest / smallest)",
                      f"\"average congestion window sizes are similar, regardless of buffer size\" (< {SIMILAR:.2f}: "
                      "BBR-CWS's 71 / 50, which the paper calls different)", f"{bbr_spread:.2f}",
                      bbr_spread < SIMILAR if judged else None,
                      reason="; ".join(cwnd_reason(BBR, b) for b in BUFFERS)),
        compare.claim("BBR-CWS: mean cwnd rises with the buffer",
                      "\"a smaller average congestion window when operating on links with a smaller buffer\"",
                      " -> ".join(f"{c:.1f}" for c in cws_order) + " MSS",
                      (not paper.falls_against([cwnd[CWS][b] for b in BUFFERS])) if judged else None,
                      reason="; ".join(cwnd_reason(CWS, b) for b in BUFFERS)),
        compare.ours_only("BBR-CWS / BBR goodput (0.5, 0.8, 1 BDP)",
                          ", ".join(f"{mean(good[CWS][b]) / mean(good[BBR][b]):.3f}" for b in BUFFERS),
                          note="the paper: \"similar throughput to the original BBR\" (no number)."),
        compare.claim("Modest BBR: mean cwnd below BBR's below 1 BDP",
                      "\"smaller average congestion window size than the original BBR for shallow buffer "
                      "environments\"",
                      ", ".join(f"{mean(cwnd[MODEST][b]):.1f} vs {mean(cwnd[BBR][b]):.1f}" for b in shallow) + " MSS",
                      (not modest_not_smaller) if judged else None,
                      reason="; ".join(cwnd_reason(MODEST, b) for b in modest_not_smaller)),
        compare.claim("Modest BBR: largest retransmission reduction against BBR",
                      "\"reducing retransmission by up to 75%\"",
                      f"{100 * mean(reduction[best]):.1f}% at {best:g} BDP",
                      (compare.within_spread(PAPER_MODEST_RETX, reduction[best]) and not over) if judged else None,
                      spread_text=compare.spread([100 * v for v in reduction[best]], ".1f"),
                      reason="; ".join(f"at {b:g} BDP Modest BBR retransmits {mean(retx[MODEST][b]):.0f} segments "
                                       f"against BBR's {mean(retx[BBR][b]):.0f} ({100 * mean(reduction[b]):.1f}% fewer)"
                                       for b in BUFFERS) + "."),
        compare.ours_only("BBR: retransmissions in 60 s (0.5, 0.8, 1 BDP)",
                          ", ".join(f"{mean(retx[BBR][b]):.0f}" for b in BUFFERS),
                          note="the paper: \"creates significant packet retransmission\" (no number)."),
        compare.ours_only("BBR-CWS: retransmissions in 60 s (0.5, 0.8, 1 BDP)",
                          ", ".join(f"{mean(retx[CWS][b]):.0f}" for b in BUFFERS)),
    ]
    if has_usf:
        order = [mean(usf[b]) for b in BUFFERS]
        rep.comparisons.append(compare.claim(
            "BBR-CWS: mean upper_scaling_factor rises with the buffer",
            "\"the upper_scaling_factor has a lower value when the buffer size is smaller\"",
            " -> ".join(f"{u:.2f}" for u in order),
            (not paper.falls_against([usf[b] for b in BUFFERS])) if judged else None,
            reason="; ".join(f"at {b:g} BDP mean {mean(usf[b]):.2f} ({compare.spread(usf[b], '.2f')}) with "
                             f"{mean(retx[CWS][b]):.0f} retransmissions in {dur} s and a mean cwnd of "
                             f"{mean(cwnd[CWS][b]):.1f} MSS (pipe plus buffer {(1 + b) * bdp:.0f} MSS)"
                             for b in BUFFERS) + ". Where usf stays at its cap of 1 through the losses, these runs "
                             "do not show which of the algorithm's conditions keeps it there."))
    else:
        rep.comparisons.append(compare.claim(
            "BBR-CWS: mean upper_scaling_factor rises with the buffer",
            "\"the upper_scaling_factor has a lower value when the buffer size is smaller\"", "not measured", None,
            reason=paper.USF_TODO))

    rows = [[LABEL[cc], f"{b:g}", f"{mean(good[cc][b]):.1f}", f"{mean(retx[cc][b]):.0f} "
             f"({compare.spread(retx[cc][b], '.0f') or '-'})", f"{mean(cwnd[cc][b]):.1f} "
             f"({compare.spread(cwnd[cc][b], '.1f') or '-'})"] for cc in CCS for b in BUFFERS]
    rep.sections.append(("Per algorithm and buffer", markdown_table(
        ["algorithm", "buffer (BDP)", "goodput (Mbit/s)", "retransmissions", "mean cwnd (MSS)"], rows)))

    if fig_dir is not None:
        groups = [f"{b:g} BDP" for b in BUFFERS]
        shown = (BBR, MODEST, CWS)
        for name, data, ylabel, top in (("fig8a-throughput.png", good, "goodput (Mbit/s)", paper.RATE_MBPS),
                                        ("fig8a-retransmissions.png", retx, "retransmissions in 60 s", None),
                                        ("fig8a-cwnd.png", cwnd, "mean cwnd (MSS)", None)):
            series = [Series(LABEL[cc], [mean(data[cc][b]) for b in BUFFERS], [min(data[cc][b]) for b in BUFFERS],
                             [max(data[cc][b]) for b in BUFFERS]) for cc in shown]
            high = max(max(data[cc][b]) for cc in shown for b in BUFFERS)
            grouped_bars(fig_dir / name, f"One flow alone, {paper.RATE_MBPS} Mbit/s, {paper.SHORT_MS} ms: {ylabel}",
                         groups, series, ylabel=ylabel, xlabel="bottleneck buffer",
                         ylim=(0, top if top is not None else 1.1 * max(high, 1.0)))
        rep.figures += [Figure("fig8a-throughput.png", "the paper's Fig. 8a: goodput (mean, seed range)"),
                        Figure("fig8a-retransmissions.png", "the paper's Fig. 8a: retransmissions over 60 s"),
                        Figure("fig8a-cwnd.png", "the paper's Fig. 8a: mean cwnd (MSS)")]
        if has_usf:
            run0 = per[CWS][BUFFERS[0]][0]
            time_panels(fig_dir / "fig8b.png", f"BBR-CWS alone: upper_scaling_factor (seed {seeds[0]})", run0.t_s,
                        [Panel("upper_scaling_factor", [Line(f"{b:g} BDP", per[CWS][b][0].flow[paper.USF_COLUMN][0])
                                                        for b in BUFFERS], ymin=0.0, ymax=1.05)])
            rep.figures.append(Figure("fig8b.png", "the paper's Fig. 8b: BBR-CWS's upper_scaling_factor over time"))
    return paper.finish(rep, quick)


def _usf_note(usf: dict[float, list[float]], b: float, has: bool) -> str:
    return f" Its upper_scaling_factor averages {mean(usf[b]):.2f}." if has else ""


EXPERIMENT = Experiment(
    name="cws-fig8",
    figure="Fig. 8",
    summary="one flow alone, 0.5/0.8/1 BDP: throughput, retransmissions, mean cwnd of BBR, Modest BBR, BBR-CWS; "
            "upper_scaling_factor",
    runs=runs,
    analyse=analyse,
)
