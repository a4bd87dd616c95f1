"""bbq-fig5-15: a 10 ms flow against one flow of 10-200 ms, 100 Mbit/s;
BBR (Fig. 5) and BBQ (Fig. 15).

Paper, Sec. III-B: "The 15-ms RTT flow dominates the 10-ms RTT flow with
3x throughput"; Sec. I: "when competing with a flow with RTT >= 30 ms, the
10-ms RTT flow is squeezed to < 10% of the bandwidth". Sec. VI-B: "even
when competing with a flow with 10x RTT (100ms), the 10-ms RTT flow can
still retain 37.1% of the bottleneck bandwidth - a 4.62x fairness
improvement over BBR"; Fig. 15's caption: "by up to 4.6x".
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from .paper import LABEL
from .. import compare
from ..common import EVIDENCE_COLUMNS, cwnd_limited_fraction, key, markdown_table, mean, runs_of, values
from ..figures import Series, sweep
from ..framework import Experiment, Figure, Outcome, Report, RunSpec

VARIANTS = (paper.BBR, paper.BBQ)
CCS = tuple(v.name for v in VARIANTS)
#: ms. The paper's range is 10-200 ms and it names 15, 30 and 100.
LONG_RTTS = (10, 15, 20, 30, 40, 50, 75, 100, 150, 200)
QUICK_LONG_RTTS = (15, 100)


def long_rtts(quick: bool) -> tuple[int, ...]:
    return QUICK_LONG_RTTS if quick else LONG_RTTS


def runs(quick: bool) -> list[RunSpec]:
    return [
        RunSpec(
            key(v.name, seed, long=rtt),
            paper.scenario([paper.flow(v, paper.SHORT_MS), paper.flow(v, rtt)], quick=quick, seed=seed),
            EVIDENCE_COLUMNS,
        )
        for v in VARIANTS
        for rtt in long_rtts(quick)
        for seed in paper.seeds(quick)
    ]


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    points = long_rtts(quick)
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(f"Long-RTT flow at {', '.join(map(str, points))} ms (the paper names 15, 30 and 100 ms).")
    share = {cc: {r: values(runs_of(outcomes, cc, paper.seeds(quick), long=r), lambda o: o.share(0))
                  for r in points} for cc in CCS}
    m = {cc: {r: mean(share[cc][r]) for r in points} for cc in CCS}
    ratio = {r: m["bbq"][r] / max(m["bbr"][r], 1e-9) for r in points}
    ratio_seeds = {r: compare.ratios(share["bbq"][r], share["bbr"][r]) for r in points}
    lo, hi = paper.window_from_s(quick), paper.duration_s(quick)
    limited = {cc: {r: mean(values(runs_of(outcomes, cc, paper.seeds(quick), long=r),
                                   lambda o: cwnd_limited_fraction(o, 0, lo, hi))) for r in points} for cc in CCS}
    unequal = [r for r in points if r > paper.SHORT_MS]
    for cc in CCS:
        for r in points:
            rep.numbers[f"{cc}.short_share.{r}ms"] = m[cc][r]
            rep.numbers[f"{cc}.short_share_min.{r}ms"] = min(share[cc][r])
    for r in points:
        rep.numbers[f"improvement.{r}ms"] = ratio[r]
    rep.numbers["bbq_minus_bbr_min"] = min(m["bbq"][r] - m["bbr"][r] for r in unequal)

    if 15 in points:
        rep.comparisons.append(compare.share("BBR: 10 ms share against 15 ms", 0.25, share["bbr"][15],
                                             reason=_reason(m, limited, 15)))
    over_30 = [r for r in points if r >= 30]
    if over_30:
        worst = max(over_30, key=lambda r: m["bbr"][r])
        rep.comparisons.append(compare.bound(
            "BBR: 10 ms share against >= 30 ms", "< 10%", [m["bbr"][r] for r in over_30], 0.10, below=True,
            where=f"at {worst} ms", reason=_reason(m, limited, worst)))
    if 10 in points:
        rep.comparisons.append(compare.share("BBR: equal RTTs share fairly", 0.5, share["bbr"][10]))
    if 100 in points:
        rep.comparisons += [
            compare.share("BBQ: 10 ms share against 100 ms", 0.371, share["bbq"][100], reason=_reason(m, limited, 100)),
            compare.share("BBR: 10 ms share against 100 ms (37.1% / 4.62)", 0.371 / 4.62, share["bbr"][100],
                          reason=_reason(m, limited, 100)),
            compare.relative("BBQ/BBR at 100 ms", 4.62, ratio_seeds[100], fmt=".2f", unit="x",
                             reason=_ratio_reason(m, 100)),
        ]
    best = max(points, key=lambda r: ratio[r])
    rep.comparisons += [
        compare.claim("largest improvement", "4.6x (at 100 ms)", f"{ratio[best]:.2f}x at {best} ms",
                      abs(ratio[best] - 4.6) <= compare.TOL_RELATIVE * 4.6, reason=_ratio_reason(m, best)),
        compare.claim("BBQ gives the 10 ms flow at least BBR's share at every longer RTT", "Fig. 15",
                      f"worst BBQ - BBR: {100 * rep.numbers['bbq_minus_bbr_min']:+.1f} points",
                      rep.numbers["bbq_minus_bbr_min"] >= 0),
    ]

    rows = [[f"{r}", f"{100 * m['bbr'][r]:.1f}%", f"{100 * m['bbq'][r]:.1f}%", f"{ratio[r]:.2f}x",
             f"{100 * limited['bbr'][r]:.0f}% / {100 * limited['bbq'][r]:.0f}%"] for r in points]
    rep.sections.append(("Per RTT (means over seeds)", markdown_table(
        ["other flow's RTT (ms)", "BBR: 10 ms share", "BBQ: 10 ms share", "BBQ/BBR",
         "10 ms flow cwnd-limited, BBR / BBQ"], rows)))

    if fig_dir is not None:
        def series(cc: str, short: bool, label: str) -> Series:
            vals = [[100 * (v if short else 1 - v) for v in share[cc][r]] for r in points]
            return Series(label, [mean(v) for v in vals], [min(v) for v in vals], [max(v) for v in vals])

        sweep(fig_dir / "fig5.png", "BBR: 10 ms flow vs a flow of longer RTT (100 Mbit/s, 2 MB)", points,
              [series("bbr", True, "10 ms flow"), series("bbr", False, "other flow")],
              xlabel="other flow's RTT (ms)", ylabel="share of goodput (%)", logx=True, hline=(50, "fair share"))
        sweep(fig_dir / "fig15.png", "Share of the 10 ms flow vs the other flow's RTT: BBR and BBQ", points,
              [series(cc, True, LABEL[cc]) for cc in CCS],
              xlabel="other flow's RTT (ms)", ylabel="10 ms flow's share (%)", logx=True, hline=(50, "fair share"))
        rep.figures += [
            Figure("fig5.png", "the paper's Fig. 5: BBR shares of the 10 ms flow and of the longer-RTT flow"),
            Figure("fig15.png", "the paper's Fig. 15: the 10 ms flow's share with BBR and BBQ"),
        ]
    return rep


def _reason(m: dict[str, dict[int, float]], limited: dict[str, dict[int, float]], rtt: int) -> str:
    return (
        f"against {rtt} ms our BBR leaves the 10 ms flow {100 * m['bbr'][rtt]:.1f}% (cwnd-limited in "
        f"{100 * limited['bbr'][rtt]:.0f}% of samples) and BBQ {100 * m['bbq'][rtt]:.1f}% (cwnd-limited in "
        f"{100 * limited['bbq'][rtt]:.0f}%)."
    )


def _ratio_reason(m: dict[str, dict[int, float]], rtt: int) -> str:
    return (
        f"the ratio divides by BBR's small share: against {rtt} ms ours is {100 * m['bbr'][rtt]:.1f}% (the paper's "
        f"implied {37.1 / 4.62:.1f}% at 100 ms) and BBQ's {100 * m['bbq'][rtt]:.1f}% (paper 37.1%); both shares are "
        "compared in their own rows, and a point of BBR share moves the ratio by more than a tenth."
    )


EXPERIMENT = Experiment(
    name="bbq-fig5-15",
    figure="Fig. 5, Fig. 15",
    summary="a 10 ms flow against 10-200 ms: share of the 10 ms flow, BBR and BBQ",
    runs=runs,
    analyse=analyse,
)
