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
from ..common import key, markdown_table, mean, runs_of, values
from ..figures import Line, Panel, Series, grouped_bars, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

VARIANTS = (paper.BBR, paper.MODEST, paper.BBR_CWS, paper.BBR_414)
CCS = tuple(v.name for v in VARIANTS)
BBR, MODEST, CWS, BBR414 = CCS
BUFFERS = (0.5, 0.8, 1.0)
INTERVAL = "10ms"
COLUMNS = ("goodput_mbps", "cwnd", "retransmits")
#: The claims whose numbers (L266) Fig. 8a's cwnd bars carry: (variant, buffer) -> claim id.
CWND_CLAIMS = {(BBR, 0.5): "fig8.bbr-cwnd-0.5bdp", (CWS, 0.5): "fig8.cws-cwnd-0.5bdp", (CWS, 1.0): "fig8.cws-cwnd-1bdp"}


def paper_cwnd() -> dict[tuple[str, float], float]:
    """The paper's mean cwnds (MSS), as claims.toml states them."""
    return {point: paper.stated(cid) for point, cid in CWND_CLAIMS.items()}


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
    dur = paper.single_duration_s(quick)
    bdp = paper.bdp_packets(paper.RATE_MBPS, paper.SHORT_MS)
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"Sec. 5.3: one flow alone, {paper.RATE_MBPS} Mbit/s, {paper.SHORT_MS} ms, {dur} s, buffers "
        f"{', '.join(f'{b:g}' for b in BUFFERS)} BDP (1 BDP = {bdp:.1f} MSS). \"Average congestion window\": the "
        "time mean of cwnd sampled every 10 ms over the run, in MSS (1448 B); retransmissions over the whole run."
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
    #: "Shallow": below 1 BDP (the paper's Fig. 1: "buffer size < 1 BDP (shallow)").
    shallow = [b for b in BUFFERS if b < 1]
    names = {b: f"{b:g} BDP" for b in BUFFERS}

    def cwnd_reason(cc: str, b: float) -> str:
        return (f"at {b:g} BDP the pipe plus buffer hold {(1 + b) * bdp:.0f} MSS; our {LABEL[cc]} averages "
                f"{mean(cwnd[cc][b]):.1f} MSS with {mean(retx[cc][b]):.0f} retransmissions in {dur} s; BBR with "
                f"Linux 4.14's cwnd (no ACK-aggregation allowance) averages {mean(cwnd[BBR414][b]):.1f} MSS.")

    rep.measured.update({
        "fig8.bbr-retransmits": Measured(members={names[b]: retx[BBR][b] for b in BUFFERS}),
        "fig8.bbr-cwnd-similar": Measured(
            [max(cwnd[BBR][b][k] for b in BUFFERS) / min(cwnd[BBR][b][k] for b in BUFFERS) for k in range(len(seeds))],
            note=f"BBR-CWS's 71 over 50 MSS, which the paper calls smaller with a smaller buffer, is "
                 f"{71 / 50:.2f}x; " + " ".join(cwnd_reason(BBR, b) for b in BUFFERS)),
        "fig8.modest-cwnd-below-bbr": Measured(
            members={names[b]: [m - x for m, x in zip(cwnd[MODEST][b], cwnd[BBR][b])] for b in shallow},
            note=" ".join(cwnd_reason(MODEST, b) for b in shallow)),
        "fig8.modest-retx-reduction": Measured(
            reduction[best], note=f"largest at {best:g} BDP; " + "; ".join(
                f"at {b:g} BDP Modest BBR retransmits {mean(retx[MODEST][b]):.0f} segments against BBR's "
                f"{mean(retx[BBR][b]):.0f} ({100 * mean(reduction[b]):.1f}% fewer)" for b in BUFFERS) + "."),
        "fig8.cws-cwnd-rises": Measured(members={names[b]: cwnd[CWS][b] for b in BUFFERS},
                                        note=" ".join(cwnd_reason(CWS, b) for b in BUFFERS)),
        "fig8.cws-similar-throughput": Measured(
            members={names[b]: [c / x if x > 0 else float("nan") for c, x in zip(good[CWS][b], good[BBR][b])]
                     for b in BUFFERS}),
        "fig8.bbr-cwnd-0.5bdp": Measured(cwnd[BBR][0.5], note=cwnd_reason(BBR, 0.5)),
        "fig8.cws-cwnd-0.5bdp": Measured(cwnd[CWS][0.5], note=cwnd_reason(CWS, 0.5) + _usf_note(usf, 0.5, has_usf)),
        "fig8.cws-below-bbr-0.5bdp": Measured(members={"BBR-CWS": cwnd[CWS][0.5], "BBR": cwnd[BBR][0.5]},
                                              note=cwnd_reason(CWS, 0.5)),
        "fig8.cws-cwnd-1bdp": Measured(cwnd[CWS][1.0], note=cwnd_reason(CWS, 1.0) + _usf_note(usf, 1.0, has_usf)),
        "fig8.usf-rises": Measured(
            members={names[b]: usf[b] for b in BUFFERS},
            note=("; ".join(f"at {b:g} BDP mean {mean(usf[b]):.2f} ({compare.spread(usf[b], '.2f')}) with "
                            f"{mean(retx[CWS][b]):.0f} retransmissions in {dur} s and a mean cwnd of "
                            f"{mean(cwnd[CWS][b]):.1f} MSS (pipe plus buffer {(1 + b) * bdp:.0f} MSS)"
                            for b in BUFFERS) + ".") if has_usf else paper.USF_TODO),
    })
    rep.comparisons.append(compare.ours_only("BBR-CWS: retransmissions in 60 s (0.5, 0.8, 1 BDP)",
                                             ", ".join(f"{mean(retx[CWS][b]):.0f}" for b in BUFFERS)))

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
            ref = paper_cwnd() if data is cwnd else {}
            refs = [[ref.get((cc, b), float("nan")) for b in BUFFERS] for cc in shown] if ref else []
            high = max([max(data[cc][b]) for cc in shown for b in BUFFERS] + list(ref.values()))
            grouped_bars(fig_dir / name, f"One flow alone, {paper.RATE_MBPS} Mbit/s, {paper.SHORT_MS} ms: {ylabel}",
                         groups, series, ylabel=ylabel, xlabel="bottleneck buffer",
                         ylim=(0, top if top is not None else 1.1 * max(high, 1.0)), references=refs,
                         reference_label="the paper (L266)")
        rep.figures += [Figure("fig8a-throughput.png", "the paper's Fig. 8a: goodput (mean, seed range)"),
                        Figure("fig8a-retransmissions.png", "the paper's Fig. 8a: retransmissions over 60 s"),
                        Figure("fig8a-cwnd.png", "the paper's Fig. 8a: mean cwnd (MSS); black marks: the paper's "
                                                 "82, 50 and 71 MSS (L266)")]
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
