"""hock-bbr-vs-cubic: 1 BBR vs 1 CUBIC and 2 BBR vs 2 CUBIC flows in the
small and the large buffer.

Slides (L115-L123): "Inter-Protocol Fairness - BBR vs. CUBIC: 1 Gbit/s, 1
BBR flow vs. 1 CUBIC flow. Small buffers: BBR suppresses loss-based
congestion control. Single BBR flow works as intended"; L127-L131: "2 BBR
vs. 2 CUBIC Flows: Model mismatch: multiple BBR flows behave more
aggressively. Loss-based congestion control flows get severely
suppressed"; L163-L170 (backup): "Large buffers: BBR's inflight cap is
larger due to present queuing delay. BBR may loose against loss-based
congestion control".
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from .. import compare
from ..common import half_range, key, markdown_table, mean, runs_of
from ..figures import Series, grouped_bars
from ..framework import Experiment, Figure, Outcome, Report, RunSpec

#: Flows per algorithm.
PAIRS = (1, 2)


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key("mix", seed, n=n, buffer=paper.bkey(b)),
                    paper.scenario([paper.flow(paper.BBR, paper.RTT_MS, count=n),
                                    paper.flow(paper.CUBIC, paper.RTT_MS, count=n)],
                                   seed=seed, quick=quick, buffer_ms=b, interval=None))
            for n in PAIRS for b in paper.BUFFERS_MS for seed in paper.seeds(quick)]


def bbr_share(run: Outcome, n: int) -> float:
    """BBR's flows' summed share (they come first)."""
    return paper.share_of(run, list(range(n)))


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    bufs = paper.BUFFERS_MS
    share = {(n, b): [bbr_share(r, n) for r in runs_of(outcomes, "mix", seeds, n=n, buffer=paper.bkey(b))]
             for n in PAIRS for b in bufs}
    util = {(n, b): [r.utilization for r in runs_of(outcomes, "mix", seeds, n=n, buffer=paper.bkey(b))]
            for n in PAIRS for b in bufs}
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"n BBR and n CUBIC flows (n = {', '.join(map(str, PAIRS))}), all {paper.RTT_MS} ms, starting together, "
        f"{paper.RATE_MBPS / 1000:g} Gbit/s, buffers of {' and '.join(f'{b} ms' for b in bufs)}, "
        f"{paper.duration_s(quick):g} s, measured from {paper.window_from_s(quick):g} s. BBR's share: its flows' "
        "summed share of the goodput. \"Suppresses\": BBR's share above 50% by more than its seed half-range; "
        "\"may lose\": CUBIC ahead in at least one seed; \"more aggressive\" with two flows each: CUBIC's share at "
        "2 vs 2 below 1 vs 1 by more than the two points' seed half-ranges together (docs/experiments.md).")
    for (n, b), xs in share.items():
        rep.numbers[f"bbr_share.{n}v{n}.{paper.bkey(b)}"] = mean(xs)
    small, large = paper.SMALL_MS, paper.LARGE_MS
    one_small, two_small = share[(1, small)], share[(2, small)]
    one_large = share[(1, large)]
    cubic_1, cubic_2 = [1 - x for x in one_small], [1 - x for x in two_small]

    def shown(xs: list[float]) -> str:
        return f"BBR {100 * mean(xs):.1f}%"

    rep.comparisons += [
        compare.claim(f"1 vs 1, {small} ms buffer: BBR's share", "\"Small buffers: BBR suppresses loss-based "
                      "congestion control\" (L122): > 50%", shown(one_small),
                      mean(one_small) - half_range(one_small) > 0.5, spread_text=compare.spread(
                          [100 * x for x in one_small], ".1f"),
                      reason=f"CUBIC keeps {100 * (1 - mean(one_small)):.1f}%."),
        compare.claim(f"1 vs 1, {large} ms buffer: does CUBIC win?", "\"BBR may loose against loss-based congestion "
                      "control\" (L168): CUBIC ahead in some seed",
                      f"CUBIC ahead in {sum(x < 0.5 for x in one_large)} of {len(one_large)} seeds "
                      f"({shown(one_large)})", any(x < 0.5 for x in one_large),
                      spread_text=compare.spread([100 * x for x in one_large], ".1f"),
                      reason=f"BBR's share per seed: {', '.join(f'{100 * x:.0f}%' for x in one_large)}."),
        compare.claim(f"{small} ms buffer: CUBIC's share, 2 vs 2 against 1 vs 1",
                      "\"Loss-based congestion control flows get severely suppressed\" (L131): lower at 2 vs 2",
                      f"{100 * mean(cubic_2):.1f}% vs {100 * mean(cubic_1):.1f}%",
                      mean(cubic_1) - mean(cubic_2) > half_range(cubic_1) + half_range(cubic_2),
                      spread_text=compare.spread([100 * x for x in cubic_2], ".1f"),
                      reason=f"CUBIC's flows get {100 * mean(cubic_2):.1f}% together at 2 vs 2 against "
                             f"{100 * mean(cubic_1):.1f}% at 1 vs 1 (seed ranges "
                             f"{compare.spread([100 * x for x in cubic_2], '.1f')} and "
                             f"{compare.spread([100 * x for x in cubic_1], '.1f')})."),
        compare.ours_only(f"2 vs 2, {large} ms buffer: BBR's share", f"{100 * mean(share[(2, large)]):.1f}%",
                          compare.spread([100 * x for x in share[(2, large)]], ".1f")),
    ]
    rows = [[f"{n} vs {n}", f"{b} ms", f"{100 * mean(share[(n, b)]):.1f}%",
             compare.spread([100 * x for x in share[(n, b)]], ".1f"), f"{100 * mean(util[(n, b)]):.1f}%"]
            for b in bufs for n in PAIRS]
    rep.sections.append(("BBR's share (mean over seeds)", markdown_table(
        ["flows", "buffer", "BBR's share", "range", "utilisation"], rows)))
    if fig_dir is not None:
        groups = [(n, b) for b in bufs for n in PAIRS]
        grouped_bars(fig_dir / "vs_cubic.png", f"BBR (Linux 4.9) vs CUBIC, {paper.RATE_MBPS / 1000:g} Gbit/s, "
                     f"{paper.RTT_MS} ms", [f"{n} vs {n}\n{b} ms" for n, b in groups],
                     [Series("BBR", [100 * mean(share[g]) for g in groups], [100 * min(share[g]) for g in groups],
                             [100 * max(share[g]) for g in groups], style={"color": "tab:green"}),
                      Series("CUBIC", [100 * (1 - mean(share[g])) for g in groups],
                             [100 * (1 - max(share[g])) for g in groups], [100 * (1 - min(share[g])) for g in groups],
                             style={"color": "tab:red"})],
                     ylabel="share of the goodput (%)", hline=(50.0, "equal split"))
        rep.figures.append(Figure("vs_cubic.png", "each algorithm's share of the goodput (mean, seed range)"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-bbr-vs-cubic",
    figure="inter-protocol fairness",
    summary="1 vs 1 and 2 vs 2 BBR and CUBIC flows, 1 Gbit/s, 20 ms, 16- and 160-ms buffers: BBR's share",
    runs=runs,
    analyse=analyse,
)
