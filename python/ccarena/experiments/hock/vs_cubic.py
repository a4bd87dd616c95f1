"""hock-bbr-vs-cubic: 1 BBR vs 1 CUBIC and 2 BBR vs 2 CUBIC flows in the
small and the large buffer.

Slides (L129-L133): "Inter-Protocol Fairness - BBR vs. CUBIC: 1 Gbit/s, 1
BBR flow vs. 1 CUBIC flow. Small buffers: BBR suppresses loss-based
congestion control. Single BBR flow works as intended"; L137-L140: "2 BBR
vs. 2 CUBIC Flows: Model mismatch: multiple BBR flows behave more
aggressively. Loss-based congestion control flows get severely
suppressed"; L186-L192 (backup): "Large buffers: BBR's inflight cap is
larger due to present queuing delay. BBR may loose against loss-based
congestion control"; L200-L202 (backup): "Interprotocol Fairness - BBR vs.
CUBIC: 1 BBR flow vs. 1 CUBIC flow", a figure over buffer sizes. The
slides name 1 Gbit/s (L131, L188): every run is at 1 Gbit/s. Claims:
claims.toml.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from ..common import key, markdown_table, mean, pct, runs_of
from ..compare import spread
from ..figures import Series, grouped_bars, sweep
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

#: Flows per algorithm.
PAIRS = (1, 2)
#: The backup slide's 1 BBR vs 1 CUBIC over buffer sizes (L200-L202; the
#: slides give the figure, not its sizes): 0.25 to 8 BDP of the 20-ms path,
#: the two buffers of the main slides among them.
SWEEP_MS = (5, 10, 16, 20, 40, 80, 160)
QUICK_SWEEP_MS = (5, 16, 160)
#: BBR's cwnd and bandwidth estimate, for "BBR's inflight cap is larger
#: due to present queuing delay" (L190).
COLUMNS = paper.OWN_BDP_COLUMNS


def buffers(n: int, quick: bool) -> tuple[float, ...]:
    """The buffers of the n vs n runs: both of the slides' for 2 vs 2; the
    sweep, which holds them, for 1 vs 1."""
    return paper.BUFFERS_MS if n > 1 else (QUICK_SWEEP_MS if quick else SWEEP_MS)


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key("mix", seed, n=n, buffer=paper.bkey(b)),
                    paper.scenario([paper.flow(paper.BBR, paper.RTT_MS, count=n),
                                    paper.flow(paper.CUBIC, paper.RTT_MS, count=n)],
                                   seed=seed, quick=quick, buffer_ms=b), COLUMNS if n == 1 else ())
            for n in PAIRS for b in buffers(n, quick) for seed in paper.seeds(quick)]


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
        "summed share of the goodput.")
    for (n, b), xs in share.items():
        rep.numbers[f"bbr_share.{n}v{n}.{paper.bkey(b)}"] = mean(xs)
    small, large = paper.SMALL_MS, paper.LARGE_MS
    per_buffer = lambda f: {f"{b} ms": f(b) for b in bufs}  # noqa: E731
    rep.measured["vs-cubic.suppresses"] = Measured(share[(1, small)], note=f"CUBIC keeps {pct(1 - mean(share[(1, small)]))}.")
    rep.measured["vs-cubic.more-aggressive"] = Measured(
        members=per_buffer(lambda b: [x2 - x1 for x1, x2 in zip(share[(1, b)], share[(2, b)], strict=True)]),
        note="; ".join(f"{b} ms: BBR {pct(mean(share[(1, b)]))} at 1 vs 1, {pct(mean(share[(2, b)]))} at 2 vs 2"
                       for b in bufs) + ".")
    rep.measured["vs-cubic.severely-suppressed"] = Measured(
        members=per_buffer(lambda b: [1 - x for x in share[(2, b)]]))
    lo = paper.window_from_s(quick)
    rep.measured["vs-cubic.cap-larger"] = Measured(
        members={f"{b} ms": [paper.over_own_bdp(r, 0, paper.RTT_MS, lo, "cwnd")
                             for r in runs_of(outcomes, "mix", seeds, n=1, buffer=paper.bkey(b))] for b in bufs},
        note="without a queue the cap is 2 BDP (plus Linux 4.9's 3 TSO bursts); a queue in BBR's RTprop "
             "estimate raises it.")
    swept = buffers(1, quick)
    one = {b: [bbr_share(r, 1) for r in runs_of(outcomes, "mix", seeds, n=1, buffer=paper.bkey(b))] for b in swept}
    ahead = [b for b in swept if mean(one[b]) >= 0.5]
    behind = [b for b in swept if mean(one[b]) < 0.5]
    rep.measured["vs-cubic.buffers"] = Measured(
        members={f"{b:g} ms ({b / paper.RTT_MS:g} BDP)": one[b] for b in swept},
        note=f"BBR's share falls below half between {max(ahead):g} and {min(behind):g} ms of buffer."
        if ahead and behind else "")
    rep.measured["vs-cubic.small-to-large"] = Measured(
        members={f"{small} ms": share[(1, small)], f"{large} ms": share[(1, large)]})
    rep.measured["vs-cubic.may-lose"] = Measured(
        share[(1, large)], note=f"CUBIC ahead in {sum(x < 0.5 for x in share[(1, large)])} of "
                                f"{len(share[(1, large)])} seeds.")
    rows = [[f"{n} vs {n}", f"{b} ms", f"{100 * mean(share[(n, b)]):.1f}%",
             spread([100 * x for x in share[(n, b)]], ".1f"), f"{100 * mean(util[(n, b)]):.1f}%"]
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
        by_buffer = [one[b] for b in swept]
        sweep(fig_dir / "vs_cubic_buffers.png", f"1 BBR (Linux 4.9) vs 1 CUBIC flow, {paper.RATE_MBPS / 1000:g} "
              f"Gbit/s, {paper.RTT_MS} ms", [b / paper.RTT_MS for b in swept],
              [Series("BBR", [100 * mean(x) for x in by_buffer], [100 * min(x) for x in by_buffer],
                      [100 * max(x) for x in by_buffer],
                      style={"color": "tab:green"}),
               Series("CUBIC", [100 * (1 - mean(x)) for x in by_buffer], [100 * (1 - max(x)) for x in by_buffer],
                      [100 * (1 - min(x)) for x in by_buffer], style={"color": "tab:red"})],
              xlabel="bottleneck buffer (BDP of the 20-ms path)", ylabel="share of the goodput (%)", logx=True,
              hline=(50.0, "equal split"))
        rep.figures.append(Figure("vs_cubic_buffers.png", "1 vs 1 over buffer sizes, as the backup slide "
                                                          "(L200-L202): each algorithm's share (mean, seed range)"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-bbr-vs-cubic",
    figure="inter-protocol fairness",
    summary="1 vs 1 and 2 vs 2 BBR and CUBIC flows, 1 Gbit/s, 20 ms, 16- and 160-ms buffers: BBR's share",
    runs=runs,
    analyse=analyse,
)
