"""bbq-fig13: BBQ 10 ms vs 50 ms, the 10 ms flow leaving at 110 s:
goodput and queueing delay; how fast the remaining flow takes the link.

Paper, Sec. VI-A: "The short flow comes back and settles on 51.4 Mbps
after the synchronization of ProbeRTT at 31 s, while the 50-ms RTT flow
stabilizes at around 42.5 Mbps. When the 10-ms RTT flow departs at 110 s,
BBQ instantly detects this and reduces to BBR. The 50-ms RTT flow quickly
ramps up and takes the remaining bandwidth in just 1.7 seconds. ... BBQ
reduces the average queueing delay to 8.3 ms, as opposed to 23.4 ms when
using BBR" (64.5%, Sec. VI highlights). L283-L293; the claims are in
claims.toml (judged here once; bbq-fig1 shows the same pair in Fig. 1's
scenario, unjudged). "Takes the remaining bandwidth" is not defined: the
time to 90% of the link is measured over a 100 ms and a 0.5 s mean.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .paper import LABEL
from .. import compare, traces
from ..common import key, live_of, mean, runs_of, summary_only, values
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

VARIANTS = (paper.BBQ, paper.BBR)
CCS = tuple(v.name for v in VARIANTS)
INTERVAL = "10ms"
LEAVE_S = 110.0
QUICK_LEAVE_S = 25.0
#: The steady state the paper quotes: after the ProbeRTT synchronisation at 31 s.
STEADY_FROM_S = 31.0
QUICK_STEADY_FROM_S = 10.0
#: Goodput a 100 Mbit/s link can carry (payload / wire bytes per packet).
LINK_GOODPUT_MBPS = 100 * 1448 / 1514
#: "Takes the remaining bandwidth": the 50 ms flow's goodput, averaged over
#: 100 ms (two of its RTTs), reaches 90% of what the link can carry.
REACH = 0.9
SMOOTH = 10  # 10 ms samples
#: The other reading: the same 90% over a 0.5 s mean.
SLOW_SMOOTH = 50


def leave_s(quick: bool) -> float:
    return QUICK_LEAVE_S if quick else LEAVE_S


def runs(quick: bool) -> list[RunSpec]:
    leave = leave_s(quick)
    steady = QUICK_STEADY_FROM_S if quick else STEADY_FROM_S
    specs = []
    for v in VARIANTS:
        for seed in paper.seeds(quick):
            doc = paper.scenario(
                [paper.flow(v, paper.SHORT_MS, stop=f"{leave:g}s"), paper.flow(v, paper.LONG_MS)],
                quick=quick, seed=seed, duration=leave + 10, window=(steady, leave), interval=INTERVAL,
            )
            specs.append(RunSpec(key(v.name, seed), doc, ("goodput_mbps", "cc_mode", "pacing_gain", "bw_estimate_mbps"),
                                 ("queue_delay_ms", "queue_bytes")))
    return specs


def live_runs(quick: bool) -> list[RunSpec]:
    """``--live`` repeats BBQ's first seed on real Linux."""
    return summary_only(runs(quick), paper.BBQ.name, paper.SEEDS[0])


