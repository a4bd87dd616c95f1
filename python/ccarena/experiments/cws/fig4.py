"""cws-fig4: throughput of one BBR and one CUBIC flow against the
bottleneck buffer size, on the physical testbed (100 Mbit/s, 10 ms).

Paper, Sec. 3 (L76): "the throughput between BBR and CUBIC clearly
depends on the bottleneck buffer size. When the bottleneck buffer size is
smaller than 1 BDP, most of the bandwidth is occupied by BBR. However,
when the buffer size is larger than 1 BDP, CUBIC occupies more bandwidth
as the buffer size gets larger." The claims are in claims.toml: "most of
the bandwidth" has no number (shown); CUBIC's share rising above 1 BDP is
judged as an order over the buffers larger than 1 BDP.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from .. import compare
from ..common import key, markdown_table, mean, runs_of, values
from ..figures import Series, sweep
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

#: Buffer sizes (BDP). The paper gives no grid for Fig. 4; we use Fig. 13's.
BUFFERS = (0.2, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0)
#: Two buffers above 1 BDP, so that the order claim has a step in a --quick run.
QUICK_BUFFERS = (0.5, 2.0, 5.0)


def buffers(quick: bool) -> tuple[float, ...]:
    return QUICK_BUFFERS if quick else BUFFERS


def runs(quick: bool) -> list[RunSpec]:
    return [
        RunSpec(key("bbr", seed, buffer=paper.bkey(b)),
                paper.pair(paper.BBR, paper.SHORT_MS, seed=seed, duration=paper.duration_s(quick), buffer_bdp=b,
                           rate=paper.TESTBED_RATE))
        for b in buffers(quick) for seed in paper.seeds(quick)
    ]


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    points = buffers(quick)
    seeds = paper.seeds(quick)
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"Physical testbed of Sec. 3: {paper.TESTBED_RATE_MBPS} Mbit/s, {paper.SHORT_MS} ms, one BBR and one CUBIC "
        f"flow. The paper gives neither the buffer grid nor the duration of Fig. 4; we use Fig. 13's grid "
        f"({', '.join(f'{b:g}' for b in points)} BDP) and {paper.duration_s(quick)} s runs (Sec. 5's duration)."
    )
    per = {b: runs_of(outcomes, "bbr", seeds, buffer=paper.bkey(b)) for b in points}
    bbr = {b: values(per[b], lambda r: r.share(0)) for b in points}
    cubic = {b: [1 - s for s in bbr[b]] for b in points}
    tput = {b: (values(per[b], lambda r: r.goodput(0)), values(per[b], lambda r: r.goodput(1))) for b in points}
    retx = {b: (values(per[b], lambda r: r.flows[0]["retransmits_total"]),
                values(per[b], lambda r: r.flows[1]["retransmits_total"])) for b in points}
    delay = {b: values(per[b], lambda r: r.queue_delay_mean_ms) for b in points}
    for b in points:
        rep.numbers[f"bbr.share.{b:g}bdp"] = mean(bbr[b])
        rep.numbers[f"bbr.goodput_mbps.{b:g}bdp"] = mean(tput[b][0])
        rep.numbers[f"cubic.goodput_mbps.{b:g}bdp"] = mean(tput[b][1])
    shallow = [b for b in points if b < 1]
    deep = [b for b in points if b > 1]

    def evidence(b: float) -> str:
        return (f"{b:g} BDP: BBR {100 * mean(bbr[b]):.1f}%, retransmissions BBR {mean(retx[b][0]):.0f} / CUBIC "
                f"{mean(retx[b][1]):.0f}, mean queueing delay {mean(delay[b]):.1f} ms")

    rep.measured["fig4.bbr-most-below-1bdp"] = Measured(
        members={f"{b:g} BDP": bbr[b] for b in shallow}, note="; ".join(evidence(b) for b in shallow) + ".")
    rep.measured["fig4.cubic-rises-above-1bdp"] = Measured(
        members={f"{b:g} BDP": cubic[b] for b in deep}, note="; ".join(evidence(b) for b in deep) + ".")
    cross = next((b for b in points if mean(cubic[b]) > 0.5), None)
    rep.comparisons.append(compare.ours_only(
        "smallest buffer at which CUBIC gets more than BBR", "none" if cross is None else f"{cross:g} BDP",
        note="the paper's text puts the turn at 1 BDP without a number."))

    table = [[f"{b:g}", f"{mean(tput[b][0]):.1f} ({compare.spread(tput[b][0], '.1f') or '-'})",
              f"{mean(tput[b][1]):.1f} ({compare.spread(tput[b][1], '.1f') or '-'})",
              f"{100 * mean(bbr[b]):.1f}%", f"{mean(retx[b][0]):.0f} / {mean(retx[b][1]):.0f}",
              f"{mean(delay[b]):.1f}"] for b in points]
    rep.sections.append(("Per buffer", markdown_table(
        ["buffer (BDP)", "BBR goodput (Mbit/s)", "CUBIC goodput (Mbit/s)", "BBR share", "retransmissions BBR / CUBIC",
         "mean queueing delay (ms)"], table) + "\n\nMeans (and seed ranges) over the whole run."))

    if fig_dir is not None:
        sweep(fig_dir / "fig4.png",
              f"BBR vs CUBIC: throughput vs buffer size ({paper.TESTBED_RATE_MBPS} Mbit/s, {paper.SHORT_MS} ms)",
              points, [_series(tput, points, 0, "BBR"), _series(tput, points, 1, "CUBIC")],
              xlabel="bottleneck buffer (BDP)", ylabel="goodput (Mbit/s)", logx=True, labelled=(paper.DEEP_BDP,),
              hline=(paper.TESTBED_RATE_MBPS * 1448 / 1514 / 2, "fair share"), ylim=(0, paper.TESTBED_RATE_MBPS))
        rep.figures.append(Figure("fig4.png", "the paper's Fig. 4: per-flow goodput vs buffer (mean, seed range)"))
    return paper.finish(rep, quick)


def _series(tput: dict, points: tuple[float, ...], i: int, label: str) -> Series:
    vals = [tput[b][i] for b in points]
    return Series(label, [mean(v) for v in vals], [min(v) for v in vals], [max(v) for v in vals])


EXPERIMENT = Experiment(
    name="cws-fig4",
    figure="Fig. 4",
    summary="BBR vs CUBIC throughput vs buffer size 0.2-6 BDP (100 Mbit/s, 10 ms)",
    runs=runs,
    analyse=analyse,
)
