"""bbr-fig2: 700 ms of one BBR flow's steady state on a 10 Mbit/s, 40 ms
path: RTT, in-flight and delivery rate with the BtlBw filter, and the
ProbeBW gain phases time-aligned with the data they influenced.

Paper (L105): "figure 2 ... illustrates the RTT (blue), inflight (green)
and delivery rate (red) detail from 700 ms of a 10-Mbps, 40-ms flow. The
thick gray line above the delivery-rate data is the state of the BtlBw max
filter. The triangular structures result from BBR cycling pacing_gain to
determine if BtlBw has increased. The gain used for each part of the cycle
is shown time-aligned with the data it influenced. The gain is applied an
RTT earlier, when the data is sent." L109: "BBR minimizes delay by
spending most of its time with one BDP in flight, paced at the BtlBw
estimate. ... BBR periodically spends an RTprop interval at a pacing_gain
> 1, which increases the sending rate and inflight. If BtlBw hasn't
changed, then a queue is created at the bottleneck, increasing RTT, which
keeps deliveryRate constant. (This queue is removed by sending at a
compensating pacing_gain < 1 for the next RTprop.)" L207: "Each phase
normally lasts for the estimated RTprop." The claims (the RTT rise, the
constant delivery rate, the queue removed, one BDP in flight, the phase
length) are in claims.toml; this module measures them per seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .. import compare, traces
from ..common import key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

#: Up to the first ProbeRTT (10 s after the first RTprop sample).
DURATION_S = 10.0
#: Steady ProbeBW: after Startup, Drain and the first gain cycle, before ProbeRTT.
STEADY = (1.5, 9.5)
#: Fine enough to resolve the 40 ms phases.
INTERVAL = "1ms"
COLUMNS = ("goodput_mbps", "inflight", "rtt_ms", "cc_mode", "pacing_gain", "bw_estimate_mbps")
#: The figure's span (L105: "700 ms").
SPAN_S = 0.7
#: The figure starts this long before a 5/4 phase (seed 1, after 5 s).
LEAD_S = 0.1
PROBE_GAIN = 1.25
DRAIN_GAIN = 0.75
#: Delivery rate as the sender samples it: data delivered over about one
#: round trip; the receiver's goodput averaged over the base RTT.
RATE_WINDOW_MS = paper.LAB_RTT_MS


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed), paper.lab(paper.BBR, seed=seed, duration=DURATION_S, interval=INTERVAL),
                    COLUMNS)
            for seed in paper.seeds(quick)]


def probes(run: Outcome) -> list[dict[str, float]]:
    """Each 5/4 phase in the steady window, with what the RTT and the
    delivery rate did one RTT later, when its data was acknowledged:
    ``pre`` the RTT just before its data arrived, ``peak`` the highest RTT
    while it did, ``post`` the RTT once the following 3/4 phase's data had
    arrived (ms); ``rate`` the delivery rate while the 5/4 phase's data
    arrived over that while the next cruising phases' data did;
    ``down_ms`` the length of the 3/4 phase; ``inflight_end`` its
    in-flight when it ended (packets)."""
    t = run.t_s
    rtt = paper.rtt(run)
    good = run.flow["goodput_mbps"][0]
    infl = run.flow["inflight"][0]
    ups = traces.episodes(t, (np.abs(run.flow["pacing_gain"][0] - PROBE_GAIN) < 1e-3)
                          & (run.flow["cc_mode"][0] == traces.PROBE_BW))
    downs = traces.episodes(t, (np.abs(run.flow["pacing_gain"][0] - DRAIN_GAIN) < 1e-3)
                            & (run.flow["cc_mode"][0] == traces.PROBE_BW))
    out = []
    for i, (a, b) in enumerate(ups):
        after = [d for d in downs if d[0] >= b - 1e-6]
        if a < STEADY[0] or i + 1 >= len(ups) or not after or ups[i + 1][0] > STEADY[1]:
            continue
        c, d = after[0]
        lag = float(np.nanmin(rtt[traces.window(t, a - 0.01, a)])) / 1e3
        nxt = ups[i + 1][0]
        pre = float(np.nanmin(rtt[traces.window(t, a, a + lag)]))
        peak = float(np.nanmax(rtt[traces.window(t, a + lag, b + lag)]))
        post = float(np.nanmin(rtt[traces.window(t, d + lag - 0.005, d + lag + 0.005)]))
        probe_rate = traces.mean_over(t, good, a + lag, b + lag)
        cruise_rate = traces.mean_over(t, good, d + lag, nxt + lag)
        end = min(int(np.searchsorted(t, d)), len(t) - 1)
        out.append({"start": a, "pre": pre, "peak": peak, "post": post, "rate": probe_rate / cruise_rate,
                    "down_ms": 1e3 * (d - c), "inflight_end": float(infl[end])})
    return out


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds)
    bdp = paper.bdp_packets(paper.LAB_RATE_MBPS, paper.LAB_RTT_MS)
    ser = paper.serialisation_ms(paper.LAB_RATE_MBPS)
    link = paper.payload_mbps(paper.LAB_RATE_MBPS)
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"One BBR flow, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms, {DURATION_S:g} s, telemetry every "
        f"{INTERVAL}. Every 5/4 phase in steady ProbeBW ({STEADY[0]:g}-{STEADY[1]:g} s: after Startup, Drain and the "
        "first gain cycle, before the first ProbeRTT at 10 s) is measured one RTT after it is sent, when its data is "
        "acknowledged (L105: \"The gain is applied an RTT earlier\"): the RTT just before its data arrives, the "
        "highest RTT while it does, and the RTT once the following 3/4 phase's data has arrived. Delivery rate: the "
        f"receiver's goodput averaged over {RATE_WINDOW_MS} ms (a sender's delivery-rate sample spans about one "
        "round trip); the probe's over the following cruising phases'."
    )
    per_probe = [probes(r) for r in per]
    rise = [mean([p["peak"] - p["pre"] for p in ps]) for ps in per_probe]
    left = [mean([p["post"] - p["pre"] for p in ps]) for ps in per_probe]
    removed = [1 - lf / rs if rs > 0 else math.nan for lf, rs in zip(left, rise)]
    rate = [mean([p["rate"] for p in ps]) for ps in per_probe]
    rate_worst = [max(abs(p["rate"] - 1) for p in ps) for ps in per_probe]
    down_ms = [mean([p["down_ms"] for p in ps]) for ps in per_probe]
    infl_end = [mean([p["inflight_end"] for p in ps]) for ps in per_probe]
    n_probes = [len(ps) for ps in per_probe]
    steady = [traces.window(r.t_s, *STEADY) for r in per]
    infl = [float(np.median(r.flow["inflight"][0][s])) / bdp for r, s in zip(per, steady)]
    bw = [float(np.median(r.flow["bw_estimate_mbps"][0][s])) for r, s in zip(per, steady)]
    # BBR's RTprop: the lowest RTT sample since the start (its 10-s filter has not expired before STEADY[1]).
    rtprop = [float(np.nanmin(paper.rtt(r)[r.t_s <= STEADY[1]])) for r in per]
    cycle = [paper.cycle_s(r, 0, *STEADY) for r in per]
    phase_ratio = [1e3 * c / 8 / rp for c, rp in zip(cycle, rtprop)]
    # The pre-probe RTT of consecutive probes: is the queue gone before the next one?
    pre_drift = [max(abs(p["pre"] - ps[0]["pre"]) for p in ps) for ps in per_probe]
    for name, vals in (("probe_rtt_rise_ms", rise), ("probe_rtt_left_ms", left), ("probe_queue_removed", removed),
                       ("probe_rate_ratio", rate), ("inflight_bdp", infl), ("bw_estimate_mbps", bw),
                       ("rtprop_ms", rtprop), ("cycle_s", cycle), ("drain_phase_ms", down_ms),
                       ("probes", n_probes)):
        rep.numbers[f"bbr.{name}"] = mean(vals)
    expected_rise = (PROBE_GAIN - 1) * mean(rtprop)
    rep.measured["fig2.rtt-rise"] = Measured(
        rise, note=f"{mean(rise) / mean(rtprop):.2f} RTprop over {min(n_probes)}-{max(n_probes)} probes per seed; a "
                   f"5/4 gain for a whole RTprop would queue 1/4 BDP, {expected_rise:.1f} ms (L207), and Linux ends "
                   "the 5/4 phase once in-flight reaches 5/4 of the BDP estimate.")
    rep.measured["fig2.rate-constant"] = Measured(rate, note=f"the probe farthest from its cruising rate is "
                                                             f"{max(rate_worst):+.3f} off.")
    rep.measured["fig2.queue-removed"] = Measured(
        left, note=f"{mean(left):.1f} of {mean(rise):.1f} ms ({100 * mean(removed):.0f}% removed); "
                   + _left_reason(left, down_ms, rtprop, infl_end, bdp, ser, pre_drift))
    rep.measured["fig2.one-bdp"] = Measured(
        infl, note=f"{mean(infl) * bdp:.0f} packets (1 BDP = {bdp:.1f}): the excess over 1 BDP is the standing queue "
                   f"(bbr-fig4-5) plus the packets in the receiver's delayed ACKs; the 2-BDP cwnd cap is "
                   f"{2 * bdp:.0f} packets.")
    rep.measured["fig2.phase-length"] = Measured(
        phase_ratio, note=f"{1e3 * mean(cycle) / 8:.1f} / {mean(rtprop):.1f} ms; Linux ends the 5/4 phase only once "
                          "in-flight reaches 5/4 BDP and the 3/4 phase as soon as it falls to the BDP estimate.")
    rep.comparisons.append(
        compare.ours_only("BtlBw filter (median) / link payload rate", f"{mean(bw):.2f} / {link:.2f} Mbit/s",
                          compare.spread(bw, ".2f"),
                          note="L105: \"The thick gray line above the delivery-rate data is the state of the BtlBw "
                               "max filter\" (no number)."))

    rows = [[str(s), str(n), f"{r:.1f}", f"{lf:.1f}", f"{q:.3f}", f"{i:.2f}", f"{1e3 * c:.0f}"]
            for s, n, r, lf, q, i, c in zip(seeds, n_probes, rise, left, rate, infl, cycle)]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "5/4 phases", "RTT rise (ms)", "left after 3/4 (ms)", "delivery rate probe / cruise",
         "median in-flight (BDP)", "gain cycle (ms)"], rows)))

    if fig_dir is not None:
        run = per[0]
        start = next((a for a in paper.gain_starts(run, 0, PROBE_GAIN) if a >= 5.0), STEADY[0]) - LEAD_S
        lo, hi = start, start + SPAN_S
        t = run.t_s
        r = paper.rtt(run)
        lag = float(np.nanmin(r[traces.window(t, lo, hi)])) / 1e3
        rate_ms = traces.trailing_mean(run.flow["goodput_mbps"][0], int(RATE_WINDOW_MS))
        gain = run.flow["pacing_gain"][0]
        time_panels(
            fig_dir / "fig2.png",
            f"One BBR flow, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms: {1e3 * SPAN_S:.0f} ms of steady "
            f"ProbeBW (seed {seeds[0]})", t,
            [Panel("RTT (ms)", [Line("RTT sample", r, style={"color": "tab:blue"}),
                                Line(f"base RTT {paper.LAB_RTT_MS} ms", np.full_like(t, float(paper.LAB_RTT_MS)),
                                     style={"color": "dimgray", "linestyle": ":"})], ymin=None),
             Panel("in-flight (packets)", [Line("in-flight", run.flow["inflight"][0], style={"color": "tab:green"}),
                                           Line("1 BDP", np.full_like(t, bdp),
                                                style={"color": "dimgray", "linestyle": ":"})], ymin=None,
                   integer=True),
             Panel("delivery rate (Mbit/s)", [
                 Line(f"delivery rate ({RATE_WINDOW_MS} ms mean)", rate_ms, style={"color": "tab:red"}),
                 Line("BtlBw max filter", run.flow["bw_estimate_mbps"][0],
                      style={"color": "gray", "linewidth": 4, "alpha": 0.5})], ymin=None),
             Panel("pacing gain", [Line("as sent", gain, style={"color": "black", "linestyle": "--", "linewidth": 0.8}),
                                   Line(f"as its data arrives (+{1e3 * lag:.0f} ms, one RTT)", gain, t=t + lag,
                                        style={"color": "tab:purple"})], step=True, ymin=0.5, ymax=1.4)],
            xlim=(lo, hi), height=2.0,
        )
        rep.figures.append(Figure("fig2.png", "the paper's Fig. 2: RTT, in-flight, delivery rate with the BtlBw "
                                              "filter, and the gain cycle shifted by one RTT onto the data it "
                                              "influenced"))
    return paper.finish(rep, quick)


def _left_reason(left: list[float], down_ms: list[float], rtprop: list[float], infl_end: list[float], bdp: float,
                 ser: float, drift: list[float]) -> str:
    return (f"the 3/4 phase lasts {mean(down_ms):.0f} ms on average, not a full RTprop ({mean(rtprop):.1f} ms): "
            f"Linux ends it as soon as in-flight falls to the BDP estimate plus its quantization allowance (in-flight "
            f"{mean(infl_end):.1f} packets when it ends; 1 BDP = {bdp:.1f}), so {mean(left):.1f} ms "
            f"({mean(left) / ser:.1f} packets) of the probe's queue is left to the cruising phases, which drain it "
            f"at the 1% pacing margin before the next probe: the RTT before consecutive probes varies by at most "
            f"{max(drift):.1f} ms.")


EXPERIMENT = Experiment(
    name="bbr-fig2",
    figure="Fig. 2",
    summary="700 ms of a 10 Mbit/s, 40 ms BBR flow: RTT, in-flight, delivery rate with the BtlBw filter, gain cycle",
    runs=runs,
    analyse=analyse,
)