def time_to_take_link(run: Outcome, leave: float, smooth: int = SMOOTH) -> float:
    """Seconds after ``leave`` until the 50 ms flow carries REACH of the link
    (its goodput averaged over ``smooth`` samples)."""
    return traces.time_to_reach(run.t_s, run.flow["goodput_mbps"][1], REACH * LINK_GOODPUT_MBPS, leave, smooth)


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    leave = leave_s(quick)
    steady = QUICK_STEADY_FROM_S if quick else STEADY_FROM_S
    rep = Report(setup=list(paper.SETUP[:1]) + list(paper.SETUP[2:]))
    rep.setup += [
        f"The 10 ms flow stops sending new data at {leave:g} s; the run ends at {leave + 10:g} s. Steady state is "
        f"measured over {steady:g}-{leave:g} s (the paper quotes it after the ProbeRTT synchronisation at 31 s). "
        "Telemetry every 10 ms.",
        f"\"Takes the remaining bandwidth\": the 50 ms flow's goodput, averaged over 100 ms, first reaches "
        f"{100 * REACH:.0f}% of what the link can carry ({REACH * LINK_GOODPUT_MBPS:.1f} Mbit/s of goodput); "
        "the time is counted from the departure.",
    ]
    per = {cc: runs_of(outcomes, cc, seeds) for cc in CCS}
    g_short = {cc: values(per[cc], lambda r: r.goodput(0)) for cc in CCS}
    g_long = {cc: values(per[cc], lambda r: r.goodput(1)) for cc in CCS}
    delay = {cc: values(per[cc], lambda r: r.queue_delay_mean_ms) for cc in CCS}
    take = {cc: values(per[cc], lambda r: time_to_take_link(r, leave)) for cc in CCS}
    reduction = [1 - q / b for q, b in zip(delay["bbq"], delay["bbr"])]
    for cc in CCS:
        rep.numbers[f"{cc}.short_goodput_mbps"] = mean(g_short[cc])
        rep.numbers[f"{cc}.long_goodput_mbps"] = mean(g_long[cc])
        rep.numbers[f"{cc}.queue_delay_ms"] = mean(delay[cc])
        rep.numbers[f"{cc}.time_to_90pct_s"] = mean(take[cc])
        rep.numbers[f"{cc}.time_to_90pct_max_s"] = max(take[cc])
    rep.numbers["queue_delay_reduction"] = mean(reduction)

    run = per["bbq"][0]
    took = take["bbq"][0]
    ramp = took if np.isfinite(took) else 3.0
    mode_after = run.flow["cc_mode"][1][traces.window(run.t_s, leave, leave + ramp)]
    share_short = values(per["bbq"], lambda r: r.share(0))
    live = live_of(outcomes, "bbq", paper.SEEDS[0])
    split = _split_reason(g_short["bbq"], g_long["bbq"], share_short, live, per["bbq"][0])
    delay_note = _delay_reason(delay, reduction)
    rep.measured["fig13.bbq-short-goodput"] = Measured(g_short["bbq"], note=split)
    rep.measured["fig13.bbq-long-goodput"] = Measured(g_long["bbq"], note=split)
    rep.measured["fig13.bbq-delay"] = Measured(delay["bbq"], note=delay_note)
    rep.measured["fig13.bbr-delay"] = Measured(delay["bbr"], note=delay_note)
    rep.measured["fig13.delay-reduction"] = Measured(reduction, note=delay_note)
    rep.measured["fig13.take-link"] = Measured(
        take["bbq"],
        # The paper does not define "takes the remaining bandwidth": the same 90% over a 0.5 s mean is the
        # other reasonable reading (tests/test_bbq.py uses it).
        alternatives={"90% of the link over a 0.5 s mean": Measured(
            values(per["bbq"], lambda r: time_to_take_link(r, leave, SLOW_SMOOTH)))},
        note=_take_reason(run, leave, mode_after, took))
    rep.comparisons += [
        compare.ours_only("BBR: time for the 50 ms flow to take the link", f"{mean(take['bbr']):.2f} s",
                          compare.spread(take["bbr"], ".2f")),
    ]
    if live is not None:
        rep.comparisons.append(compare.live_share_delay(
            f"BBQ 10 ms flow share, queueing delay (seed {paper.SEEDS[0]})", live, per["bbq"][0]))

    if fig_dir is not None:
        for cc in CCS:
            r = per[cc][0]
            g = np.vstack([traces.trailing_mean(r.flow["goodput_mbps"][i], 50) for i in (0, 1)])
            name = "fig13.png" if cc == "bbq" else "fig13-bbr.png"
            time_panels(
                fig_dir / name,
                f"{LABEL[cc]}: 10 ms vs 50 ms, the 10 ms flow leaves at {leave:g} s (seed 1)",
                r.t_s,
                [Panel("goodput (Mbit/s, 0.5 s mean)", [Line("10 ms", g[0]), Line("50 ms", g[1])]),
                 Panel("queueing delay (ms, 0.5 s mean)", [Line("bottleneck", traces.trailing_mean(
                     r.link["queue_delay_ms"], 50), style={"color": "black", "linewidth": 0.8})])],
                marks=[(leave, "10 ms flow leaves")],
                spans=[(steady, leave, "steady state")],
            )
        r = per["bbq"][0]
        g = traces.trailing_mean(r.flow["goodput_mbps"][1], SMOOTH)
        time_panels(
            fig_dir / "fig13-departure.png", f"BBQ: the 50 ms flow after the 10 ms flow leaves at {leave:g} s", r.t_s,
            [Panel("50 ms flow goodput (Mbit/s, 100 ms mean)", [Line("50 ms", g, style={"color": "tab:orange"}),
                                                               Line(f"{100 * REACH:.0f}% of the link",
                                                                    np.full_like(g, REACH * LINK_GOODPUT_MBPS),
                                                                    style={"color": "dimgray", "linestyle": ":"})])],
            xlim=(leave - 1, leave + 5), marks=[(leave, "10 ms flow leaves")], height=3.2,
        )
        rep.figures += [
            Figure("fig13.png", "the paper's Fig. 13: BBQ goodput and queueing delay; the 10 ms flow leaves"),
            Figure("fig13-departure.png", "zoom on the departure: the 50 ms flow taking the link"),
            Figure("fig13-bbr.png", "the same scenario with BBR, for the queueing-delay comparison"),
        ]
    return rep


