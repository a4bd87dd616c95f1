"""bbq-fig5-15: a 10 ms flow against one flow of 10-200 ms, 100 Mbit/s;
BBR (Fig. 5) and BBQ (Fig. 15).

Paper, Sec. III-B (L105): "When the two flows are of the same RTT,
fairness is not a concern ... The 15-ms RTT flow dominates the 10-ms RTT
flow with 3x throughput"; Sec. I (L27): "a 10-ms RTT flow, when competing
with a 15-ms RTT flow, ends up with < 25% of the bottleneck bandwidth ...
when competing with a flow with RTT >= 30 ms, the 10-ms RTT flow is
squeezed to < 10% of the bandwidth". Sec. VI-B (L307): "even when
competing with a flow with 10x RTT (100ms), the 10-ms RTT flow can still
retain 37.1% of the bottleneck bandwidth - a 4.62x fairness improvement
over BBR"; Fig. 15's caption (L305): "BBQ improves the bandwidth share of
the 10-ms RTT flow by up to 4.6x". The claims are in claims.toml; BBR's
share at 100 ms that 37.1% / 4.62 implies (8.0%) is not a claim of its
own (the ratio is), but its note gives it.
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
from ..verdict import Measured

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

    half = {cc: {r: (max(share[cc][r]) - min(share[cc][r])) / 2 for r in points} for cc in CCS}
    ratio_half = {r: (max(ratio_seeds[r]) - min(ratio_seeds[r])) / 2 for r in points}
    over_30 = [r for r in points if r >= 30]
    has = {r: r in points for r in (10, 15, 30, 100)}
    # Sec. I: "ends up with < 25%"; Sec. III-B: "dominates the 10-ms RTT flow with 3x throughput" (per seed:
    # the 15 ms flow's goodput over the 10 ms flow's).
    rep.measured["fig5.bbr-15ms-share"] = Measured(
        share["bbr"][15] if has[15] else [], note=_fifteen_reason(m, half, limited) if has[15] else "")
    rep.measured["fig5.bbr-15ms-dominance"] = Measured(
        [(1 - v) / v for v in share["bbr"][15]] if has[15] else [],
        note=_fifteen_reason(m, half, limited) if has[15] else "")
    rep.measured["fig5.bbr-squeezed"] = Measured(
        members={f"{r} ms": share["bbr"][r] for r in over_30},
        note=_thirty_reason(m, half, limited, over_30, max(over_30, key=lambda r: m["bbr"][r])) if over_30 else "")
    rep.measured["fig5.bbr-equal-rtts"] = Measured(share["bbr"][10] if has[10] else [])
    rep.measured["fig15.bbq-100ms"] = Measured(share["bbq"][100] if has[100] else [],
                                               note=_reason(m, limited, 100) if has[100] else "")
    rep.measured["fig15.improvement-100ms"] = Measured(
        ratio_seeds[100] if has[100] else [],
        note=(_ratio_reason(m, half, 100) + " " + _bbr100_reason(m, half, limited)) if has[100] else "")
    best = max(points, key=lambda r: ratio[r])
    not_improved = [r for r in unequal if m["bbq"][r] <= m["bbr"][r]]
    rep.measured["fig15.improvement-range"] = Measured(
        members={f"{r} ms": ratio_seeds[r] for r in unequal},
        note=_largest_reason(m, ratio, ratio_half, [best])
        + ("" if not not_improved else " Not improved at " + ", ".join(f"{r} ms" for r in not_improved) + ": "
           + " ".join(_reason(m, limited, r) for r in not_improved)))

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


def _fifteen_reason(m: dict, half: dict, limited: dict) -> str:
    return (
        f"against 15 ms our BBR gives the 10 ms flow {100 * m['bbr'][15]:.1f}% +- {100 * half['bbr'][15]:.1f} "
        f"(a 15/10 ms goodput ratio of {(1 - m['bbr'][15]) / m['bbr'][15]:.2f}x), {100 * (m['bbr'][15] - 0.25):+.1f} "
        "points from the paper's 25%; "
        f"the 10 ms flow is cwnd-limited in {100 * limited['bbr'][15]:.0f}% of samples, the squeeze of Sec. IV-B is "
        f"there (it is {100 * limited['bbr'][30]:.0f}% at 30 ms), and the share falls with the other flow's RTT as in "
        "Fig. 5 (per-RTT table). What sets the remaining gap is not identified from these runs; the paper "
        "gives no trace of its 15 ms run to compare with."
        if 30 in m["bbr"] else
        f"against 15 ms our BBR gives the 10 ms flow {100 * m['bbr'][15]:.1f}%; the cause is not identified."
    )


def _thirty_reason(m: dict, half: dict, limited: dict, over: list[int], worst: int) -> str:
    under = [r for r in over if m["bbr"][r] < 0.10]
    listed = ", ".join(f"{r} ms {100 * m['bbr'][r]:.1f}%" for r in under)
    return (
        f"at {worst} ms our BBR leaves the 10 ms flow {100 * m['bbr'][worst]:.1f}% +- {100 * half['bbr'][worst]:.1f} "
        f"(cwnd-limited in {100 * limited['bbr'][worst]:.0f}% of samples); from "
        f"{min(under) if under else '-'} ms on it is below 10% ({listed}), "
        "so our crossing of 10% lies between 30 and 40 ms rather than at 30 ms. Why the paper's 30 ms point is "
        "lower is not identified from these runs."
    )


def _bbr100_reason(m: dict, half: dict, limited: dict) -> str:
    return (
        f"the paper gives no BBR share at 100 ms; 8.0% is what its 37.1% and 4.62x imply. Our BBR leaves the 10 ms "
        f"flow {100 * m['bbr'][100]:.1f}% +- {100 * half['bbr'][100]:.1f} (cwnd-limited in "
        f"{100 * limited['bbr'][100]:.0f}% of samples), while our BBQ share at 100 ms ({100 * m['bbq'][100]:.1f}%) "
        "is within its row's spread of the paper's 37.1%: the ratio row's difference is in BBR's share. Why our BBR "
        "squeezes the 10 ms flow further than the paper's is not identified from these runs."
    )


def _ratio_reason(m: dict[str, dict[int, float]], half: dict, rtt: int) -> str:
    return (
        f"the ratio divides by BBR's small share: against {rtt} ms ours is {100 * m['bbr'][rtt]:.1f}% +- "
        f"{100 * half['bbr'][rtt]:.1f} (the paper's implied {37.1 / 4.62:.1f}% at 100 ms) and BBQ's "
        f"{100 * m['bbq'][rtt]:.1f}% +- {100 * half['bbq'][rtt]:.1f} (paper 37.1% at 100 ms); BBQ's share / "
        f"{100 * m['bbr'][rtt]:.1f}% is {m['bbq'][rtt] / m['bbr'][rtt]:.2f}x, and BBQ's share / 8.0% would be "
        f"{m['bbq'][rtt] / (0.371 / 4.62):.2f}x."
    )


def _largest_reason(m: dict, ratio: dict, half: dict, rtts: list[int]) -> str:
    text = "; ".join(
        f"at {r} ms BBR {100 * m['bbr'][r]:.1f}% -> BBQ {100 * m['bbq'][r]:.1f}% ({ratio[r]:.2f}x +- {half[r]:.2f})"
        for r in rtts
    )
    low = [r for r in m["bbr"] if m["bbr"][r] < 0.371 / 4.62]
    if low:
        text += (f". Our BBR leaves the 10 ms flow {100 * min(m['bbr'][r] for r in low):.1f}-"
                 f"{100 * max(m['bbr'][r] for r in low):.1f}% at {', '.join(map(str, low))} ms, below the 8.0% the "
                 "paper's 100 ms numbers imply, and a BBQ share divided by so small a BBR share exceeds 4.6x; see "
                 "the BBR rows")
    return text + "."


EXPERIMENT = Experiment(
    name="bbq-fig5-15",
    figure="Fig. 5, Fig. 15",
    summary="a 10 ms flow against 10-200 ms: share of the 10 ms flow, BBR and BBQ",
    runs=runs,
    analyse=analyse,
)
