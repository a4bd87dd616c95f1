"""cws-fig4: throughput of one BBR and one CUBIC flow against the
bottleneck buffer size, on the physical testbed (100 Mbit/s, 10 ms).

Paper, Sec. 3 (L76): "the throughput between BBR and CUBIC clearly
depends on the bottleneck buffer size. When the bottleneck buffer size is
smaller than 1 BDP, most of the bandwidth is occupied by BBR. However,
when the buffer size is larger than 1 BDP, CUBIC occupies more bandwidth
as the buffer size gets larger."
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import paper
from .. import compare
from ..common import half_range, key, markdown_table, mean, runs_of, values
from ..figures import Series, sweep
from ..framework import MIN_SEEDS, Experiment, Figure, Outcome, Report, RunSpec

#: Buffer sizes (BDP). The paper gives no grid for Fig. 4; we use Fig. 13's.
BUFFERS = (0.2, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0)
QUICK_BUFFERS = (0.5, 5.0)


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
    judged = len(seeds) >= MIN_SEEDS

    shallow = [b for b in points if b < 1]
    deep = [b for b in points if b >= 1]
    worst = min(shallow, key=lambda b: mean(bbr[b])) if shallow else None
    rows = []
    if worst is not None:
        short_of = [b for b in shallow if mean(bbr[b]) <= 0.5]
        rows.append(compare.bound(
            "BBR's share below 1 BDP", "\"smaller than 1 BDP, most of the bandwidth is occupied by BBR\" (> 50%)",
            [mean(bbr[b]) for b in shallow], 0.5, below=False, where=f"{worst:g} BDP",
            spread_text=compare.spread([100 * v for v in bbr[worst]], ".1f"),
            reason="; ".join(f"at {b:g} BDP BBR gets {100 * mean(bbr[b]):.1f}% with {mean(retx[b][0]):.0f} BBR "
                             f"and {mean(retx[b][1]):.0f} CUBIC retransmissions" for b in short_of) + "."
            if short_of else ""))
    if len(deep) >= 2:
        drops = [(a, b) for a, b in zip(deep, deep[1:])
                 if mean(cubic[a]) - mean(cubic[b]) > half_range(cubic[a]) + half_range(cubic[b])]
        rows.append(compare.claim(
            "CUBIC's share above 1 BDP rises with the buffer",
            "\"larger than 1 BDP, CUBIC occupies more bandwidth as the buffer size gets larger\"",
            " -> ".join(f"{100 * mean(cubic[b]):.0f}%" for b in deep) + f" ({', '.join(f'{b:g}' for b in deep)} BDP)",
            (not drops) if judged else None,
            reason="; ".join(
                f"CUBIC falls from {100 * mean(cubic[a]):.1f}% at {a:g} BDP to {100 * mean(cubic[b]):.1f}% at "
                f"{b:g} BDP (seed ranges {compare.spread([100 * v for v in cubic[a]], '.1f')} and "
                f"{compare.spread([100 * v for v in cubic[b]], '.1f')}); BBR's retransmissions "
                f"{mean(retx[a][0]):.0f} -> {mean(retx[b][0]):.0f}, mean queueing delay {mean(delay[a]):.1f} -> "
                f"{mean(delay[b]):.1f} ms" for a, b in drops) + "." if drops else ""))
    cross = next((b for b in points if mean(cubic[b]) > 0.5), None)
    rows.append(compare.ours_only(
        "smallest buffer at which CUBIC gets more than BBR", "none" if cross is None else f"{cross:g} BDP",
        note="the paper's text puts the turn at 1 BDP without a number."))
    rep.comparisons += rows

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
              xlabel="bottleneck buffer (BDP)", ylabel="goodput (Mbit/s)", logx=True,
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
