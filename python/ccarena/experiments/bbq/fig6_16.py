"""bbq-fig6-16: one 50 ms flow against 1-20 flows of 10 ms, 100 Mbit/s;
BBR (Fig. 6) and BBQ (Fig. 16).

Paper, Sec. I: "A 50-ms RTT flow occupies 50% of the bandwidth when
competing with twenty 10-ms RTT flows." Sec. III-B: "the advantage of the
long RTT flow diminishes quickly as the number of competing short RTT flows
increases ... [it] remains in favor with much more bandwidth than it
deserves even when it is outnumbered". Sec. VI-B: "in all cases, each
10-ms RTT flow improves its bandwidth share using BBQ. However, as their
number increases, the benefits provided by BBQ become less salient".
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
#: The paper's axis is 1-20 short flows; the points are ours.
COUNTS = (1, 2, 5, 10, 15, 20)
QUICK_COUNTS = (1, 5)


def counts(quick: bool) -> tuple[int, ...]:
    return QUICK_COUNTS if quick else COUNTS


def runs(quick: bool) -> list[RunSpec]:
    return [
        RunSpec(
            key(v.name, seed, n=n),
            # The long flow first: flow 0 is the 50 ms flow, flows 1..n the 10 ms ones.
            paper.scenario([paper.flow(v, paper.LONG_MS), paper.flow(v, paper.SHORT_MS, count=n)],
                           quick=quick, seed=seed),
            EVIDENCE_COLUMNS,
        )
        for v in VARIANTS
        for n in counts(quick)
        for seed in paper.seeds(quick)
    ]


def _long_share(run: Outcome) -> float:
    return run.share(0)


def _short_share_each(run: Outcome) -> float:
    shorts = [f["share"] for f in run.flows[1:]]
    return sum(shorts) / len(shorts)


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    points = counts(quick)
    seeds = paper.seeds(quick)
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(f"{', '.join(map(str, points))} flows of 10 ms with one 50 ms flow, all starting at 0 s "
                     "(the paper's axis is 1-20; the points are ours). A 10 ms flow's share is the mean over "
                     "the 10 ms flows.")
    long_share = {cc: {n: values(runs_of(outcomes, cc, seeds, n=n), _long_share) for n in points} for cc in CCS}
    each = {cc: {n: values(runs_of(outcomes, cc, seeds, n=n), _short_share_each) for n in points} for cc in CCS}
    for cc in CCS:
        for n in points:
            rep.numbers[f"{cc}.long_share.{n}"] = mean(long_share[cc][n])
            rep.numbers[f"{cc}.short_share_each.{n}"] = mean(each[cc][n])
    gain = {n: mean(each["bbq"][n]) / max(mean(each["bbr"][n]), 1e-9) for n in points}
    lo, hi = paper.window_from_s(quick), paper.duration_s(quick)

    def short_limited(run: Outcome) -> float:
        return mean([cwnd_limited_fraction(run, i, lo, hi) for i in range(1, len(run.flows))])

    limited = {cc: {n: mean(values(runs_of(outcomes, cc, seeds, n=n), short_limited)) for n in points} for cc in CCS}
    delay = {cc: {n: mean(values(runs_of(outcomes, cc, seeds, n=n), lambda r: r.queue_delay_mean_ms))
                  for n in points} for cc in CCS}

    last = points[-1]
    if 20 in points:
        rep.comparisons.append(compare.share("BBR: 50 ms flow's share against twenty 10 ms flows", 0.50,
                                             long_share["bbr"][20], reason=_twenty_reason(long_share, limited, delay)))
    rep.comparisons += [
        compare.claim("BBR: the 50 ms flow's advantage shrinks as 10 ms flows are added",
                      "\"diminishes quickly\"",
                      " -> ".join(f"{100 * mean(long_share['bbr'][n]):.0f}%" for n in points),
                      mean(long_share["bbr"][points[0]]) > mean(long_share["bbr"][last])),
        compare.claim("BBR: the 50 ms flow keeps more than its fair share at every count",
                      "\"much more bandwidth than it deserves\"",
                      f"min ratio to fair share {min(mean(long_share['bbr'][n]) * (n + 1) for n in points):.1f}x",
                      all(mean(long_share["bbr"][n]) > 1 / (n + 1) for n in points)),
        compare.claim("BBQ: every 10 ms flow gets more than with BBR, at every count", "\"in all cases\"",
                      f"min BBQ/BBR {min(gain.values()):.2f}x", all(g > 1 for g in gain.values()),
                      reason=_reason(long_share, each, min(points, key=lambda n: gain[n]))),
        compare.claim("BBQ's benefit shrinks as 10 ms flows are added", "\"less salient\"",
                      " -> ".join(f"{gain[n]:.2f}x" for n in points), gain[points[0]] > gain[last]),
    ]
    rows = [[str(n), f"{100 / (n + 1):.1f}%", f"{100 * mean(long_share['bbr'][n]):.1f}%",
             f"{100 * mean(long_share['bbq'][n]):.1f}%", f"{100 * mean(each['bbr'][n]):.2f}%",
             f"{100 * mean(each['bbq'][n]):.2f}%", f"{gain[n]:.2f}x",
             f"{100 * limited['bbr'][n]:.0f}% / {100 * limited['bbq'][n]:.0f}%",
             f"{delay['bbr'][n]:.1f} / {delay['bbq'][n]:.1f}"] for n in points]
    rep.sections.append(("Per count (means over seeds)", markdown_table(
        ["10 ms flows", "fair share", "BBR: 50 ms", "BBQ: 50 ms", "BBR: each 10 ms", "BBQ: each 10 ms",
         "BBQ/BBR (10 ms)", "10 ms flows cwnd-limited, BBR / BBQ", "queueing delay ms, BBR / BBQ"], rows)))

    if fig_dir is not None:
        def series(data: dict[int, list[float]], label: str, style: dict | None = None) -> Series:
            vals = [[100 * v for v in data[n]] for n in points]
            return Series(label, [mean(v) for v in vals], [min(v) for v in vals], [max(v) for v in vals], style or {})

        fair = Series("fair share 1/(N+1)", [100 / (n + 1) for n in points])
        # Shares span 2-90%: a log axis keeps the 10 ms flows' few percent readable.
        sweep(fig_dir / "fig6.png", "BBR: one 50 ms flow vs N flows of 10 ms (per-flow share)", points,
              [series(long_share["bbr"], "the 50 ms flow"), series(each["bbr"], "each 10 ms flow")],
              xlabel="number of 10 ms flows", ylabel="per-flow share (%, log scale)", reference=fair,
              integer_x=True, logy=True, ylim=_log_limits([long_share["bbr"], each["bbr"]], points))
        sweep(fig_dir / "fig16.png", "Share of each 10 ms flow (one 50 ms flow competing): BBR and BBQ", points,
              [series(each[cc], LABEL[cc]) for cc in CCS], xlabel="number of 10 ms flows",
              ylabel="share of each 10 ms flow (%, log scale)", reference=fair, integer_x=True, logy=True,
              ylim=_log_limits([each[cc] for cc in CCS], points))
        rep.figures += [
            Figure("fig6.png", "the paper's Fig. 6: per-flow share of the 50 ms flow and of each 10 ms flow (BBR)"),
            Figure("fig16.png", "the paper's Fig. 16: per-flow share of each 10 ms flow, BBR and BBQ"),
        ]
    return rep


def _log_limits(data: list[dict[int, list[float]]], points: tuple[int, ...]) -> tuple[float, float]:
    """y-limits (percent) of a log axis holding every seed's value and the
    fair share at each point, widened to the 1-2-5 ticks around them."""
    vals = [100 * v for d in data for n in points for v in d[n]] + [100 / (n + 1) for n in points]
    steps = (0.5, 1, 2, 5, 10, 20, 50, 100)
    lo = max([s for s in steps if s <= min(vals)], default=steps[0])
    hi = min([s for s in steps if s >= max(vals)], default=steps[-1])
    return lo * 0.9, hi * 1.1


def _twenty_reason(long_share: dict, limited: dict, delay: dict) -> str:
    return (
        f"with twenty 10 ms flows our 50 ms BBR flow gets {100 * mean(long_share['bbr'][20]):.1f}%: the 10 ms flows "
        f"are cwnd-limited in {100 * limited['bbr'][20]:.0f}% of samples at a {delay['bbr'][20]:.0f} ms queueing "
        "delay (with one 10 ms flow: "
        f"{100 * limited['bbr'][min(limited['bbr'])]:.0f}% at {delay['bbr'][min(delay['bbr'])]:.0f} ms). The 50 ms "
        "flow's share falls steadily with the count (next row) and at twenty flows ours has fallen further than "
        "the paper's; the paper gives no queueing delay or per-flow trace for this figure to compare with."
    )


def _reason(long_share: dict, each: dict, n: int) -> str:
    return (
        f"with {n} flows of 10 ms, our 50 ms flow takes {100 * mean(long_share['bbr'][n]):.1f}% with BBR and "
        f"{100 * mean(long_share['bbq'][n]):.1f}% with BBQ; each 10 ms flow {100 * mean(each['bbr'][n]):.2f}% "
        f"and {100 * mean(each['bbq'][n]):.2f}%."
    )


EXPERIMENT = Experiment(
    name="bbq-fig6-16",
    figure="Fig. 6, Fig. 16",
    summary="one 50 ms flow against 1-20 flows of 10 ms: per-flow shares, BBR and BBQ",
    runs=runs,
    analyse=analyse,
)
