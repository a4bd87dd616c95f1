"""bbr-fig3: one BBR flow, 10 Mbit/s and 40 ms; the bottleneck doubles to
20 Mbit/s at 20 s and returns to 10 Mbit/s at 40 s.

Paper (L109): "If BtlBw has increased, deliveryRate increases and the new
max immediately increases the BtlBw filter output, increasing the base
pacing rate. Thus, BBR converges to the new bottleneck rate exponentially
fast. Figure 3 shows the effect on a 10-Mbps, 40-ms flow of BtlBw
abruptly doubling to 20 Mbps after 20 seconds of steady operation (left
graph) then dropping to 10 Mbps after another 20 seconds of steady
operation at 20 Mbps (right graph)." L201: "It's not necessary to probe
for less bandwidth since that is handled automatically by the BtlBw max
filter: new measurements reflect the drop, so BtlBw will correct itself
as soon as the last old measurement times out of the filter." L54: the
filter's window "is typically six to ten RTTs" (Linux: 10 rounds).
Claims: claims.toml (the rise within 1 + log_5/4(2) gain cycles, the
estimate back within the filter's ten rounds; the queue's drain is shown).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from ... import units
from .. import compare, traces
from ..common import key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

UP_S = 20.0
DOWN_S = 40.0
DURATION_S = 60.0
HIGH_MBPS = 2 * paper.LAB_RATE_MBPS
INTERVAL = "10ms"
COLUMNS = ("goodput_mbps", *paper.ROUNDS_COLUMNS, "cc_mode", "pacing_gain", "bw_estimate_mbps")
#: The metric's "reaches the new rate" (claims.toml): the BtlBw estimate
#: comes within 5% of what it holds in the last 10 s at 20 Mbit/s (the
#: same run's steady value); "falls back" likewise.
REACH = 0.95
PROBE_GAIN = 1.25


#: Our BBR, and the paper's kernel's (ablation: the drain after the drop
#: without the 1% pacing margin).
VARIANTS = (paper.BBR, paper.BBR_49)


def runs(quick: bool) -> list[RunSpec]:
    schedule = [{"at": f"{UP_S:g}s", "rate": f"{HIGH_MBPS}Mbit"}, {"at": f"{DOWN_S:g}s",
                                                                   "rate": f"{paper.LAB_RATE_MBPS}Mbit"}]
    return [RunSpec(key(v.name, seed),
                    paper.lab(v, seed=seed, duration=DURATION_S, interval=INTERVAL, schedule=schedule),
                    COLUMNS, ("queue_bytes",))
            for v in VARIANTS for seed in paper.seeds(quick)]


def step_up(run: Outcome) -> dict[str, float]:
    t = run.t_s
    bw = run.flow["bw_estimate_mbps"][0]
    high = traces.mean_over(t, bw, DOWN_S - 10, DOWN_S)
    reach = traces.time_to_reach(t, bw, REACH * high, UP_S)
    cycle = paper.cycle_s(run, 0, UP_S - 10, UP_S)
    return {"high_mbps": high, "low_mbps": traces.mean_over(t, bw, UP_S - 10, UP_S), "reach_s": reach,
            "cycle_s": cycle, "reach_cycles": reach / cycle,
            "probes": float(len(paper.gain_starts(run, 0, PROBE_GAIN, UP_S, UP_S + reach + 1e-9)))}


def step_down(run: Outcome) -> dict[str, float]:
    """After the drop: when the BtlBw estimate falls back (the filter
    forgets the 20 Mbit/s samples) and when the queue is gone (its
    per-cycle minimum back at its level before the drop), in seconds and
    in rounds."""
    t = run.t_s
    bw = run.flow["bw_estimate_mbps"][0]
    rtt = paper.rtt(run)
    low = traces.mean_over(t, bw, UP_S - 10, UP_S)
    after = t > DOWN_S
    fell = np.nonzero(after & (bw <= low / REACH))[0]
    fell_s = float(t[fell[0]] - DOWN_S) if len(fell) else math.nan
    cycle = paper.cycle_s(run, 0, UP_S - 10, UP_S)
    qmin = paper.cycle_min_queue(run, cycle)
    # The queue left per cycle at this rate before the step up; it is gone again at the first cycle, once
    # the estimate has fallen back (a whole cycle later), whose minimum is no higher.
    before = float(np.max(qmin[traces.window(t, UP_S - 10, UP_S)]))
    start = DOWN_S + (fell_s if np.isfinite(fell_s) else 0.0)
    back = np.nonzero((t > start + cycle) & (qmin <= before))[0]
    gone_s = float(t[back[0]] - DOWN_S) if len(back) else math.nan
    peak = float(run.link["queue_bytes"][after].max())
    rtprop = float(np.nanmin(rtt[traces.window(t, DOWN_S - 10, DOWN_S)]))
    probe_rtt_starts = [a for a, _ in traces.episodes(t, run.flow["cc_mode"][0] == traces.PROBE_RTT)]
    fell_rounds, fell_latest = paper.rounds_both(run, DOWN_S, DOWN_S + fell_s)
    gone_rounds, gone_latest = paper.rounds_both(run, DOWN_S, DOWN_S + gone_s)
    return {"fell_s": fell_s, "fell_rounds": fell_rounds, "fell_rounds_latest": fell_latest,
            "gone_s": gone_s, "gone_rounds": gone_rounds, "gone_rounds_latest": gone_latest,
            "peak_queue_pkts": peak / units.PACKET_WIRE_BYTES, "before_pkts": before / units.PACKET_WIRE_BYTES,
            "cycle_s": cycle, "rtprop_ms": rtprop,
            "probe_rtt": float(any(DOWN_S < a <= DOWN_S + gone_s for a in probe_rtt_starts)),
            "probe_rtt_starts": probe_rtt_starts,
            "queue_at_fell_pkts": float(run.link["queue_bytes"][min(fell[0], len(t) - 1)]) / units.PACKET_WIRE_BYTES
            if len(fell) else math.nan,
            # What the 2-BDP cwnd cap leaves once the estimate has fallen: the queue's minimum over the next cycle.
            "queue_capped_pkts": float(np.min(run.link["queue_bytes"][traces.window(t, start, start + cycle)]))
            / units.PACKET_WIRE_BYTES}


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds)
    ups = [step_up(r) for r in per]
    downs = [step_down(r) for r in per]
    downs_49 = [step_down(r) for r in runs_of(outcomes, paper.BBR_49.name, seeds)]
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One BBR flow, {paper.LAB_RTT_MS} ms; the bottleneck runs at {paper.LAB_RATE_MBPS} Mbit/s, {HIGH_MBPS} "
        f"Mbit/s from {UP_S:g} s and {paper.LAB_RATE_MBPS} Mbit/s again from {DOWN_S:g} s (a `[[bottleneck.schedule]]`; "
        f"the buffer is {paper.BUFFER_BDP:g} BDP of the 10 Mbit/s link). {DURATION_S:g} s, telemetry every {INTERVAL}.",
        f"The estimate has \"reached\" the new rate when it comes within {100 * (1 - REACH):.0f}% of its own mean "
        f"over {DOWN_S - 10:g}-{DOWN_S:g} s; cycles are the run's own (the median gap between 5/4 phases before the "
        "step). The bound for \"exponentially fast\" is derived from the paper's gains in claims.toml.",
        f"After the drop, the BtlBw estimate has corrected itself when it is within {100 * (1 - REACH):.0f}% of its "
        f"mean before {UP_S:g} s; the queue is gone when its minimum over a gain cycle (what is left once a 3/4 phase "
        f"has drained the 5/4 phase's queue) is back at its largest value of the 10 s before the drop. Times are "
        f"counted from the drop and converted to rounds (the sum of dt / RTT over the flow's smoothed RTT, which "
        "both engines report; over the latest RTT sample, the simulator's, as each row's alternative).",
    ]
    reach_cycles = [u["reach_cycles"] for u in ups]
    fell_rounds = [d["fell_rounds"] for d in downs]
    gone_rounds = [d["gone_rounds"] for d in downs]
    for name, vals in (("up.reach_s", [u["reach_s"] for u in ups]), ("up.reach_cycles", reach_cycles),
                       ("up.bw_high_mbps", [u["high_mbps"] for u in ups]),
                       ("down.bw_fell_s", [d["fell_s"] for d in downs]), ("down.bw_fell_rounds", fell_rounds),
                       ("down.queue_gone_s", [d["gone_s"] for d in downs]), ("down.queue_gone_rounds", gone_rounds),
                       ("down.peak_queue_pkts", [d["peak_queue_pkts"] for d in downs])):
        rep.numbers[f"bbr.{name}"] = mean(vals)
    rep.measured["fig3.up-exponential"] = Measured(reach_cycles, note=_up_reason(ups))
    latest = {key: {paper.LATEST_SAMPLE: Measured([d[f"{key}_latest"] for d in downs])}
              for key in ("fell_rounds", "gone_rounds")}
    rep.measured["fig3.down-filter"] = Measured(fell_rounds, alternatives=latest["fell_rounds"],
                                                note=_fell_reason(downs))
    rep.measured["fig3.down-queue"] = Measured(gone_rounds, alternatives=latest["gone_rounds"],
                                               note=_gone_reason(downs, downs_49))
    rep.comparisons += [
        compare.ours_only(f"{paper.LABEL[paper.BBR_49.name]}: rounds until the queue is gone (ablation)",
                          f"{mean([d['gone_rounds'] for d in downs_49]):.1f} rounds "
                          f"({mean([d['gone_s'] for d in downs_49]):.1f} s)",
                          compare.spread([d["gone_rounds"] for d in downs_49], ".1f"),
                          note="BBR without the ACK-aggregation allowance and the 1% pacing margin, as the paper's "
                               "Linux 4.9 ran it; NaN: not gone by the end of the run."),
        compare.ours_only(f"BtlBw estimate at 10 / 20 Mbit/s (link payload rate "
                          f"{paper.payload_mbps(paper.LAB_RATE_MBPS):.2f} / {paper.payload_mbps(HIGH_MBPS):.2f})",
                          f"{mean([u['low_mbps'] for u in ups]):.2f} / {mean([u['high_mbps'] for u in ups]):.2f} "
                          "Mbit/s"),
    ]
    rows = [[str(s), f"{u['reach_s']:.2f}", f"{u['reach_cycles']:.2f}", f"{d['fell_s']:.2f}", f"{d['fell_rounds']:.1f}",
             f"{d['gone_s']:.2f}", f"{d['gone_rounds']:.1f}", f"{d['peak_queue_pkts']:.0f}"]
            for s, u, d in zip(seeds, ups, downs)]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "up: reached (s)", "up: cycles", "down: BtlBw fell (s)", "down: rounds", "down: queue gone (s)",
         "down: rounds", "down: peak queue (packets)"], rows)))

    if fig_dir is not None:
        run = per[0]
        t = run.t_s
        rate_line = np.where(t <= UP_S, paper.payload_mbps(paper.LAB_RATE_MBPS),
                             np.where(t <= DOWN_S, paper.payload_mbps(HIGH_MBPS), paper.payload_mbps(paper.LAB_RATE_MBPS)))
        panels = [
            Panel("delivery rate (Mbit/s)", [
                Line("delivery rate (40 ms mean)", traces.trailing_mean(run.flow["goodput_mbps"][0], 4),
                     style={"color": "tab:red", "linewidth": 0.8}),
                Line("BtlBw max filter", run.flow["bw_estimate_mbps"][0],
                     style={"color": "gray", "linewidth": 3, "alpha": 0.6}),
                Line("link payload rate", rate_line, style={"color": "black", "linestyle": ":"})]),
            Panel("RTT (ms)", [Line("RTT sample", paper.rtt(run), style={"color": "tab:blue"})], ymin=None),
            Panel("queue (packets)", [Line("bottleneck queue", run.link["queue_bytes"] / units.PACKET_WIRE_BYTES,
                                           style={"color": "tab:green"})], integer=True),
        ]
        for name, lo, hi, mark, label in (("fig3-up.png", UP_S - 1, UP_S + 3, UP_S, "10 -> 20 Mbit/s"),
                                          ("fig3-down.png", DOWN_S - 1, DOWN_S + 8, DOWN_S, "20 -> 10 Mbit/s")):
            time_panels(fig_dir / name, f"One BBR flow, {paper.LAB_RTT_MS} ms: the bottleneck steps {label} at "
                                        f"{mark:g} s (seed {seeds[0]})", t, panels, xlim=(lo, hi),
                        marks=[(mark, label)], height=2.2)
        time_panels(fig_dir / "fig3.png", f"One BBR flow, {paper.LAB_RTT_MS} ms: 10 -> 20 -> 10 Mbit/s "
                                          f"(seed {seeds[0]})", t, panels, marks=[(UP_S, "20 Mbit/s"),
                                                                                  (DOWN_S, "10 Mbit/s")], height=2.2)
        rep.figures += [Figure("fig3-up.png", "the paper's Fig. 3, left: the rate doubles at 20 s"),
                        Figure("fig3-down.png", "the paper's Fig. 3, right: the rate halves at 40 s"),
                        Figure("fig3.png", "the whole run")]
    return paper.finish(rep, quick)


def _up_reason(ups: list[dict[str, float]]) -> str:
    return (f"the estimate reaches {REACH * mean([u['high_mbps'] for u in ups]):.2f} Mbit/s "
            f"{mean([u['reach_s'] for u in ups]):.2f} s after the step ({mean([u['probes'] for u in ups]):.1f} 5/4 "
            f"phases begin in between; a gain cycle is {1e3 * mean([u['cycle_s'] for u in ups]):.0f} ms).")


def _fell_reason(downs: list[dict[str, float]]) -> str:
    latest = [d["fell_rounds_latest"] for d in downs if math.isfinite(d["fell_rounds_latest"])]
    within = sum(any(DOWN_S < a <= DOWN_S + d["fell_s"] for a in d["probe_rtt_starts"]) for d in downs)
    over_latest = (f"; {mean(latest):.1f} over the latest RTT sample, which counts the 200 ms of a ProbeRTT (in "
                   f"{within} of {len(downs)} seeds inside that time) as rounds of the empty path's RTT, where "
                   "srtt still carries the queue's" if latest else "")
    return (f"the estimate falls back {mean([d['fell_s'] for d in downs]):.2f} s after the drop "
            f"({mean([d['fell_rounds'] for d in downs]):.1f} rounds of the queue-inflated smoothed RTT{over_latest}); "
            f"the queue then holds {mean([d['queue_at_fell_pkts'] for d in downs]):.0f} packets.")


def _gone_reason(downs: list[dict[str, float]], downs_49: list[dict[str, float]]) -> str:
    margin_pps = 0.01 * paper.payload_mbps(paper.LAB_RATE_MBPS) * 1e6 / 8 / units.MSS_BYTES
    pr = sum(d["probe_rtt"] for d in downs)
    text = (f"the queue peaks at {mean([d['peak_queue_pkts'] for d in downs]):.0f} packets after the drop and is back "
            f"at its level at 10 Mbit/s before the step up ({mean([d['before_pkts'] for d in downs]):.0f} packets per "
            f"cycle) {mean([d['gone_s'] for d in downs]):.1f} s after it. When the filter forgets the old rate "
            f"({mean([d['fell_s'] for d in downs]):.2f} s), {mean([d['queue_at_fell_pkts'] for d in downs]):.0f} "
            f"packets are queued; the cwnd cap (2 x the new BDP) cuts that to "
            f"{mean([d['queue_capped_pkts'] for d in downs]):.0f} within a cycle, and since ProbeBW's 5/4 and 3/4 "
            "phases add and remove the same 1/4 BDP, the rest drains only at Linux's 1% pacing margin (about "
            f"{margin_pps:.0f} packets per second at 10 Mbit/s). Without the margin, as in the paper's Linux 4.9, the "
            f"queue is gone after {mean([d['gone_s'] for d in downs_49]):.1f} s (ablation row)")
    if pr:
        text += (f"; in {pr:.0f} of {len(downs)} seeds a ProbeRTT (due every 10 s since the last RTprop sample) falls "
                 "inside the drain, empties the queue for 200 ms, and the old estimate refills it")
    return text + "."


EXPERIMENT = Experiment(
    name="bbr-fig3",
    figure="Fig. 3",
    summary="10 Mbit/s, 40 ms BBR flow; the bottleneck doubles at 20 s and halves at 40 s: BtlBw filter, RTT, queue",
    runs=runs,
    analyse=analyse,
)