def _split_reason(short: list[float], long: list[float], shares: list[float], live: Outcome | None,
                  sim: Outcome) -> str:
    total = [a + b for a, b in zip(short, long)]
    if live is None:
        linux = " Whether real Linux agrees is measured by `ccarena reproduce bbq-fig13 --live` (root), not by this run."
    else:
        linux = (f" Real Linux on this host (this run's --live pass, BBQ as BPF, seed 1's scenario) gives the 10 ms "
                 f"flow {100 * live.share(0):.1f}% against the simulator's {100 * sim.share(0):.1f}% for the same "
                 "seed (docs/live.md: the live share is lower and varies with the host).")
    return (
        f"the two flows carry {mean(total):.1f} Mbit/s together ({min(total):.1f}-{max(total):.1f} over seeds; the "
        f"paper's {51.4 + 42.5:.1f}), so the difference is in the split, not the total: our 10 ms flow takes "
        f"{100 * mean(shares):.1f}% ({100 * min(shares):.1f}-{100 * max(shares):.1f}%) of the steady-state goodput, "
        f"the paper's {100 * 51.4 / (51.4 + 42.5):.1f}%. What tips the paper's split further toward the 10 ms flow "
        "is not identified from these runs." + linux
    )


def _delay_reason(delay: dict[str, list[float]], reduction: list[float]) -> str:
    return (
        f"both of our queues are deeper than the paper's by about the same factor, BBQ {mean(delay['bbq']):.1f} ms "
        f"({mean(delay['bbq']) / 8.3:.2f}x the paper's 8.3 ms) and BBR {mean(delay['bbr']):.1f} ms "
        f"({mean(delay['bbr']) / 23.4:.2f}x its 23.4 ms), so the reduction, {100 * mean(reduction):.1f}%, matches the "
        "paper's 64.5%. Why the paper's testbed held a shallower standing queue under both algorithms is "
        "not identified from these runs."
    )


def _take_reason(run: Outcome, leave: float, mode_after: np.ndarray, took: float) -> str:
    """What the 50 ms BBQ flow did after the departure (seed 1)."""
    t = run.t_s
    g = run.flow["goodput_mbps"][1]
    before = traces.mean_over(t, g, leave - 5, leave)
    after = t > leave
    empty = np.nonzero(after & (run.link["queue_bytes"] == 0))[0]
    probing = np.nonzero(after & (run.flow["pacing_gain"][1] > 1.1))[0]
    bw = run.flow["bw_estimate_mbps"][1]
    text = f"our 50 ms flow carries {before:.1f} Mbit/s before the departure (seed 1)"
    if len(empty):
        text += f"; the queue is empty {1000 * (t[empty[0]] - leave):.0f} ms after it"
    if len(probing):
        first = probing[0]
        stop = first
        while stop + 1 < len(t) and run.flow["pacing_gain"][1][stop + 1] > 1.1:
            stop += 1
        text += (
            f", and the flow's next probe, {1000 * (t[first] - leave):.0f} ms after the departure, is BBR's "
            f"uncapped one (BBQ sees no queue): it lasts {1000 * (t[stop] - t[first] + 0.01):.0f} ms, because BBR "
            "keeps probing while in-flight is below 5/4 of a BDP that grows with every round's delivery rate, "
            f"and takes the bandwidth estimate from {bw[first - 1]:.1f} to {bw[stop]:.1f} Mbit/s. The link is "
            f"taken {took:.2f} s after the departure, within the first probe rather than the several 8-phase "
            "cycles (+25% each) a slower ramp would need"
        )
    if bool((mode_after == traces.PROBE_RTT).any()):
        text += "; a ProbeRTT of the 50 ms flow falls inside the ramp"
    return text + "."


EXPERIMENT = Experiment(
    name="bbq-fig13",
    figure="Fig. 13",
    summary="BBQ 10 ms vs 50 ms, the 10 ms flow leaves at 110 s: goodput, queueing delay, time to take the link",
    runs=runs,
    analyse=analyse,
    live=live_runs,
)
