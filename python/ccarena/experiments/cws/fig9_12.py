"""cws-fig9-12: one BBR (Figs. 9-10) or BBR-CWS (Figs. 11-12) flow against
one CUBIC flow, 50 Mbit/s, 10 ms, 150 s, with a 0.5 BDP (Figs. 9, 11) and
a 5 BDP (Figs. 10, 12) buffer: throughput and retransmissions per 0.1 s
(a), cwnd and RTprop from 10 to 50 s (b).

Paper, Sec. 5.4 (L274-275): Fig. 9: "BBR takes up most of the bandwidth,
and causes 16,945 excessive packet retransmissions ... which causes the
CUBIC flow's congestion window to never grow". Fig. 10: "cyclic
performance fluctuation ... when BBR overwhelmed the CUBIC flow, it caused
excessive packet retransmission ... At 10 s in Figure 10b, the original
BBR measures the new RTprop, which is larger than the actual propagation
round-trip time; hence, BBR's cwnd experiences drastic growth". Fig. 11:
"we can see the fair data transmission ... the number of packet
retransmissions was reduced by 96%. Initially, in the shallow buffer,
BBR-CWS sets high inflight-cap, so that it sends out much more data than
CUBIC flow ... BBR-CWS reduces the upper_scaling_factor". Fig. 12: "BBR-CWS
and CUBIC fairly share the bottleneck link after the BBR-CWS's first
ProbeRTT ... Because BBR-CWS measures the actual RTprop before the first
ProbeRTT phase, it limits the inflight data and makes CUBIC flow occupy
most of the bandwidth."
The claims are in claims.toml: the 16,945 retransmissions and the 96%
reduction are judged to the digit they are stated in, the RTprop above
the base RTT as a bound; "most", "cyclic", "excessive", "drastic",
"fair", "much more" have no number here and are shown (the paper's 0.9
for BBR-CWS against CUBIC is judged once, in cws-fig13).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .paper import LABEL
from ... import units
from .. import compare, traces
from ..common import key, markdown_table, mean, runs_of, values
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

BBR, CWS, BBR414 = paper.BBR.name, paper.BBR_CWS.name, paper.BBR_414.name
SHALLOW, DEEP = paper.SHALLOW_BDP, paper.DEEP_BDP
INTERVAL = "10ms"
COLUMNS = ("goodput_mbps", "cwnd", "rtt_ms", "cc_mode", "retransmits", "queue_bytes")
#: "Initially" (L275, no number): shown over the first 5 s (Startup, Drain
#: and the first ProbeBW cycles).
INITIAL_S = 5.0
#: (figure, variant, buffer) in the paper's order.
CASES = (("fig9", paper.BBR, SHALLOW), ("fig10", paper.BBR, DEEP), ("fig11", paper.BBR_CWS, SHALLOW),
         ("fig12", paper.BBR_CWS, DEEP))


def runs(quick: bool) -> list[RunSpec]:
    specs = []
    for _, v, b in CASES:
        cols = COLUMNS + (paper.usf_columns() if v is paper.BBR_CWS else ())
        for seed in paper.seeds(quick):
            specs.append(RunSpec(key(v.name, seed, buffer=paper.bkey(b)),
                                 paper.pair(v, paper.SHORT_MS, seed=seed, duration=paper.duration_s(quick),
                                            buffer_bdp=b, interval=INTERVAL), cols, ("queue_bytes",)))
    # The ablation behind the retransmission count: BBR with Linux 4.14's cwnd and pacing.
    for seed in paper.seeds(quick):
        specs.append(RunSpec(key(BBR414, seed, buffer=paper.bkey(SHALLOW)),
                             paper.pair(paper.BBR_414, paper.SHORT_MS, seed=seed, duration=paper.duration_s(quick),
                                        buffer_bdp=SHALLOW)))
    return specs


def _share(run: Outcome, index: int, lo: float, hi: float) -> float:
    t, g = paper.binned(run, "goodput_mbps", paper.STEP_S)
    sel = traces.window(t, lo, hi)
    total = g[:, sel].sum()
    return float(g[index, sel].sum() / total) if total > 0 else math.nan


def _retx_by_lead(run: Outcome) -> tuple[float, float]:
    """The BBR flow's retransmissions per second in 1-s bins where it is
    ahead (share > 60%) and where CUBIC is (share < 40%)."""
    t, g = paper.binned(run, "goodput_mbps", 1.0)
    _, rx = paper.binned(run, "retransmits", 1.0, total=True)
    total = g.sum(axis=0)
    share = np.divide(g[0], total, out=np.full_like(total, 0.5), where=total > 0)
    ahead, behind = share > 0.6, share < 0.4
    return (float(rx[0][ahead].mean()) if ahead.any() else math.nan,
            float(rx[0][behind].mean()) if behind.any() else math.nan)


def _nanmean(xs: list[float]) -> float:
    arr = np.asarray(xs, dtype=float)
    return float(np.nanmean(arr)) if np.isfinite(arr).any() else math.nan


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    end = paper.duration_s(quick)
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"Scenario 1 of Table 2: {paper.RATE_MBPS} Mbit/s, {paper.SHORT_MS} ms, one BBR or BBR-CWS flow against one "
        f"CUBIC flow, {end} s, buffers {SHALLOW:g} BDP (Figs. 9, 11) and {DEEP:g} BDP (Figs. 10, 12). Telemetry "
        "every 10 ms, summed or averaged to the paper's 0.1 s. Retransmissions: the flow's retransmitted segments "
        "over the whole run (the paper's 16,945 is for the BBR flow; it does not say whether its 96% counts both "
        "flows, we count the BBR-variant flow).",
        paper.JAIN_SETUP,
        paper.RTPROP_SETUP,
        f"\"Initially\" is shown over the first {INITIAL_S:g} s; changes of lead are counted where BBR's share of the "
        "1-s goodput crosses from above 60% to below 40% or back.",
    ]
    per = {(v.name, b): runs_of(outcomes, v.name, seeds, buffer=paper.bkey(b)) for _, v, b in CASES}
    b414 = runs_of(outcomes, BBR414, seeds, buffer=paper.bkey(SHALLOW))
    share = {c: values(r, lambda o: o.share(0)) for c, r in per.items()}
    retx = {c: values(r, lambda o: o.flows[0]["retransmits_total"]) for c, r in per.items()}
    cubic_retx = {c: values(r, lambda o: o.flows[1]["retransmits_total"]) for c, r in per.items()}
    F = {c: values(r, paper.interval_jain) for c, r in per.items()}
    W = {c: values(r, lambda o: paper.whole_jain(o)) for c, r in per.items()}
    drops = {c: values(r, lambda o: o.summary["drops"]) for c, r in per.items()}
    for (cc, b), v in F.items():
        rep.numbers[f"{cc}.{b:g}bdp.jain"] = mean(v)
        rep.numbers[f"{cc}.{b:g}bdp.share"] = mean(share[(cc, b)])
        rep.numbers[f"{cc}.{b:g}bdp.retransmits"] = mean(retx[(cc, b)])
    rep.numbers[f"{BBR414}.{SHALLOW:g}bdp.retransmits"] = mean(values(b414, lambda o: o.flows[0]["retransmits_total"]))
    reduction = [1 - c / x if x > 0 else math.nan for c, x in zip(retx[(CWS, SHALLOW)], retx[(BBR, SHALLOW)])]
    rep.numbers["retransmission_reduction"] = mean(reduction)

    def ev(c: tuple[str, float]) -> str:
        return (f"{LABEL[c[0]]} at {c[1]:g} BDP takes {100 * mean(share[c]):.1f}% "
                f"({compare.spread([100 * v for v in share[c]], '.1f')}), "
                f"F per 0.1 s {mean(F[c]):.2f}, whole-run F {mean(W[c]):.2f}, {mean(retx[c]):.0f} retransmissions "
                f"(CUBIC {mean(cubic_retx[c]):.0f}), {mean(drops[c]):.0f} drops at the bottleneck")

    # Fig. 9.
    c9 = (BBR, SHALLOW)
    bdp = paper.bdp_packets(paper.RATE_MBPS, paper.SHORT_MS)
    cubic_max = values(per[c9], lambda o: float(o.flow["cwnd"][1][traces.window(o.t_s, 10, 50)].max())
                       if traces.window(o.t_s, 10, 50).any() else math.nan)
    sent = values(per[c9], lambda o: o.goodput(0) * 1e6 / 8 / 1448 * end)
    b414_retx = rep.numbers[f"{BBR414}.{SHALLOW:g}bdp.retransmits"]
    # Fig. 10.
    c10 = (BBR, DEEP)
    changes = [paper.leader_changes(o, [0], [1]) for o in per[c10]]
    lead = [_retx_by_lead(o) for o in per[c10]]
    probes10 = [paper.probe_rtt_starts(o, 0) for o in per[c10]]
    rt10 = [paper.value_at(o, paper.rtprop(o, 0), p[0] + 1.0) if p else math.nan for o, p in zip(per[c10], probes10)]
    grow = [_cwnd_growth(o, p[0]) if p else math.nan for o, p in zip(per[c10], probes10)]
    # Fig. 11.
    c11 = (CWS, SHALLOW)
    initial = values(per[c11], lambda o: _share(o, 0, 0, INITIAL_S))
    usf11 = [paper.usf_mean(o) for o in per[c11]]
    if len(usf11) == len(seeds) and np.isfinite(usf11).all():
        rep.numbers[f"{CWS}.{SHALLOW:g}bdp.usf_mean"] = mean(usf11)
    # Fig. 12.
    c12 = (CWS, DEEP)
    probes12 = [paper.probe_rtt_starts(o, 0) for o in per[c12]]
    first = [p[0] if p else float(end) for p in probes12]
    before = [_share(o, 1, 0, f) for o, f in zip(per[c12], first)]
    after = [paper.interval_jain(o, f + 0.5, end) for o, f in zip(per[c12], first)]
    rt12 = [paper.value_at(o, paper.rtprop(o, 0), end) for o in per[c12]]
    # Does BBR-CWS still cycle as BBR does at 5 BDP (Fig. 10's "once every 10 s")?
    changes12 = [paper.leader_changes(o, [0], [1]) for o in per[c12]]
    # L289: BBR-CWS's own queue, in BDPs of the link (rate x base RTT, wire bytes as the queue counts them).
    bdp_bytes = units.bdp_bytes(paper.RATE_MBPS * 1_000_000, paper.SHORT_MS * 1_000_000)
    own_max = {b: values(per[(CWS, b)], lambda o: traces.peak(o.t_s, o.flow["queue_bytes"][0])[0] / bdp_bytes)
               for b in (SHALLOW, DEEP)}
    own_mean = {b: values(per[(CWS, b)], lambda o: traces.mean_over(o.t_s, o.flow["queue_bytes"][0], 0, end)
                          / bdp_bytes) for b in (SHALLOW, DEEP)}
    own_peak_s = values(per[(CWS, DEEP)], lambda o: traces.peak(o.t_s, o.flow["queue_bytes"][0])[1])
    deep_rtprop = [paper.value_at(o, paper.rtprop(o, 0), t) for o, t in zip(per[(CWS, DEEP)], own_peak_s)]

    rep.measured.update({
        "fig9.bbr-most": Measured(share[c9], note=ev(c9) + "."),
        "fig9.bbr-retransmits": Measured(
            retx[c9], note=f"{ev(c9)}; that is {100 * mean(retx[c9]) / mean(sent):.2f}% of the segments BBR delivers "
                           f"(the paper's count would be "
                           f"{100 * paper.stated('fig9.bbr-retransmits') / mean(sent):.1f}% of our BBR's deliveries). "
                           f"BBR with Linux 4.14's cwnd and pacing retransmits {b414_retx:.0f}."),
        "fig9.cubic-cwnd-never-grows": Measured(cubic_max, note=f"1 BDP = {bdp:.0f} packets."),
        "fig10.cyclic": Measured(
            [float(len(c)) for c in changes],
            note=f"{ev(c10)}; BBR's ProbeRTTs start at {', '.join(f'{x:.1f}' for x in probes10[0][:6])} s "
                 f"(seed {seeds[0]})."),
        "fig10.retransmits-when-ahead": Measured(
            members={"BBR ahead": [a for a, _ in lead], "CUBIC ahead": [b for _, b in lead]}),
        "fig10.rtprop-inflated": Measured(
            rt10, note=f"per seed: {', '.join(f'{v:.1f}' for v in rt10)} ms, first ProbeRTT at "
                       f"{', '.join(f'{p[0]:.1f}' if p else '-' for p in probes10)} s."),
        "fig10.cwnd-drastic-growth": Measured(grow),
        "fig11.fair": Measured(F[c11], note=ev(c11) + "."),
        "fig11.retransmission-reduction": Measured(reduction, note=f"{ev(c11)}; {ev(c9)}."),
        "fig11.initially-much-more": Measured(initial),
        "fig11.usf-reduced": Measured(usf11, note="" if np.isfinite(usf11).all() else paper.USF_TODO),
        "fig12.fair-after-probe-rtt": Measured(
            after, note=f"first ProbeRTT at {', '.join(f'{f:.1f}' for f in first)} s; {ev(c12)}; the lead changes "
                        f"{mean([float(len(c)) for c in changes12]):.1f} times per run (BBR in its place, Fig. 10: "
                        f"{mean([float(len(c)) for c in changes]):.1f})."),
        "fig12.cubic-most-before-probe-rtt": Measured(
            before, note=f"first ProbeRTT at {', '.join(f'{f:.1f}' for f in first)} s."),
        "fig12.appropriate-rtprop": Measured(rt12),
        "never-exceeds-1bdp": Measured(
            members={f"{b:g} BDP buffer": own_max[b] for b in (SHALLOW, DEEP)},
            note="its own queue on average: " + ", ".join(f"{mean(own_mean[b]):.2f} BDP in the {b:g} BDP buffer"
                                                         for b in (SHALLOW, DEEP))
            + f"; in the {DEEP:g} BDP buffer it is largest at {', '.join(f'{t:.0f}' for t in own_peak_s)} s (per seed), "
              f"when its RTprop is {', '.join(f'{r:.1f}' for r in deep_rtprop)} ms against the path's "
              f"{paper.SHORT_MS} ms: with RTprop measured over CUBIC's standing queue, its BDP estimate, and the "
              "cwnd cap scaled from it, are that much larger (L200 states the 0-1 BDP bound through "
              "upper_scaling_factor for buffers \"of less than 1 BDP\")."),
    })

    table = [[f"Fig. {name[3:]}", LABEL[v.name], f"{b:g}", f"{100 * mean(share[(v.name, b)]):.1f}%",
              f"{mean(F[(v.name, b)]):.3f}", f"{mean(W[(v.name, b)]):.3f}",
              f"{mean(retx[(v.name, b)]):.0f} / {mean(cubic_retx[(v.name, b)]):.0f}"] for name, v, b in CASES]
    rep.sections.append(("Per case", markdown_table(
        ["figure", "algorithm", "buffer (BDP)", "its share", "F per 0.1 s", "whole-run F",
         "retransmissions (it / CUBIC)"], table) + "\n\nMeans over seeds, whole run."))

    if fig_dir is not None:
        for name, v, b in CASES:
            run = per[(v.name, b)][0]
            t, g = paper.binned(run, "goodput_mbps")
            _, rx = paper.binned(run, "retransmits", total=True)
            label = LABEL[v.name]
            time_panels(fig_dir / f"{name}a.png", f"{label} vs CUBIC, {b:g} BDP, {paper.RATE_MBPS} Mbit/s, "
                        f"{paper.SHORT_MS} ms (seed {seeds[0]})", t,
                        [Panel("goodput (Mbit/s per 0.1 s)", [Line(label, g[0]), Line("CUBIC", g[1])]),
                         Panel("retransmissions per 0.1 s", [Line(label, rx[0]), Line("CUBIC", rx[1])])])
            panels = [Panel("cwnd (packets)", [Line(label, run.flow["cwnd"][0]), Line("CUBIC", run.flow["cwnd"][1])]),
                      Panel("RTprop (ms)", [Line(f"{label} RTprop", paper.rtprop(run, 0)),
                                            Line("base RTT", np.full(len(run.t_s), float(paper.SHORT_MS)),
                                                 style={"color": "dimgray", "linestyle": "--"})], ymin=None)]
            if v is paper.BBR_CWS and paper.has_usf(run) and np.isfinite(run.flow[paper.USF_COLUMN][0]).any():
                panels.append(Panel("upper_scaling_factor", [Line("", run.flow[paper.USF_COLUMN][0])], ymax=1.05))
            time_panels(fig_dir / f"{name}b.png", f"{label} vs CUBIC, {b:g} BDP: cwnd and RTprop, 10-50 s "
                        f"(seed {seeds[0]})", run.t_s, panels, xlim=(10.0, min(50.0, float(end))))
            rep.figures += [Figure(f"{name}a.png", f"the paper's Fig. {name[3:]}a: throughput and retransmissions "
                                   "per 0.1 s"),
                            Figure(f"{name}b.png", f"the paper's Fig. {name[3:]}b: cwnd and RTprop, 10-50 s")]
    return paper.finish(rep, quick)


def _cwnd_growth(run: Outcome, start: float) -> float:
    """The flow's mean cwnd 1-3 s after a ProbeRTT began over 3-1 s before."""
    cw = run.flow["cwnd"][0].astype(float)
    before = traces.mean_over(run.t_s, cw, start - 3, start - 1)
    after = traces.mean_over(run.t_s, cw, start + 1, start + 3)
    return after / before if before > 0 else math.nan


EXPERIMENT = Experiment(
    name="cws-fig9-12",
    figure="Figs. 9-12",
    summary="BBR and BBR-CWS vs CUBIC at 0.5 and 5 BDP (50 Mbit/s, 10 ms): throughput, retransmissions, cwnd, RTprop",
    runs=runs,
    analyse=analyse,
)
