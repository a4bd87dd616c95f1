"""beyond-parking-lot: three links in a row, one flow across all three and
one cross flow on each; every flow of one algorithm. How far is each from
its max-min fair share?

Max-min fairness (Bertsekas and Gallager, "Data Networks", 2nd ed., 1992,
6.5.2) gives every flow here half a link: each link carries the long flow
and one cross flow. The long flow has three queues and twice the cross
flows' RTT against it; loss-based control is known to give such a flow
less than its max-min share (its window grows once per its longer RTT and
it sees three links' losses). BBR sizes its window from its own RTT, so
RTT unfairness (the BBQ and BBR-CWS papers' subject) meets multiple
bottlenecks here. No paper of ours states a number: shown, not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .. import compare
from ..common import key, markdown_table, mean, runs_of, values
from ..figures import Series, grouped_bars
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..variants import flow
from .common import ALGORITHMS, finish, link, seeds, topology

LINKS = ("a", "b", "c")
RATE_MBPS = 100
#: Each link's one-way delay; the flows' own hosts add HOST_RTT_MS.
LINK_DELAY_MS = 5
HOST_RTT_MS = 10
#: Buffers in BDPs of the long flow's base RTT (10 + 2 x 15 = 40 ms).
BUFFERS_BDP = (1.0, 4.0)
QUICK_BUFFERS_BDP = (1.0,)
DURATION_S = 60.0
QUICK_DURATION_S = 20.0
WINDOW_FROM_S = 20.0


def _buffers(quick: bool) -> tuple[float, ...]:
    return QUICK_BUFFERS_BDP if quick else BUFFERS_BDP


def _duration(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def scenario(variant, buffer_bdp: float, *, seed: int, duration: float) -> dict:
    """The parking lot with every flow running ``variant``: flow 0 crosses
    a, b and c; flows 1-3 one link each."""
    links = [link(name, RATE_MBPS, buffer_bdp, LINK_DELAY_MS) for name in LINKS]
    flows = [flow(variant, HOST_RTT_MS, path=list(LINKS))] + [flow(variant, HOST_RTT_MS, path=[name]) for name in LINKS]
    return topology(links, flows, seed=seed, duration=duration, window=(min(WINDOW_FROM_S, duration / 2), duration))


def runs(quick: bool) -> list[RunSpec]:
    dur = _duration(quick)
    return [RunSpec(key(v.name, seed, buffer=f"{b:g}"), scenario(v, b, seed=seed, duration=dur))
            for v in ALGORITHMS for b in _buffers(quick) for seed in seeds(quick)]


def _of_maxmin(run: Outcome, flows: range | list[int]) -> float:
    """The flows' mean goodput over their max-min fair share."""
    return mean([float(run.flows[i]["of_maxmin"]) for i in flows])


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    bufs = _buffers(quick)
    dur = _duration(quick)
    per = {(v.name, b): runs_of(outcomes, v.name, seeds(quick), buffer=f"{b:g}") for v in ALGORITHMS for b in bufs}
    long_flow = {p: values(r, lambda o: _of_maxmin(o, [0])) for p, r in per.items()}
    cross = {p: values(r, lambda o: _of_maxmin(o, range(1, 4))) for p, r in per.items()}
    util = {p: values(r, lambda o: min(link["utilization"] for link in o.summary["links"])) for p, r in per.items()}
    rep = Report(setup=[
        f"A parking lot: links {', '.join(LINKS)} in a row, {RATE_MBPS} Mbit/s each, droptail, a one-way delay of "
        f"{LINK_DELAY_MS} ms after each; flow 0 crosses all three, flows 1-3 one each; every flow's hosts add "
        f"{HOST_RTT_MS} ms, so the long flow's base RTT is {HOST_RTT_MS + 2 * len(LINKS) * LINK_DELAY_MS} ms and "
        f"the cross flows' {HOST_RTT_MS + 2 * LINK_DELAY_MS} ms. Buffers of {', '.join(f'{b:g}' for b in bufs)} BDP "
        f"of the long flow's RTT; every flow runs the same algorithm; {dur:g} s, goodput over "
        f"{min(WINDOW_FROM_S, dur / 2):g}-{dur:g} s; seeds {', '.join(map(str, seeds(quick)))}.",
        "Max-min fair share (Bertsekas and Gallager, *Data Networks*, 6.5.2, progressive filling over each link's "
        "goodput capacity, 1448 of every 1514 bytes): half a link for every flow here. `of max-min` is a flow's "
        "goodput over that share (1 = max-min fair).",
        "No paper of ours states a number for a topology: every row is shown, not judged.",
    ])
    rows = []
    for v in ALGORITHMS:
        for b in bufs:
            p = (v.name, b)
            rep.numbers[f"{v.name}.long.of_maxmin.{b:g}bdp"] = mean(long_flow[p])
            rep.numbers[f"{v.name}.cross.of_maxmin.{b:g}bdp"] = mean(cross[p])
            rows.append([v.label, f"{b:g}", f"{mean(long_flow[p]):.2f}",
                         compare.spread(long_flow[p], ".2f") or "-", f"{mean(cross[p]):.2f}",
                         f"{100 * mean(util[p]):.1f}%"])
    rep.sections.append(("Goodput over the max-min fair share", markdown_table(
        ["algorithm", "buffer (BDP)", "long flow", "over seeds", "cross flows (mean)", "least-used link"], rows)))
    if fig_dir is not None:
        for b in bufs:
            name = f"parking_lot_{b:g}bdp.png"
            grouped_bars(fig_dir / name, f"Parking lot, {RATE_MBPS} Mbit/s links, {b:g} BDP: goodput over the max-min "
                         "share (mean and range over seeds)", [v.label for v in ALGORITHMS],
                         [Series(label, [mean(d[(v.name, b)]) for v in ALGORITHMS],
                                 [min(d[(v.name, b)]) for v in ALGORITHMS], [max(d[(v.name, b)]) for v in ALGORITHMS])
                          for label, d in (("long flow (3 links)", long_flow), ("cross flows (1 link)", cross))],
                         ylabel="goodput / max-min share", hline=(1.0, "max-min fair"), ylim=None)
            rep.figures.append(Figure(name, f"Each algorithm's long flow and cross flows against their max-min "
                                            f"share, {b:g} BDP buffers; 1 is max-min fair"))
    return finish(rep, quick)


EXPERIMENT = Experiment(
    name="beyond-parking-lot",
    figure="beyond the papers (a parking lot)",
    summary="three 100 Mbit/s links, one flow across all three and one per link: goodput over the max-min share, "
            "BBR, BBRv3, BBQ, BBR-CWS, CUBIC",
    runs=runs,
    analyse=analyse,
)
