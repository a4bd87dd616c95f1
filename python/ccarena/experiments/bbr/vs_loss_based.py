"""bbr-vs-loss-based: one BBR flow against one CUBIC flow, same path
(100 Mbit/s, 40 ms), buffers from half a BDP to 8 BDP: BBR's share.

Paper (L181, "Competition with Loss-Based Congestion Control"): "BBR
converges toward a fair share of the bottleneck bandwidth whether
competing with other BBR flows or with loss-based congestion control ...
Unmanaged router buffers exceeding several BDPs, however, cause
long-lived loss-based competitors to bloat the queue and grab more than
their fair share." The paper has no figure for it. Claims: claims.toml
("several BDPs" read as the sweep's 4 and 8 BDP, said there; "converges
toward" has no number and is shown); this module measures them per seed.
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

RATE_MBPS = 100
RTT_MS = 40
BUFFERS_BDP = (0.5, 1.0, 2.0, 4.0, 8.0)
QUICK_BUFFERS_BDP = (1.0, 8.0)
#: "Several BDPs" (L181): the sweep's buffers of at least this many BDPs.
SEVERAL_BDP = 4.0
DURATION_S = 60.0
QUICK_DURATION_S = 30.0
#: "Long-lived": after CUBIC's first cycles and BBR's first ProbeRTTs.
WINDOW_FROM_S = 20.0


def buffers(quick: bool) -> tuple[float, ...]:
    return QUICK_BUFFERS_BDP if quick else BUFFERS_BDP


def duration_s(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def _key(seed: int, b: float) -> str:
    return key("bbr-cubic", seed, buffer=f"{b:g}")


def runs(quick: bool) -> list[RunSpec]:
    dur = duration_s(quick)
    lo = min(WINDOW_FROM_S, dur / 2)
    return [RunSpec(_key(seed, b), paper.scenario([paper.flow(paper.BBR, RTT_MS), paper.flow(paper.CUBIC, RTT_MS)],
                                                  seed=seed, duration=dur, rate=f"{RATE_MBPS}Mbit",
                                                  buffer=paper.buffer(b), window=(lo, dur)))
            for b in buffers(quick) for seed in paper.seeds(quick)]


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    dur = duration_s(quick)
    bufs = buffers(quick)
    per = {b: runs_of(outcomes, "bbr-cubic", seeds, buffer=f"{b:g}") for b in bufs}
    bbr = {b: values(r, lambda o: o.share(0)) for b, r in per.items()}
    delay = {b: values(r, lambda o: o.queue_delay_mean_ms) for b, r in per.items()}
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One BBR and one CUBIC flow, both {RTT_MS} ms, {RATE_MBPS} Mbit/s, droptail buffers of "
        f"{', '.join(f'{b:g}' for b in bufs)} BDP, {dur:g} s; shares of the goodput over "
        f"{min(WINDOW_FROM_S, dur / 2):g}-{dur:g} s (\"long-lived\", L181). The paper names no buffer size: \"several "
        f"BDPs\" is read as the buffers of {SEVERAL_BDP:g} BDP and more.",
    ]
    for b in bufs:
        rep.numbers[f"bbr.share.{b:g}bdp"] = mean(bbr[b])
    rep.measured["vs-loss-based.fair-share"] = Measured(members={f"{b:g} BDP": bbr[b] for b in bufs})
    deep = [b for b in bufs if b >= SEVERAL_BDP]
    rep.measured["vs-loss-based.deep-buffer-cubic-ahead"] = Measured(
        members={f"{b:g} BDP": [1 - x for x in bbr[b]] for b in deep},
        note="mean queueing delay " + ", ".join(f"{mean(delay[b]):.0f} ms at {b:g} BDP" for b in deep) + ".")
    rows = [[f"{b:g}", f"{100 * mean(bbr[b]):.1f}%", compare.spread([100 * x for x in bbr[b]], ".1f") or "-",
             f"{mean(delay[b]):.1f}"] for b in bufs]
    rep.sections.append(("Per buffer", markdown_table(
        ["buffer (BDP)", "BBR's share", "over seeds", "mean queueing delay (ms)"], rows)))
    if fig_dir is not None:
        sweep(fig_dir / "vs_loss_based.png", f"BBR vs CUBIC, {RATE_MBPS} Mbit/s, {RTT_MS} ms: mean and range over seeds",
              list(bufs), [Series("BBR", [100 * mean(bbr[b]) for b in bufs], [100 * min(bbr[b]) for b in bufs],
                                  [100 * max(bbr[b]) for b in bufs])],
              xlabel="buffer (BDP)", ylabel="BBR's share (%)", logx=True, hline=(50.0, "fair share"))
        rep.figures.append(Figure("vs_loss_based.png", "BBR's share against one CUBIC flow over the buffer size; "
                                                       "the dashed line is the fair share"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="bbr-vs-loss-based",
    figure="Sec. \"Competition with Loss-Based Congestion Control\" (L181)",
    summary="one BBR vs one CUBIC flow, 100 Mbit/s, 40 ms, buffers 0.5-8 BDP: BBR's share",
    runs=runs,
    analyse=analyse,
)
