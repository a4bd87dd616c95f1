"""cws-fig14-15: three BBR (Fig. 14) or three BBR-CWS (Fig. 15) flows
against three CUBIC flows, 0.8 and 5 BDP, 150 s: per-flow throughput.

Paper, Sec. 5.5 (L283-284): "In Figure 14a, we can see serious unfair data
transmission between the flows of the two groups of algorithms. Most of
the bandwidth is occupied by the three original BBR flows. In the
competition among BBR-CWSs and CUBIC flows, the two groups of algorithms
take up similar bottleneck bandwidth (Figure 15a). With a large buffer of
5 BDP (Figure 14b), the throughputs fluctuate continuously. However,
Figure 15b shows that all six flows have reasonable bandwidth." The
claims are in claims.toml; none has a number ("most", "similar",
"fluctuate continuously", "reasonable"), so all four are shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .paper import LABEL
from .. import compare
from ..common import key, markdown_table, mean, runs_of, values
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

VARIANTS = (paper.BBR, paper.BBR_CWS)
BBR, CWS = (v.name for v in VARIANTS)
SHALLOW, DEEP = paper.SHALLOW_08_BDP, paper.DEEP_BDP
N = 3
GROUPS = [list(range(N)), list(range(N, 2 * N))]


def runs(quick: bool) -> list[RunSpec]:
    return [
        RunSpec(key(v.name, seed, buffer=paper.bkey(b)),
                paper.pair(v, paper.SHORT_MS, seed=seed, duration=paper.duration_s(quick), buffer_bdp=b, count=N),
                ("goodput_mbps", "cc_mode"))
        for v in VARIANTS for b in (SHALLOW, DEEP) for seed in paper.seeds(quick)
    ]


def _cov(run: Outcome) -> float:
    """Mean over flows of the coefficient of variation of 1-s goodput."""
    _, g = paper.binned(run, "goodput_mbps", 1.0)
    m = g.mean(axis=1)
    return float(np.mean(np.divide(g.std(axis=1), m, out=np.zeros_like(m), where=m > 0)))


#: ProbeRTT episodes of two flows "together": starts this close (s), about
#: one ProbeRTT's 200 ms.
TOGETHER_S = 0.2


def synchronized(run: Outcome) -> float:
    """The share of the BBR-variant flows' ProbeRTT starts (from the
    first group's second ProbeRTT round on) that every other flow of the
    group matches within TOGETHER_S: 1 when they all probe together."""
    starts = [paper.probe_rtt_starts(run, i) for i in GROUPS[0]]
    matched = total = 0
    for i, own in enumerate(starts):
        for t in own[1:]:
            total += 1
            matched += all(any(abs(t - u) <= TOGETHER_S for u in other) for j, other in enumerate(starts) if j != i)
    return matched / total if total else float("nan")


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"Sec. 5.5: three BBR or BBR-CWS hosts and three CUBIC hosts, starting together, {paper.duration_s(quick)} s, "
        f"{SHALLOW:g} and {DEEP:g} BDP. The paper names neither rate nor RTT; we use scenario 1 of Table 2 "
        f"({paper.RATE_MBPS} Mbit/s, {paper.SHORT_MS} ms).",
        "Shares are of the six flows' goodput over the whole run; Jain's index over the six flows is shown per 0.1 s "
        "(averaged over the run) and on whole-run goodput. Fluctuation: the coefficient of variation of each flow's "
        "1-s goodput, averaged over the flows.",
    ]
    per = {(cc, b): runs_of(outcomes, cc, seeds, buffer=paper.bkey(b)) for cc in (BBR, CWS) for b in (SHALLOW, DEEP)}
    group = {c: values(r, lambda o: sum(o.share(i) for i in GROUPS[0])) for c, r in per.items()}
    six = {c: values(r, lambda o: paper.whole_jain(o)) for c, r in per.items()}
    six_t = {c: values(r, paper.interval_jain) for c, r in per.items()}
    smallest = {c: values(r, lambda o: min(o.share(i) for i in range(2 * N))) for c, r in per.items()}
    cov = {c: values(r, _cov) for c, r in per.items()}
    sync = {c: values(r, synchronized) for c, r in per.items()}
    for (cc, b) in per:
        rep.numbers[f"{cc}.{b:g}bdp.group_share"] = mean(group[(cc, b)])
        rep.numbers[f"{cc}.{b:g}bdp.jain_six"] = mean(six[(cc, b)])
        rep.numbers[f"{cc}.{b:g}bdp.cov"] = mean(cov[(cc, b)])

    def ev(c: tuple[str, float]) -> str:
        return (f"the three {LABEL[c[0]]} flows take {100 * mean(group[c]):.1f}% together "
                f"({compare.spread([100 * v for v in group[c]], '.1f')}), the smallest flow "
                f"{100 * mean(smallest[c]):.1f}%, six-flow F {mean(six[c]):.2f} (per 0.1 s {mean(six_t[c]):.2f})")

    a14, b14, a15, b15 = (BBR, SHALLOW), (BBR, DEEP), (CWS, SHALLOW), (CWS, DEEP)
    rep.measured.update({
        "fig14.bbr-most": Measured(group[a14], note=ev(a14) + "."),
        "fig15.similar": Measured(group[a15], note=ev(a15) + "."),
        "fig14.fluctuate": Measured(cov[b14], note=f"with BBR-CWS (Fig. 15b): {mean(cov[b15]):.2f}."),
        "fig15.reasonable": Measured(smallest[b15], note=ev(b15) + f"; a fair share is {100 / (2 * N):.1f}%."),
        "multi-flow.synchronization": Measured(
            members={f"{b:g} BDP": sync[(CWS, b)] for b in (SHALLOW, DEEP)},
            note="BBR in their place: " + ", ".join(f"{100 * mean(sync[(BBR, b)]):.0f}% at {b:g} BDP"
                                                    for b in (SHALLOW, DEEP)) + "."),
    })
    rep.comparisons.append(compare.ours_only(
        "Fig. 14b: Jain's index of the six flows per 0.1 s at 5 BDP (BBR)", f"{mean(six_t[b14]):.2f}",
        compare.spread(six_t[b14], ".2f"), note=ev(b14) + "."))
    rows = [[LABEL[cc], f"{b:g}", f"{100 * mean(group[(cc, b)]):.1f}%", f"{100 * mean(smallest[(cc, b)]):.1f}%",
             f"{mean(six[(cc, b)]):.3f}", f"{mean(six_t[(cc, b)]):.3f}", f"{mean(cov[(cc, b)]):.2f}"]
            for cc in (BBR, CWS) for b in (SHALLOW, DEEP)]
    rep.sections.append(("Per case", markdown_table(
        ["algorithm", "buffer (BDP)", "its three flows' share", "smallest flow's share", "six-flow F (whole run)",
         "six-flow F per 0.1 s", "fluctuation (CoV of 1-s goodput)"], rows) + "\n\nMeans over seeds."))

    if fig_dir is not None:
        fair = paper.RATE_MBPS * 1448 / 1514 / (2 * N)
        for name, (cc, b) in (("fig14a", a14), ("fig14b", b14), ("fig15a", a15), ("fig15b", b15)):
            run = per[(cc, b)][0]
            t, g = paper.binned(run, "goodput_mbps", 1.0)
            lines = [Line(f"{LABEL[cc]} {i + 1}", g[i], style={"color": f"C{i}"}) for i in GROUPS[0]]
            lines += [Line(f"CUBIC {i - N + 1}", g[i], style={"color": f"C{i}", "linestyle": "--"}) for i in GROUPS[1]]
            lines.append(Line("fair share", np.full(len(t), fair), style={"color": "dimgray", "linestyle": ":"}))
            time_panels(fig_dir / f"{name}.png", f"3 {LABEL[cc]} vs 3 CUBIC, {b:g} BDP, {paper.RATE_MBPS} Mbit/s, "
                        f"{paper.SHORT_MS} ms (seed {seeds[0]})", t,
                        [Panel("goodput (Mbit/s, 1 s mean)", lines)], height=3.4)
            rep.figures.append(Figure(f"{name}.png", f"the paper's Fig. {name[3:5]}{name[5]}: per-flow goodput"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="cws-fig14-15",
    figure="Figs. 14-15",
    summary="3 BBR or 3 BBR-CWS vs 3 CUBIC at 0.8 and 5 BDP (50 Mbit/s, 10 ms): per-flow throughput",
    runs=runs,
    analyse=analyse,
)
