"""bbr-fig8: goodput of 60-s BBR and CUBIC flows on a 100 Mbit/s, 100 ms
link with 0.001% to 50% random loss, against the ceiling rate x (1 - loss).

Paper (L149): "To achieve full bandwidth, existing loss-based congestion
controls require the loss rate to be less than the inverse square of the
BDP ... CUBIC's loss tolerance is a structural property of the algorithm,
while BBR's is a configuration parameter. As BBR's loss rate approaches
the ProbeBW peak gain, the probability of measuring a delivery rate of
the true BtlBw drops sharply, causing the max filter to underestimate."
L153: "Figure 8 shows BBR vs. CUBIC goodput for 60-second flows on a
100-Mbps/100-ms link with 0.001 to 50 percent random loss. CUBIC's
throughput decreases by 10 times at 0.1 percent loss and totally stalls
above 1 percent. The maximum possible throughput is the link rate times
fraction delivered (= 1 - lossRate). BBR meets this limit up to a 5
percent loss and is close up to 15 percent."
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .. import compare, traces
from ..common import half_range, key, markdown_table, mean, runs_of
from ..figures import Series, sweep
from ..framework import Experiment, Figure, Outcome, Report, RunSpec

VARIANTS = (paper.BBR, paper.CUBIC)
BBR, CUBIC = (v.name for v in VARIANTS)
RATE_MBPS = 100
RTT_MS = 100
#: L153: "60-second flows".
DURATION_S = 60.0
QUICK_DURATION_S = 30.0
#: Loss rates, percent (L153: "0.001 to 50 percent").
LOSSES = (0.001, 0.01, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 20, 30, 50)
QUICK_LOSSES = (0.001, 0.1, 1, 5, 15, 30)
INTERVAL = "100ms"
#: Evidence for a BBR point that falls: when Startup ended, at what estimate.
COLUMNS = ("cc_mode", "bw_estimate_mbps")
#: "Meets this limit": within 5% of rate x (1 - loss) (our reading;
#: the paper gives no tolerance). "Close": within twice that.
MEETS = 0.95
CLOSE = 0.90
MEETS_UP_TO = 5
CLOSE_UP_TO = 15
#: "Decreases by 10 times at 0.1 percent": against its goodput at the lowest loss.
CUBIC_DROP = 10.0
CUBIC_DROP_AT = 0.1
#: "Totally stalls": below 1% of the link rate (what the paper's linear
#: 0-100 Mbit/s axis cannot tell from zero).
STALL_MBPS = 0.01 * RATE_MBPS
STALL_ABOVE = 1


def losses(quick: bool) -> tuple[float, ...]:
    return QUICK_LOSSES if quick else LOSSES


def duration_s(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def lkey(p: float) -> str:
    return f"{p:g}%"


def runs(quick: bool) -> list[RunSpec]:
    dur = duration_s(quick)
    return [RunSpec(key(v.name, seed, loss=lkey(p)),
                    paper.scenario([paper.flow(v, RTT_MS)], seed=seed, duration=dur, rate=f"{RATE_MBPS}Mbit",
                                   buffer=paper.buffer(paper.BUFFER_BDP), interval=INTERVAL, loss=p / 100),
                    COLUMNS if v is paper.BBR else ())
            for v in VARIANTS for p in losses(quick) for seed in paper.seeds(quick)]


def ceiling(p: float) -> float:
    """L153: "the link rate times fraction delivered (= 1 - lossRate)", in goodput."""
    return paper.payload_mbps(RATE_MBPS) * (1 - p / 100)


def startup_end(run: Outcome) -> tuple[float, float]:
    """When the flow left Startup, and its BtlBw estimate then (Mbit/s)."""
    idx = np.nonzero(run.flow["cc_mode"][0] != traces.STARTUP)[0]
    if not len(idx):
        return math.nan, math.nan
    return float(run.t_s[idx[0]]), float(run.flow["bw_estimate_mbps"][0][idx[0]])


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    ps = losses(quick)
    dur = duration_s(quick)
    per = {cc: {p: runs_of(outcomes, cc, seeds, loss=lkey(p)) for p in ps} for cc in (BBR, CUBIC)}
    good = {cc: {p: [r.goodput(0) for r in per[cc][p]] for p in ps} for cc in (BBR, CUBIC)}
    ratio = {cc: {p: [g / ceiling(p) for g in good[cc][p]] for p in ps} for cc in (BBR, CUBIC)}
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One flow, BBR or CUBIC, {RATE_MBPS} Mbit/s, {RTT_MS} ms, buffer {paper.BUFFER_BDP:g} BDP, {dur:g} s, random "
        f"loss on the bottleneck of {', '.join(f'{p:g}' for p in ps)}%. Goodput over the whole flow (L153: "
        f"\"60-second flows\"). The ceiling is rate x (1 - loss) in goodput: {paper.payload_mbps(RATE_MBPS):.2f} "
        "Mbit/s of payload fit the 100 Mbit/s link.",
        f"\"Meets this limit\" needs a tolerance the paper does not give: we take {100 * (1 - MEETS):.0f}% of the "
        "ceiling (our reading), which holds BBR's own shortfall without loss (the row at the lowest loss: "
        "ProbeRTT's ~2%, L213, Startup, the 1% pacing margin), so the row asks whether loss up to 5% costs BBR more than "
        f"the packets lost; \"close\": within {100 * (1 - CLOSE):.0f}%. CUBIC's \"decreases by 10 times at 0.1 "
        f"percent\": its goodput at {LOSSES[0]:g}% over that at {CUBIC_DROP_AT:g}%, per seed, at least 10; \"totally "
        f"stalls\": below {STALL_MBPS:g} Mbit/s (1% of the link, zero on the paper's linear axis). Claims over a range "
        "of losses hold when no point misses by more than its seed spread (docs/experiments.md).",
    ]
    for cc in (BBR, CUBIC):
        for p in ps:
            rep.numbers[f"{cc}.goodput_mbps.{lkey(p)}"] = mean(good[cc][p])
            rep.numbers[f"{cc}.ceiling_ratio.{lkey(p)}"] = mean(ratio[cc][p])

    def over(lo: float, hi: float, cc: str = BBR) -> list[float]:
        return [p for p in ps if lo < p <= hi]

    meets = over(0, MEETS_UP_TO)
    close = over(MEETS_UP_TO, CLOSE_UP_TO)
    lowest = ps[0]
    for points, bar, paper_text in ((meets, MEETS, "\"BBR meets this limit up to a 5 percent loss\" (L153)"),
                                    (close, CLOSE, "\"and is close up to 15 percent\" (L153)")):
        if not points:
            continue
        missed = [p for p in points if mean(ratio[BBR][p]) < bar - half_range(ratio[BBR][p])]
        worst = min(points, key=lambda p: mean(ratio[BBR][p]))
        short = _shortfall(per[BBR], ratio[BBR], points, bar)
        n_short = sum(x < bar for x in ratio[BBR][worst])
        rep.comparisons.append(compare.claim(
            f"BBR: goodput / ceiling, {points[0]:g}-{points[-1]:g}% loss", f"{paper_text}: >= {100 * bar:.0f}%",
            f"min {100 * mean(ratio[BBR][worst]):.1f}% (at {worst:g}%"
            + (f"; {n_short} of {len(seeds)} seeds below {100 * bar:.0f}%)" if n_short else ")"),
            not missed, spread_text=compare.spread([100 * x for x in ratio[BBR][worst]], ".1f"), reason=short))
        if short and not missed:
            rep.comparisons.append(compare.ours_only(
                f"BBR: seeds below {100 * bar:.0f}% of the ceiling, {points[0]:g}-{points[-1]:g}% loss",
                f"{sum(x < bar for p in points for x in ratio[BBR][p])} of {len(points) * len(seeds)} runs",
                note=short + " The row above holds by the rule for claims over a range (no point below the bar by more "
                             "than its seed spread), which this spread makes wide."))
    if CUBIC_DROP_AT in ps:
        drop = compare.ratios(good[CUBIC][lowest], good[CUBIC][CUBIC_DROP_AT])
        rep.numbers["cubic.drop_at_0.1%"] = mean(drop)
        rep.comparisons.append(compare.claim(
            f"CUBIC: goodput at {lowest:g}% / at {CUBIC_DROP_AT:g}% loss",
            "\"CUBIC's throughput decreases by 10 times at 0.1 percent loss\" (L153): >= 10",
            f"{mean(drop):.1f}x ({mean(good[CUBIC][lowest]):.1f} -> {mean(good[CUBIC][CUBIC_DROP_AT]):.2f} Mbit/s)",
            mean(drop) >= CUBIC_DROP - half_range(drop), spread_text=compare.spread(drop, ".1f")))
    stall = over(STALL_ABOVE, 100)
    worst_stall = max(stall, key=lambda p: mean(good[CUBIC][p]))
    miss_stall = [p for p in stall if mean(good[CUBIC][p]) > STALL_MBPS + half_range(good[CUBIC][p])]
    rtos = {p: mean([float(r.flows[0]["rtos"]) for r in per[CUBIC][p]]) for p in stall}
    rep.comparisons.append(compare.claim(
        f"CUBIC: goodput above {STALL_ABOVE}% loss", "\"totally stalls above 1 percent\" (L153): < "
        f"{STALL_MBPS:g} Mbit/s", f"max {mean(good[CUBIC][worst_stall]):.2f} Mbit/s (at {worst_stall:g}%)",
        not miss_stall, spread_text=compare.spread(good[CUBIC][worst_stall], ".2f"),
        reason="; ".join(f"at {p:g}%: {mean(good[CUBIC][p]):.2f} Mbit/s, {rtos[p]:.0f} RTOs in {dur:g} s"
                         for p in stall) + "."))
    rep.comparisons.append(compare.ours_only(
        f"BBR: goodput / ceiling at {lowest:g}% loss", f"{100 * mean(ratio[BBR][lowest]):.1f}%",
        compare.spread([100 * x for x in ratio[BBR][lowest]], ".1f"),
        note="what BBR reaches without (much) loss: ProbeRTT's ~2% (L213), Startup, and the 1% pacing margin of "
             "Linux's BBR."))
    beyond = over(CLOSE_UP_TO, 100)
    if beyond:
        rep.comparisons.append(compare.ours_only(
            f"BBR: goodput / ceiling above {CLOSE_UP_TO}% loss",
            ", ".join(f"{p:g}%: {100 * mean(ratio[BBR][p]):.0f}%" for p in beyond),
            note="L149: \"As BBR's loss rate approaches the ProbeBW peak gain, the probability of measuring a delivery "
                 "rate of the true BtlBw drops sharply\" (1 - 1/1.25 = 20%)."))

    rows = [[f"{p:g}%", f"{ceiling(p):.2f}", f"{mean(good[BBR][p]):.2f} ({compare.spread(good[BBR][p], '.2f') or '-'})",
             f"{100 * mean(ratio[BBR][p]):.1f}%",
             f"{mean(good[CUBIC][p]):.2f} ({compare.spread(good[CUBIC][p], '.2f') or '-'})"] for p in ps]
    rep.sections.append(("Per loss rate", markdown_table(
        ["loss", "ceiling (Mbit/s)", "BBR goodput (Mbit/s)", "BBR / ceiling", "CUBIC goodput (Mbit/s)"], rows)))

    if fig_dir is not None:
        series = [Series(paper.LABEL[cc], [mean(good[cc][p]) for p in ps], [min(good[cc][p]) for p in ps],
                         [max(good[cc][p]) for p in ps], style={"color": color})
                  for cc, color in ((BBR, "tab:green"), (CUBIC, "tab:red"))]
        sweep(fig_dir / "fig8.png", f"One flow, {RATE_MBPS} Mbit/s, {RTT_MS} ms, {dur:g} s: goodput vs random loss",
              list(ps), series, xlabel="random loss rate (%)", ylabel="goodput (Mbit/s)", logx=True,
              ylim=(0, 1.05 * paper.payload_mbps(RATE_MBPS)),
              reference=Series("ceiling: rate x (1 - loss)", [ceiling(p) for p in ps]))
        rep.figures.append(Figure("fig8.png", "the paper's Fig. 8: goodput against random loss (mean, seed range), "
                                              "and the ceiling rate x (1 - loss)"))
    return paper.finish(rep, quick)


def _shortfall(per: dict[float, list[Outcome]], ratio: dict[float, list[float]], points: list[float],
               bar: float) -> str:
    """Which runs fall below ``bar`` of the ceiling, and what their Startup did."""
    parts = []
    for p in points:
        low = [i for i, x in enumerate(ratio[p]) if x < bar]
        if not low:
            continue
        ends = [startup_end(per[p][i]) for i in low]
        finals = [float(per[p][i].flow["bw_estimate_mbps"][0][-1]) for i in low]
        parts.append(f"at {p:g}% loss {len(low)} of {len(ratio[p])} seeds reach "
                     f"{', '.join(f'{100 * ratio[p][i]:.0f}%' for i in low)} of the ceiling: they leave Startup at "
                     f"{', '.join(f'{t:.1f} s with a BtlBw estimate of {b:.1f} Mbit/s' for t, b in ends)} (Startup's "
                     "three rounds without 25% growth, L221, met under loss) and end the run at "
                     f"{', '.join(f'{b:.1f}' for b in finals)} Mbit/s, as their 5/4 probes rarely measure a higher "
                     "delivery rate when losses undo them (L149)")
    return "; ".join(parts) + "." if parts else ""


EXPERIMENT = Experiment(
    name="bbr-fig8",
    figure="Fig. 8",
    summary="goodput vs random loss 0.001-50%, 100 Mbit/s, 100 ms, 60-s flows: BBR, CUBIC and rate x (1 - loss)",
    runs=runs,
    analyse=analyse,
)
