"""cws-table2: Table 2's 20 Mbit/s scenarios (3 and 4: 10 and 40 ms), one
BBR or BBR-CWS flow against one CUBIC flow, at the paper's shallow and
deep buffers (0.5 and 5 BDP, L270).

Paper (L270): "we set up an experimental environment in which BBR and
CUBIC transmitted data in four scenarios, as shown in Table 2. We set the
shallow buffer to 0.5 BDP and 5 BDP for the deep buffer." Table 2
(L425-L430): scenarios 1-2 at 50 Mbit/s, 3-4 at 20 Mbit/s, each at 10 and
40 ms. The text reports scenario 1 (Figs. 9-12) and Fig. 13 at 10 and
40 ms without its rate; cws-fig9-12 and cws-fig13 run 50 Mbit/s. Here the
claims Sec. 5.4 states for every latency (L276, L278) are judged at
20 Mbit/s: BBR's 0.5 to 0.6 below 1 BDP at 10 ms and about 0.9 in the
deep buffer at 40 ms, BBR-CWS's 0.9 or higher everywhere and its gain over
BBR. Claims: claims.toml; this module measures them per seed, on both
readings of F (per 0.1 s and on whole-run throughput).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from .paper import LABEL
from .. import compare
from ..common import key, markdown_table, mean, runs_of, values
from ..figures import Series, grouped_bars
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

#: Table 2's scenarios 3 and 4.
RATE_MBPS = 20
RTTS = (paper.SHORT_MS, paper.LONG_MS)
BUFFERS = (paper.SHALLOW_BDP, paper.DEEP_BDP)
VARIANTS = (paper.BBR, paper.BBR_CWS)
BBR, CWS = (v.name for v in VARIANTS)
#: The other reasonable reading of the paper's F (claims.toml's header).
WHOLE_RUN = "Jain's index of whole-run throughput"


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(v.name, seed, rtt=rtt, buffer=paper.bkey(b)),
                    paper.pair(v, rtt, seed=seed, duration=paper.duration_s(quick), buffer_bdp=b,
                               rate=f"{RATE_MBPS}Mbit"), ("goodput_mbps",))
            for v in VARIANTS for rtt in RTTS for b in BUFFERS for seed in paper.seeds(quick)]


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    points = [(rtt, b) for rtt in RTTS for b in BUFFERS]
    per = {(cc, p): runs_of(outcomes, cc, seeds, rtt=p[0], buffer=paper.bkey(p[1])) for cc in (BBR, CWS)
           for p in points}
    F = {k: values(r, paper.interval_jain) for k, r in per.items()}
    W = {k: values(r, lambda o: paper.whole_jain(o)) for k, r in per.items()}
    share = {k: values(r, lambda o: o.share(0)) for k, r in per.items()}
    retx = {k: values(r, lambda o: o.flows[0]["retransmits_total"]) for k, r in per.items()}
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"Table 2's scenarios 3-4: {RATE_MBPS} Mbit/s, {' and '.join(f'{r} ms' for r in RTTS)}, one BBR or BBR-CWS "
        f"flow against one CUBIC flow, {paper.duration_s(quick)} s, buffers {' and '.join(f'{b:g}' for b in BUFFERS)} "
        "BDP (the paper's shallow and deep buffers, L270). Scenarios 1-2 (50 Mbit/s) are cws-fig13's 10 and 40 ms "
        "points.",
        paper.JAIN_SETUP,
    ]
    for (cc, (rtt, b)), xs in F.items():
        rep.numbers[f"{cc}.jain.{rtt}ms.{b:g}bdp"] = mean(xs)
        rep.numbers[f"{cc}.jain_whole.{rtt}ms.{b:g}bdp"] = mean(W[(cc, (rtt, b))])

    def name(p: tuple[int, float]) -> str:
        return f"{p[0]} ms, {p[1]:g} BDP"

    def evidence(cc: str, pts: list[tuple[int, float]]) -> str:
        return "; ".join(f"{name(p)}: {LABEL[cc]} {100 * mean(share[(cc, p)]):.1f}% of the goodput, F "
                         f"{mean(F[(cc, p)]):.3f}, whole-run F {mean(W[(cc, p)]):.3f}" for p in pts) + "."

    def both(cc: str, pts: list[tuple[int, float]], note: str) -> Measured:
        return Measured(members={name(p): F[(cc, p)] for p in pts},
                        alternatives={WHOLE_RUN: Measured(members={name(p): W[(cc, p)] for p in pts})}, note=note)

    def gain(G: dict) -> dict[str, list[float]]:
        return {name(p): [c - b for c, b in zip(G[(CWS, p)], G[(BBR, p)], strict=True)] for p in points}

    shallow10 = [(paper.SHORT_MS, paper.SHALLOW_BDP)]
    deep40 = [(paper.LONG_MS, paper.DEEP_BDP)]
    rep.measured.update({
        "table2.bbr-10ms-shallow": both(BBR, shallow10, evidence(BBR, shallow10)),
        "table2.bbr-40ms-deep": both(BBR, deep40, evidence(BBR, deep40)),
        "table2.cws-at-least-0.9": both(CWS, points, evidence(CWS, points)),
        "table2.cws-above-bbr": Measured(members=gain(F), alternatives={WHOLE_RUN: Measured(members=gain(W))},
                                         note=evidence(BBR, points)),
    })
    rows = [[LABEL[cc], f"{rtt} ms", f"{b:g}", f"{100 * mean(share[(cc, (rtt, b))]):.1f}%",
             f"{mean(F[(cc, (rtt, b))]):.3f}", compare.spread(F[(cc, (rtt, b))], ".3f") or "-",
             f"{mean(W[(cc, (rtt, b))]):.3f}", f"{mean(retx[(cc, (rtt, b))]):.0f}"]
            for cc in (BBR, CWS) for rtt, b in points]
    rep.sections.append(("Per point (mean over seeds)", markdown_table(
        ["algorithm", "RTT", "buffer (BDP)", "its share", "F per 0.1 s", "over seeds", "whole-run F",
         "its retransmissions"], rows)))
    if fig_dir is not None:
        colors = {BBR: "tab:orange", CWS: "tab:green"}
        grouped_bars(fig_dir / "table2.png", f"Table 2's scenarios 3-4 ({RATE_MBPS} Mbit/s): Jain's index F per "
                     "0.1 s against CUBIC (mean, seed range)", [name(p) for p in points],
                     [Series(LABEL[cc], [mean(F[(cc, p)]) for p in points], [min(F[(cc, p)]) for p in points],
                             [max(F[(cc, p)]) for p in points], style={"color": colors[cc]}) for cc in (BBR, CWS)],
                     ylabel="Jain's index F", hline=(paper.stated("fig13.cws-at-least-0.9"), "0.9 (L278)"),
                     ylim=(0.4, 1.0))
        rep.figures.append(Figure("table2.png", f"F per 0.1 s of BBR and BBR-CWS against CUBIC at {RATE_MBPS} "
                                                "Mbit/s, each RTT and buffer"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="cws-table2",
    figure="Table 2, scenarios 3-4",
    summary="BBR and BBR-CWS vs CUBIC at 20 Mbit/s, 10 and 40 ms, 0.5 and 5 BDP: Jain's index",
    runs=runs,
    analyse=analyse,
)
