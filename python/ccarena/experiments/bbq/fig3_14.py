"""bbq-fig3-14: share of the 10 ms flow (against 50 ms) as the bottleneck
rate goes from 10 Mbit/s to 1 Gbit/s; BBR (Fig. 3) and BBQ (Fig. 14).

Paper, Sec. III-B (L90): "While the bias against the short RTT flow is
alleviated on low bandwidth bottleneck, the 10-ms RTT flow remains far
below its fair share." Sec. VI-B (L302): "In all cases, BBQ outperforms
BBR with better RTT fairness, improving the bandwidth share of the 10-ms
RTT flow by at least 55.2% (10 Mbps) and by up to 6.1x (400 Mbps). BBQ
provides near-optimal RTT fairness for high-bandwidth link (>= 100 Mbps),
where the two flows equally share the bottleneck"; Fig. 14's caption
(L300): "by 55.2% to 6.14x". The claims are in claims.toml; this module
measures them per seed ("fairer": the distance of the 10 ms flow's share
from 50%, BBQ's minus BBR's).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from .paper import LABEL
from .. import compare
from ..common import EVIDENCE_COLUMNS, cwnd_limited_fraction, fair_gap, key, markdown_table, mean, runs_of, values
from ..figures import Series, sweep
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

VARIANTS = (paper.BBR, paper.BBQ)
CCS = tuple(v.name for v in VARIANTS)
#: Mbit/s. The paper sweeps 10 Mbit/s-1 Gbit/s and names 10 and 400; the
#: points in between are our choice.
RATES = (10, 20, 50, 100, 200, 400, 600, 800, 1000)
QUICK_RATES = (10, 100)


def rates(quick: bool) -> tuple[int, ...]:
    return QUICK_RATES if quick else RATES


def runs(quick: bool) -> list[RunSpec]:
    specs = []
    for v in VARIANTS:
        for rate in rates(quick):
            for seed in paper.seeds(quick):
                doc = paper.scenario(
                    [paper.flow(v, paper.SHORT_MS), paper.flow(v, paper.LONG_MS)],
                    quick=quick, seed=seed, rate=f"{rate}Mbit",
                )
                specs.append(RunSpec(key(v.name, seed, rate=rate), doc, EVIDENCE_COLUMNS))
    return specs


def short_shares(outcomes: Mapping[str, Outcome], cc: str, rate: int, quick: bool) -> list[float]:
    return values(runs_of(outcomes, cc, paper.seeds(quick), rate=rate), lambda r: r.share(0))


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    points = rates(quick)
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"Rates {', '.join(map(str, points))} Mbit/s (the paper names 10 and 400; the points between are ours). "
        "The buffer stays 2 MB at every rate (the paper's per-port buffer), i.e. 3.2 BDP of the 50 ms flow "
        "at 100 Mbit/s but 0.32 BDP at 1 Gbit/s."
    )
    share = {cc: {r: short_shares(outcomes, cc, r, quick) for r in points} for cc in CCS}
    ratio_seeds = {r: compare.ratios(share["bbq"][r], share["bbr"][r]) for r in points}
    ratio = {r: mean(share["bbq"][r]) / max(mean(share["bbr"][r]), 1e-9) for r in points}
    lo, hi = paper.window_from_s(quick), paper.duration_s(quick)
    limited = {cc: {r: mean(values(runs_of(outcomes, cc, paper.seeds(quick), rate=r),
                                   lambda o: cwnd_limited_fraction(o, 0, lo, hi))) for r in points} for cc in CCS}
    retrans = {cc: {r: mean(values(runs_of(outcomes, cc, paper.seeds(quick), rate=r),
                                   lambda o: o.flows[0]["retransmits"] + o.flows[1]["retransmits"])) for r in points}
               for cc in CCS}
    for cc in CCS:
        for r in points:
            rep.numbers[f"{cc}.short_share.{r}Mbit"] = mean(share[cc][r])
    for r in points:
        rep.numbers[f"improvement.{r}Mbit"] = ratio[r]

    drops = {cc: {r: mean(values(runs_of(outcomes, cc, paper.seeds(quick), rate=r), lambda o: o.summary["drops"]))
                  for r in points} for cc in CCS}
    bbr_means = {r: mean(share["bbr"][r]) for r in points}
    bbq_means = {r: mean(share["bbq"][r]) for r in points}
    rep.numbers["bbq_minus_bbr_min"] = min(bbq_means[r] - bbr_means[r] for r in points)
    low = points[0]
    high = [r for r in points if r >= 100]
    name = {r: f"{r} Mbit/s" for r in points}
    distance = {r: fair_gap(share["bbq"][r], share["bbr"][r]) for r in points}
    further = [r for r in points if mean(distance[r]) > 0]
    rep.measured["fig3.bbr-far-below"] = Measured(
        members={name[r]: share["bbr"][r] for r in high},
        note=_high_rate_reason(share, limited, retrans, drops, high))
    rep.measured["fig3.bbr-alleviated"] = Measured(
        members={name[low]: share["bbr"][low], name[100]: share["bbr"][100]} if 100 in points and low != 100 else {},
        note=f"our BBR gives the 10 ms flow {100 * bbr_means[low]:.1f}% at {low} Mbit/s and "
             f"{100 * bbr_means.get(100, float('nan')):.1f}% at 100 Mbit/s.")
    rep.measured["fig14.fairer"] = Measured(
        members={name[r]: distance[r] for r in points},
        note="; ".join(f"{r} Mbit/s: BBR {100 * bbr_means[r]:.1f}%, BBQ {100 * bbq_means[r]:.1f}%"
                       for r in (further or points)) + ".")
    rep.measured["fig14.improvement-range"] = Measured(
        members={name[r]: ratio_seeds[r] for r in points},
        note=_below_min_reason(share, limited, drops, [min(points, key=lambda r: ratio[r])], low) + " "
        + _ratio_reason(share, max(points, key=lambda r: ratio[r])))
    rep.measured["fig14.improvement-10"] = Measured(ratio_seeds.get(10, []), note=_low_rate_reason(share, limited, 10)
                                                    if 10 in points else "")
    rep.measured["fig14.improvement-400"] = Measured(ratio_seeds.get(400, []), note=_ratio_reason(share, 400)
                                                     if 400 in points else "")
    rep.measured["fig14.equal-share"] = Measured(
        members={name[r]: share["bbq"][r] for r in high}, note=_fairness_reason(share, limited, retrans, high))
    rep.sections.append(("Fig. 3 at high rates: how far below fair our BBR's 10 ms flow stays", _fig3_discussion(
        share, limited, retrans, drops, points)))

    rows = []
    for r in points:
        rows.append([
            f"{r}",
            f"{100 * mean(share['bbr'][r]):.1f}% ({compare.spread([100 * v for v in share['bbr'][r]], '.1f') or '-'})",
            f"{100 * mean(share['bbq'][r]):.1f}% ({compare.spread([100 * v for v in share['bbq'][r]], '.1f') or '-'})",
            f"{ratio[r]:.2f}x",
            f"{100 * limited['bbr'][r]:.0f}% / {100 * limited['bbq'][r]:.0f}%",
            f"{retrans['bbr'][r]:.0f} / {retrans['bbq'][r]:.0f}",
        ])
    rep.sections.append(("Per rate", markdown_table(
        ["rate (Mbit/s)", "BBR: 10 ms share", "BBQ: 10 ms share", "BBQ/BBR",
         "10 ms flow cwnd-limited, BBR / BBQ", "retransmits in window, BBR / BBQ"], rows)
        + "\n\nMeans (and seed ranges) over seeds. \"cwnd-limited\": share of 100 ms samples with the 10 ms flow's "
        "in-flight within 2 packets of its cwnd."))

    if fig_dir is not None:
        sweep(
            fig_dir / "fig3.png", "BBR: share of each flow vs bottleneck rate (10 ms vs 50 ms, 2 MB)", points,
            [_series(share["bbr"], points, "10 ms flow", short=True), _series(share["bbr"], points, "50 ms flow",
                                                                              short=False)],
            xlabel="bottleneck rate (Mbit/s)", ylabel="share of goodput (%)", logx=True, hline=(50, "fair share"),
        )
        sweep(
            fig_dir / "fig14.png", "Share of the 10 ms flow vs bottleneck rate: BBR and BBQ", points,
            [_series(share[cc], points, LABEL[cc], short=True) for cc in CCS],
            xlabel="bottleneck rate (Mbit/s)", ylabel="10 ms flow's share (%)", logx=True, hline=(50, "fair share"),
        )
        rep.figures += [
            Figure("fig3.png", "the paper's Fig. 3: BBR shares of both flows vs bottleneck rate (mean, seed range)"),
            Figure("fig14.png", "the paper's Fig. 14: the 10 ms flow's share with BBR and BBQ vs bottleneck rate"),
        ]
    return rep


def _series(share: dict[int, list[float]], points: tuple[int, ...], label: str, short: bool) -> Series:
    def v(x: float) -> float:
        return 100 * (x if short else 1 - x)

    vals = [[v(x) for x in share[r]] for r in points]
    return Series(label, [mean(s) for s in vals], [min(s) for s in vals], [max(s) for s in vals])


def _ratio_reason(share: dict[str, dict[int, list[float]]], rate: int) -> str:
    bbr, bbq = mean(share["bbr"][rate]), mean(share["bbq"][rate])
    return (
        f"at {rate} Mbit/s our BBR gives the 10 ms flow {100 * bbr:.1f}% and BBQ {100 * bbq:.1f}%; a ratio of "
        "shares magnifies differences in BBR's small share (a point of BBR share moves it by a tenth or more)."
    )


def _low_rate_reason(share: dict, limited: dict, rate: int) -> str:
    bbr, bbq = mean(share["bbr"][rate]), mean(share["bbq"][rate])
    return (
        f"at {rate} Mbit/s our BBQ already gives the 10 ms flow a fair share ({100 * bbq:.1f}%), against "
        f"{100 * bbr:.1f}% with BBR (its 10 ms flow cwnd-limited in {100 * limited['bbr'][rate]:.0f}% of samples); "
        f"the paper's 1.55x with a BBR share like ours would put its BBQ at {155.2 * bbr:.0f}%, below fair. "
        f"The 2 MB buffer is {2e6 * 8 / (rate * 1e6):.1f} s of queue at {rate} Mbit/s; the ratio cannot exceed "
        f"{0.5 / bbr:.2f}x while BBQ stays at or below fair."
    )


def _bdp50(rate: int) -> float:
    """The 2 MB buffer in BDPs of the 50 ms flow at ``rate`` Mbit/s."""
    return 2e6 / (rate * 1e6 / 8 * paper.LONG_MS / 1e3)


def _high_rate_reason(share: dict, limited: dict, retrans: dict, drops: dict, rates_: list[int]) -> str:
    return "; ".join(
        f"at {r} Mbit/s our BBR gives the 10 ms flow {100 * mean(share['bbr'][r]):.1f}% "
        f"({compare.spread([100 * v for v in share['bbr'][r]], '.1f')}), with the 2 MB buffer "
        f"{_bdp50(r):.2f} BDP of the 50 ms flow, {drops['bbr'][r]:.0f} drops and {retrans['bbr'][r]:.0f} "
        f"retransmissions in the window, the 10 ms flow cwnd-limited in {100 * limited['bbr'][r]:.0f}% of samples"
        for r in rates_
    ) + (". Once the buffer is a fraction of the 50 ms flow's BDP, the queue no longer holds the backlog that "
         "Sec. IV-B's mechanism needs and losses bound it instead; see the section on Fig. 3 at high rates.")


def _below_min_reason(share: dict, limited: dict, drops: dict, rates_: list[int], low: int) -> str:
    parts = []
    for r in rates_:
        bbr, bbq = mean(share["bbr"][r]), mean(share["bbq"][r])
        parts.append(f"at {r} Mbit/s BBR gives the 10 ms flow {100 * bbr:.1f}% and BBQ {100 * bbq:.1f}% "
                     f"(BBQ cwnd-limited {100 * limited['bbq'][r]:.0f}%, {drops['bbq'][r]:.0f} drops; the buffer is "
                     f"{_bdp50(r):.2f} BDP of the 50 ms flow)")
    return "; ".join(parts) + (
        ". Where our BBR is already close to fair (high rates) or BBQ already fair (low rates), a ratio of 1.55x "
        "is out of reach without BBQ going above 50%: the ceiling is 50% / BBR's share.")


def _fig3_discussion(share: dict, limited: dict, retrans: dict, drops: dict, points: tuple[int, ...]) -> str:
    rows = [[f"{r}", f"{100 * mean(share['bbr'][r]):.1f}% "
             f"({compare.spread([100 * v for v in share['bbr'][r]], '.1f') or '-'})", f"{_bdp50(r):.2f}", f"{drops['bbr'][r]:.0f}", f"{retrans['bbr'][r]:.0f}",
             f"{100 * limited['bbr'][r]:.0f}%"] for r in points if r >= 100]
    if not rows:
        return "No rate >= 100 Mbit/s in this run."
    return markdown_table(["rate (Mbit/s)", "BBR: 10 ms share", "2 MB buffer in BDPs of the 50 ms flow",
                           "drops in window", "retransmits in window", "10 ms flow cwnd-limited"], rows) + (
        "\n\nThe paper's Fig. 3 keeps the 10 ms flow \"far below its fair share\" up to 1 Gbit/s, and its Fig. 14 "
        "(BBQ near 50% and at least 1.552x BBR) puts BBR's share at <= 32.2% at every rate >= 100 Mbit/s. Ours "
        "climbs toward 50% as the fixed 2 MB buffer shrinks below the 50 ms flow's BDP: the columns above are what "
        "the same runs measured. This report does not establish why the paper's testbed kept the bias at these "
        "rates (its buffer was the same 2 MB); the numbers are the difference, stated.")


def _fairness_reason(share: dict, limited: dict, retrans: dict, high: list[int]) -> str:
    worst = max(high, key=lambda r: abs(mean(share["bbq"][r]) - 0.5))
    return (
        f"the largest departure from 50% is at {worst} Mbit/s ({100 * mean(share['bbq'][worst]):.1f}%), where our "
        f"BBQ 10 ms flow is cwnd-limited in {100 * limited['bbq'][worst]:.0f}% of samples and the pair "
        f"retransmits {retrans['bbq'][worst]:.0f} segments in the window: the fixed 2 MB buffer is "
        f"{2e6 / (worst * 1e6 / 8 * 0.05):.2f} BDP of the 50 ms flow at {worst} Mbit/s."
    )


EXPERIMENT = Experiment(
    name="bbq-fig3-14",
    figure="Fig. 3, Fig. 14",
    summary="share of the 10 ms flow vs bottleneck rate 10 Mbit/s-1 Gbit/s, BBR and BBQ",
    runs=runs,
    analyse=analyse,
)
