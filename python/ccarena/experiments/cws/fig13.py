"""cws-fig13: Jain's index of one BBR-variant flow against one CUBIC flow
as the buffer goes from 0.2 to 6 BDP, at 10 ms (Fig. 13a) and 40 ms
(Fig. 13b): BBR, Modest BBR and BBR-CWS; and, not judged, BBR-CWS with
the text's usf reset after a lower RTprop (Sec. 4.2, which Algorithm 1
lacks) and BBR with Linux 4.14's cwnd/pacing.

Paper, Sec. 5.4 (L276-278): BBR at 10 ms: "When the buffer size is
smaller than 1 BDP, the fairness index between the two flows has a value
from 0.5 to 0.6 ... when the buffer size is larger than 1 BDP, the
fairness between the original BBR and CUBIC gets lower as the buffer grows
larger"; at 40 ms "still very low in shallow buffer environment, even
though it has a good fairness about 0.9 when the buffer is deep." Modest
BBR: "has improved over the original BBR, but, in the small buffer
environment, it is still considered unfair given that the fairness index
... is scattered across various distributions of 0.6 and 0.85. Moreover,
when the buffer size is larger than 1 BDP, the fairness between Modest BBR
and CUBIC is considerably improved compared to the original BBR. However,
as the buffer size gets larger, the fairness between two flows sharply
decreases." BBR-CWS: "an improved fairness index of 0.9 or higher in all
latency environments without being affected by bottleneck buffer size.
Although the fairness index between the two flows decreases with the
buffer size when the buffer larger is than 1 BDP, the reduction is
significantly lower than the original BBR and Modest BBR." Abstract:
"fairness between BBR-CWS and CUBIC improved up to 73%"; conclusion: "a
fairness index of 0.9 or higher in most buffer cases from 0.2 to 6 BDP".
The claims are in claims.toml. The paper defines F (L272) on "throughput"
without saying over what interval, so every claim on F is measured per
0.1 s (averaged) and on whole-run throughput, and a row whose verdict
turns on the reading says so; "very low", "considerably", "most" have no
number and are shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from .paper import LABEL
from .. import compare
from ..common import key, live_of, markdown_table, mean, runs_of, values
from ..figures import Series, sweep
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

VARIANTS = (paper.BBR, paper.MODEST, paper.BBR_CWS, paper.BBR_414, paper.BBR_CWS_RESET)
CCS = tuple(v.name for v in VARIANTS)
BBR, MODEST, CWS, BBR414, CWS_RESET = CCS
#: The paper names the range 0.2-6 BDP (conclusion) but not its grid.
BUFFERS = (0.2, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0)
#: Two buffers above 1 BDP, so that the order claim has a step in a --quick run.
QUICK_BUFFERS = (0.5, 2.0, 5.0)
RTTS = (paper.SHORT_MS, paper.LONG_MS)
#: The claim whose number (L278: "0.9 or higher") the figures draw and the
#: counts in results.json use.
AT_LEAST_09 = "fig13.cws-at-least-0.9"
#: The other reasonable reading of the paper's F (claims.toml's header).
WHOLE_RUN = "Jain's index of whole-run throughput"


def buffers(quick: bool) -> tuple[float, ...]:
    return QUICK_BUFFERS if quick else BUFFERS


def runs(quick: bool) -> list[RunSpec]:
    return [
        RunSpec(key(v.name, seed, rtt=rtt, buffer=paper.bkey(b)),
                paper.pair(v, rtt, seed=seed, duration=paper.duration_s(quick), buffer_bdp=b), ("goodput_mbps",))
        for v in VARIANTS for rtt in RTTS for b in buffers(quick) for seed in paper.seeds(quick)
    ]


#: What ``--live`` repeats on real Linux (BBR-CWS as BPF, kernel CUBIC and
#: BBR), seed 1: the points where our BBR-CWS misses the paper's claims
#: (F below 0.9 in deep buffers at 10 ms; below BBR at 40 ms) and BBR there.
LIVE_POINTS = ((CWS, paper.SHORT_MS, 6.0), (CWS, paper.LONG_MS, 3.0), (BBR, paper.LONG_MS, 3.0))
QUICK_LIVE_POINTS = ((CWS, paper.SHORT_MS, 5.0),)


def live_points(quick: bool) -> tuple[tuple[str, int, float], ...]:
    return QUICK_LIVE_POINTS if quick else LIVE_POINTS


def live_runs(quick: bool) -> list[RunSpec]:
    by_key = {s.key: s for s in runs(quick)}
    return [by_key[key(cc, paper.SEEDS[0], rtt=rtt, buffer=paper.bkey(b))] for cc, rtt, b in live_points(quick)]


def _live_rows(outcomes: Mapping[str, Outcome], quick: bool) -> list:
    rows = []
    for cc, rtt, b in live_points(quick):
        point = {"rtt": rtt, "buffer": paper.bkey(b)}
        live = live_of(outcomes, cc, paper.SEEDS[0], **point)
        if live is None:
            continue
        sim = outcomes[key(cc, paper.SEEDS[0], **point)]

        def show(r: Outcome) -> str:
            return f"F {paper.interval_jain(r):.2f}, whole-run F {paper.whole_jain(r):.2f}, share {100 * r.share(0):.1f}%"

        rows.append(compare.live(f"{LABEL[cc]} vs CUBIC, {rtt} ms, {b:g} BDP (seed {paper.SEEDS[0]})",
                                 show(live), show(sim)))
    return rows


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    points = buffers(quick)
    seeds = paper.seeds(quick)
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"Mininet scenarios 1-2 of Table 2: {paper.RATE_MBPS} Mbit/s (the paper does not name Fig. 13's rate; "
        f"Sec. 5.4 runs scenario 1), RTT {paper.SHORT_MS} and {paper.LONG_MS} ms, one BBR-variant flow against one "
        f"CUBIC flow, {paper.duration_s(quick)} s, buffers {', '.join(f'{b:g}' for b in points)} BDP (the paper "
        "names the range 0.2-6 BDP, not its points).",
        paper.JAIN_SETUP,
        "Every claim on F is measured with both readings of the paper's F (per 0.1 s, averaged; and on whole-run "
        "throughput); where they give different verdicts the row says it depends on the metric. Claims on "
        "differences (BBR-CWS's F minus BBR's) pair each seed of one variant with the same seed of the other.",
    ]
    per = {cc: {(rtt, b): runs_of(outcomes, cc, seeds, rtt=rtt, buffer=paper.bkey(b)) for rtt in RTTS for b in points}
           for cc in CCS}
    F = {cc: {p: values(per[cc][p], paper.interval_jain) for p in per[cc]} for cc in CCS}
    W = {cc: {p: values(per[cc][p], lambda r: paper.whole_jain(r)) for p in per[cc]} for cc in CCS}
    share = {cc: {p: values(per[cc][p], lambda r: r.share(0)) for p in per[cc]} for cc in CCS}
    retx = {cc: {p: values(per[cc][p], lambda r: r.flows[0]["retransmits_total"]) for p in per[cc]} for cc in CCS}
    m = {cc: {p: mean(F[cc][p]) for p in F[cc]} for cc in CCS}
    for cc in CCS:
        for (rtt, b), v in F[cc].items():
            rep.numbers[f"{cc}.jain.{rtt}ms.{b:g}bdp"] = mean(v)
            rep.numbers[f"{cc}.jain_whole.{rtt}ms.{b:g}bdp"] = mean(W[cc][(rtt, b)])
    shallow = [b for b in points if b < 1]
    deeper = [b for b in points if b > 1]
    allp = [(r, b) for r in RTTS for b in points]
    fair = paper.stated(AT_LEAST_09)

    def name(p: tuple[int, float]) -> str:
        return f"{p[0]} ms, {p[1]:g} BDP"

    def evidence(cc: str, pts: list[tuple[int, float]]) -> str:
        return "; ".join(f"{name(p)}: {LABEL[cc]} {100 * mean(share[cc][p]):.1f}% of the goodput, F "
                         f"{m[cc][p]:.3f}, whole-run F {mean(W[cc][p]):.3f}, {mean(retx[cc][p]):.0f} retransmissions"
                         for p in pts) + "."

    def diff(a: str, b: str, p: tuple[int, float], G: dict) -> list[float]:
        return [x - y for x, y in zip(G[a][p], G[b][p])]

    def both(build, note: str = "") -> Measured:
        """``build(G)`` is the Measured's fields on a metric's table (F or W);
        the whole-run reading is its alternative."""
        return Measured(**build(F), alternatives={WHOLE_RUN: Measured(**build(W))}, note=note)

    sp10 = [(paper.SHORT_MS, b) for b in shallow]
    sp40 = [(paper.LONG_MS, b) for b in shallow]
    ms = [(r, b) for r in RTTS for b in shallow]
    dp = [(r, b) for r in RTTS for b in deeper]
    lo_b = min((b for b in points if b >= 1), default=points[-1])
    top = max(points)

    def fall(cc: str, r: int, G: dict) -> list[float]:
        return [x - y for x, y in zip(G[cc][(r, lo_b)], G[cc][(r, top)])]

    def smaller_reduction(G: dict) -> dict:
        return {"members": {f"{r} ms, vs {LABEL[o]}": [c - x for c, x in zip(fall(CWS, r, G), fall(o, r, G))]
                            for r in RTTS for o in (BBR, MODEST)}}

    ratio = {p: [c / b - 1 if b > 0 else float("nan") for c, b in zip(F[CWS][p], F[BBR][p])] for p in allp}
    ratio_w = {p: [c / b - 1 if b > 0 else float("nan") for c, b in zip(W[CWS][p], W[BBR][p])] for p in allp}
    best = max(allp, key=lambda p: mean(ratio[p]))
    best_w = max(allp, key=lambda p: mean(ratio_w[p]))
    counts = {r: sum(1 for b in points if m[CWS][(r, b)] >= fair) for r in RTTS}
    counts_w = {r: sum(1 for b in points if mean(W[CWS][(r, b)]) >= fair) for r in RTTS}

    rep.measured.update({
        "fig13.bbr-10ms-below-1bdp": both(lambda G: {"members": {name(p): G[BBR][p] for p in sp10}},
                                          evidence(BBR, sp10)),
        "fig13.bbr-10ms-falls-above-1bdp": both(
            lambda G: {"members": {f"{b:g} BDP": G[BBR][(paper.SHORT_MS, b)] for b in deeper}},
            evidence(BBR, [(paper.SHORT_MS, b) for b in deeper])),
        "fig13.bbr-40ms-shallow-very-low": Measured(
            members={name(p): F[BBR][p] for p in sp40}, note=evidence(BBR, sp40)),
        "fig13.bbr-40ms-deep": both(lambda G: {"values": G[BBR][(paper.LONG_MS, paper.DEEP_BDP)]},
                                    evidence(BBR, [(paper.LONG_MS, paper.DEEP_BDP)])),
        "fig13.modest-below-1bdp": both(lambda G: {"members": {name(p): G[MODEST][p] for p in ms}},
                                        evidence(MODEST, ms)),
        "fig13.modest-above-bbr": both(lambda G: {"members": {name(p): diff(MODEST, BBR, p, G) for p in allp}}),
        "fig13.modest-considerably-above-1bdp": Measured(
            members={name(p): diff(MODEST, BBR, p, F) for p in dp}),
        "fig13.modest-falls-above-1bdp": both(
            lambda G: {"chains": {f"{r} ms": {f"{b:g} BDP": G[MODEST][(r, b)] for b in deeper} for r in RTTS}},
            evidence(MODEST, dp)),
        "fig13.cws-above-modest-below-1bdp": both(
            lambda G: {"members": {name(p): diff(CWS, MODEST, p, G) for p in ms}}),
        "fig13.cws-at-least-0.9": both(lambda G: {"members": {name(p): G[CWS][p] for p in allp}},
                                       evidence(CWS, allp)),
        "fig13.cws-above-bbr": both(lambda G: {"members": {name(p): diff(CWS, BBR, p, G) for p in allp}}),
        "fig13.cws-smaller-reduction": both(
            smaller_reduction,
            f"F({lo_b:g} BDP) - F({top:g} BDP): " + "; ".join(
                f"{r} ms: " + ", ".join(f"{LABEL[c]} {mean(fall(c, r, F)):+.3f}" for c in (CWS, BBR, MODEST))
                + " (whole-run F: " + ", ".join(f"{LABEL[c]} {mean(fall(c, r, W)):+.3f}" for c in (CWS, BBR, MODEST))
                + ")" for r in RTTS) + "."),
        "fig13.cws-most-buffers": Measured(
            members={name(p): F[CWS][p] for p in allp},
            note=f"at {fair:g} or higher: " + "; ".join(
                f"{r} ms: {counts[r]} of {len(points)} buffers per 0.1 s, {counts_w[r]} of {len(points)} with "
                "whole-run throughput" for r in RTTS) + "."),
        "fig13.improved-up-to-73": Measured(
            ratio[best], alternatives={WHOLE_RUN: Measured(ratio_w[best_w], note=f"largest at {name(best_w)}")},
            note=f"largest at {name(best)}: F {m[BBR][best]:.3f} for BBR and {m[CWS][best]:.3f} for BBR-CWS "
                 f"(a ratio of 1.73 needs BBR near 0.55 and BBR-CWS near 0.95 at the same point); with whole-run "
                 f"F largest at {name(best_w)}: {mean(W[BBR][best_w]):.3f} and {mean(W[CWS][best_w]):.3f}. "
                 + evidence(BBR, [best])),
    })
    for r in RTTS:
        rep.numbers[f"{CWS}.points_at_0.9.{r}ms"] = counts[r]
        rep.numbers[f"{CWS}.points_at_0.9_whole_run.{r}ms"] = counts_w[r]
        rep.numbers[f"{CWS}.jain_min.{r}ms"] = min(min(F[CWS][(r, b)]) for b in points)
        rep.numbers[f"{CWS}.minus_bbr_min.{r}ms"] = min(m[CWS][(r, b)] - m[BBR][(r, b)] for b in points)

    def fmt(cc: str, pts: list[tuple[int, float]]) -> str:
        return ", ".join(f"{b:g}: {m[cc][(r, b)]:.2f}" for r, b in pts)

    rows = []
    ours_bbr = "; ".join(f"{r} ms: " + fmt(BBR, [(r, b) for b in shallow]) for r in RTTS)
    rows.append(compare.ours_only(
        "BBR with Linux 4.14's cwnd/pacing, below 1 BDP (10 / 40 ms)",
        "; ".join(f"{r} ms: " + fmt(BBR414, [(r, b) for b in shallow]) for r in RTTS),
        note=f"the ablation next to our Linux 6.x BBR ({ours_bbr})." if shallow else ""))
    rows.append(compare.ours_only(
        f"BBR-CWS with the text's usf reset (reset_on_lower_rtprop = 1): points at {fair:g} or higher, min F",
        "; ".join(f"{r} ms: {sum(1 for b in points if m[CWS_RESET][(r, b)] >= fair)} of {len(points)}, "
                  f"min {min(m[CWS_RESET][(r, b)] for b in points):.2f}" for r in RTTS),
        note="the paper's text resets usf to 1 when a lower RTprop follows a cut (Sec. 4.2), its Algorithm 1 "
             "does not; the judged BBR-CWS rows run the algorithm. Listing: " + "; ".join(
                 f"{r} ms: {counts[r]} of {len(points)}, min {min(m[CWS][(r, b)] for b in points):.2f}"
                 for r in RTTS) + "."))
    rows += _live_rows(outcomes, quick)
    rep.comparisons += rows

    for rtt in RTTS:
        table = []
        for b in points:
            p = (rtt, b)
            table.append([f"{b:g}"] + [f"{m[cc][p]:.3f} ({compare.spread(F[cc][p], '.3f') or '-'})" for cc in CCS]
                         + [" / ".join(f"{mean(W[cc][p]):.3f}" for cc in CCS),
                            " / ".join(f"{100 * mean(share[cc][p]):.0f}%" for cc in CCS)])
        rep.sections.append((f"{rtt} ms: Jain's index per buffer", markdown_table(
            ["buffer (BDP)"] + [f"{LABEL[cc]}: F per 0.1 s" for cc in CCS]
            + ["whole-run F (" + " / ".join(LABEL[cc] for cc in CCS) + ")",
               "BBR-variant share (" + " / ".join(LABEL[cc] for cc in CCS) + ")"], table)
            + "\n\nMeans (and seed ranges) over seeds."))

    if fig_dir is not None:
        for (G, suffix, what) in ((F, "", "per 0.1 s, averaged"), (W, "-whole", "of whole-run throughput")):
            for rtt, tag in zip(RTTS, "ab"):
                series = [Series(LABEL[cc], [mean(G[cc][(rtt, b)]) for b in points],
                                 [min(G[cc][(rtt, b)]) for b in points], [max(G[cc][(rtt, b)]) for b in points],
                                 style={"linestyle": ":"} if cc in (BBR414, CWS_RESET) else {}) for cc in CCS]
                sweep(fig_dir / f"fig13{tag}{suffix}.png", f"Jain's index against CUBIC, {rtt} ms, "
                      f"{paper.RATE_MBPS} Mbit/s ({what})", points, series, xlabel="bottleneck buffer (BDP)",
                      ylabel="Jain's fairness index", logx=True, labelled=(paper.DEEP_BDP,),
                      hline=(fair, f"{fair:g} (L278: \"0.9 or higher\")"), ylim=(0.45, 1.02))
        rep.figures += [Figure("fig13a.png", "the paper's Fig. 13a: 10 ms, F per 0.1 s (mean, seed range)"),
                        Figure("fig13b.png", "the paper's Fig. 13b: 40 ms, F per 0.1 s (mean, seed range)"),
                        Figure("fig13a-whole.png", "Fig. 13a with F of whole-run throughput (mean, seed range)"),
                        Figure("fig13b-whole.png", "Fig. 13b with F of whole-run throughput (mean, seed range)")]
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="cws-fig13",
    figure="Fig. 13",
    summary="Jain's index vs buffer 0.2-6 BDP at 10 and 40 ms: BBR, Modest BBR, BBR-CWS (and its usf reset) "
    "against CUBIC",
    runs=runs,
    analyse=analyse,
    live=live_runs,
)
