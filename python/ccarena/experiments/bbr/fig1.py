"""bbr-fig1: RTT and delivery rate against the data in flight, measured
on Figs. 2-5's path (10 Mbit/s, 40 ms, a 1-BDP buffer): the RTprop and
BtlBw constraints, the BDP where they meet, the queue beyond it, the drop
where the buffer is full.

Paper (L26): "Figure 1 shows RTT and delivery rate variation with the
amount of data in flight ... Transitions between constraints result in
three different regions (app-limited, bandwidth-limited, and
buffer-limited) with qualitatively different behavior." L30: "Constraint
lines intersect at inflight = BtlBw x RTprop, a.k.a. the pipe's BDP ...
the inflight - BDP excess creates a queue at the bottleneck, which
results in the linear dependence of RTT on inflight data shown in the
upper graph. Packets are dropped when the excess exceeds the buffer
capacity." L32: "Loss-based congestion control operates at the right edge
of the bandwidth-limited region". L34: "The left edge of the
bandwidth-limited region is a better operating point than the right ...
Kleinrock showed this operating point was optimal".

The figure is a model; to measure it, one sender has to sweep the data in
flight slowly across all three regions. A CUBIC flow that leaves slow
start at once (HyStart off, an initial ssthresh of 2 packets) does: its
window grows from the initial 10 packets by about one packet per round
trip at first, crossing 1 BDP after ~1.2 s and reaching BDP + buffer, its
first loss, after ~2 s; after that it is CUBIC's steady state (L32). Each
RTT and delivery-rate sample is set against the data in flight when its
packet was sent (the telemetry's in-flight one RTT earlier), as the model
relates them. Claims: claims.toml; this module measures them per seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from ... import units
from .. import traces
from ..common import key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec, Variant
from ..verdict import Measured

#: The probe: CUBIC that leaves slow start at once and then grows its
#: window slowly across the in-flight axis (see the module's docstring).
PROBE = Variant("cubic-ramp", "cubic", {"hystart": 0, "initial_ssthresh": 2}, "CUBIC, no slow start")
#: The paper draws a buffer without a size; 1 BDP puts the buffer-limited
#: edge at 2 BDP.
BUFFER_BDP = 1.0
#: The ramp to the first loss takes ~2 s; the rest is CUBIC's steady state.
DURATION_S = 20.0
#: CUBIC's steady state (L32): after its first loss and recovery.
STEADY_FROM_S = 5.0
INTERVAL = "10ms"
COLUMNS = ("inflight", "rtt_ms", "delivery_rate_mbps", "goodput_mbps")
#: Breakpoints tried by the two-line fits, in BDPs (a grid finer than one
#: packet of this path's 34-packet BDP).
KNEE_GRID = np.arange(0.3, 1.9, 0.001)
#: The other reasonable reading of "RTprop" in "inflight = BtlBw x RTprop".
FLOOR = "RTprop as the RTT the flow sees below the BDP (the fitted RTprop line)"


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(PROBE.name, seed),
                    paper.scenario([paper.flow(PROBE, paper.LAB_RTT_MS)], seed=seed, duration=DURATION_S,
                                   rate=f"{paper.LAB_RATE_MBPS}Mbit", buffer=paper.buffer(BUFFER_BDP),
                                   interval=INTERVAL),
                    COLUMNS, ("drops",))
            for seed in paper.seeds(quick)]


def _floor_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """y = r0 below the knee k, r0 + s (x - k) above it (least squares over
    KNEE_GRID): (k, r0, s). The RTT graph's two constraint lines."""
    best = (math.inf, math.nan, math.nan, math.nan)
    for k in KNEE_GRID:
        a = np.column_stack([np.ones_like(x), np.maximum(0.0, x - k)])
        coef = np.linalg.lstsq(a, y, rcond=None)[0]
        err = float(np.sum((a @ coef - y) ** 2))
        if err < best[0]:
            best = (err, float(k), float(coef[0]), float(coef[1]))
    return best[1:]


def _ceiling_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """y = b x / k below the knee k, b above it (least squares over
    KNEE_GRID): (k, b). The delivery-rate graph's two constraint lines."""
    best = (math.inf, math.nan, math.nan)
    for k in KNEE_GRID:
        z = np.minimum(x, k) / k
        b = float(z @ y / (z @ z))
        err = float(np.sum((b * z - y) ** 2))
        if err < best[0]:
            best = (err, float(k), b)
    return best[1:]


def measure(run: Outcome) -> dict[str, float | np.ndarray]:
    """One run's Fig. 1: the samples (in flight when sent, RTT, delivery
    rate) of the ramp up to the first drop, the constraints fitted to
    them, and CUBIC's steady state after it."""
    t = run.t_s
    rtt = traces.rtt(run)
    rate = np.asarray(run.flow["delivery_rate_mbps"][0], dtype=float)
    inflight = np.asarray(run.flow["inflight"][0], dtype=float)
    drops = np.nonzero(np.asarray(run.link["drops"]) > 0)[0]
    first = int(drops[0]) if len(drops) else len(t)
    sent = np.interp(t - np.nan_to_num(rtt) / 1e3, t, inflight)
    ok = np.isfinite(rtt) & np.isfinite(rate) & (rate > 0)
    ramp = ok & (np.arange(len(t)) < first) & (t - np.nan_to_num(rtt) / 1e3 >= t[0])
    rtprop = float(np.nanmin(rtt))
    # BtlBw: the delivery-rate graph's ceiling, fitted on the link's BDP
    # first (its payload rate x RTprop), then the unit of the x axis.
    bdp_of = lambda mbps: mbps * 1e6 / 8 / units.MSS_BYTES * rtprop / 1e3  # noqa: E731  packets
    link_bdp = bdp_of(paper.payload_mbps(paper.LAB_RATE_MBPS))
    k_rate, btlbw = _ceiling_fit(sent[ramp] / link_bdp, rate[ramp])
    bdp = bdp_of(btlbw)
    x = sent / bdp
    k_rtt, r0, slope = _floor_fit(x[ramp], rtt[ramp])
    power = rate / rtt
    best = int(np.argmax(np.where(ramp, power, -np.inf)))
    buffer_pkts = BUFFER_BDP * units.bdp_bytes(paper.LAB_RATE_MBPS * 1_000_000, paper.LAB_RTT_MS * 1_000_000) \
        / units.PACKET_WIRE_BYTES
    steady = t >= STEADY_FROM_S
    floor_bdp = bdp * r0 / rtprop
    return {
        "rtprop_ms": rtprop, "btlbw_mbps": btlbw, "bdp_pkts": bdp, "floor_ms": r0,
        "knee": k_rtt, "knee_floor": k_rtt * bdp / floor_bdp, "knee_rate": k_rate * link_bdp / bdp,
        # ms per BDP over RTprop: 1 when one more BDP in flight adds one RTprop of queue.
        "slope": slope / rtprop,
        "drop_excess": (inflight[first] - bdp) / buffer_pkts if first < len(t) else math.nan,
        "first_drop_s": float(t[first]) if first < len(t) else math.nan,
        "optimal": float(x[best]), "optimal_floor": float(sent[best] / floor_bdp),
        "app_rtt": float(np.mean(rtt[ramp & (x < 1)]) / rtprop),
        "band_rtt": float(np.mean(rtt[ramp & (x >= 1)]) / rtprop),
        "band_rate": float(np.mean(rate[ramp & (x >= 1)]) / btlbw),
        "steady_position": float((np.median(inflight[steady]) - bdp) / buffer_pkts),
        "steady_rtt": float(np.nanmean(rtt[steady]) / rtprop),
        "steady_goodput": float(np.mean(run.flow["goodput_mbps"][0][steady]) / btlbw),
        "steady_drops_per_s": float(np.sum(run.link["drops"][steady]) / (t[-1] - STEADY_FROM_S)),
        "buffer_bdp": buffer_pkts / bdp,
        "x": x, "rtt": rtt, "rate": rate, "ramp": ramp, "steady": steady & ok,
    }


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    per = runs_of(outcomes, PROBE.name, seeds)
    m = [measure(r) for r in per]

    def each(name: str) -> list[float]:
        return [float(x[name]) for x in m]

    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One flow on Figs. 2-5's path, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms, a {BUFFER_BDP:g}-BDP "
        f"buffer (Fig. 1 draws one without a size), {DURATION_S:g} s, telemetry every {INTERVAL}. The sender is CUBIC "
        "with HyStart off and an initial ssthresh of 2 packets: it leaves slow start at once and its window grows "
        "slowly enough to sweep the data in flight across the three regions up to its first loss (~2 s); each RTT "
        "and delivery-rate sample is set against the data in flight when its packet was sent (the in-flight one "
        f"RTT earlier). From {STEADY_FROM_S:g} s on it is CUBIC's steady state (L32).",
        "The constraints as the paper defines them (L48-L52): RTprop, the smallest RTT sample; BtlBw, the delivery "
        "rate's ceiling (a two-line fit, rate = BtlBw x in-flight / knee below the knee and BtlBw above, to the "
        "samples up to the first drop: the largest single sample overshoots it by ~1%); the BDP, BtlBw x RTprop, "
        "is the x axis' unit. The RTT graph's lines are fitted the same way (RTT = floor below the knee, floor + "
        "slope x (in-flight - knee) above). Kleinrock's power, delivery rate / RTT, per sample.",
    ]
    rep.numbers.update({f"bbr.fig1.{k}": mean(each(k)) for k in (
        "rtprop_ms", "btlbw_mbps", "bdp_pkts", "floor_ms", "knee", "knee_floor", "knee_rate", "slope", "drop_excess",
        "optimal", "optimal_floor", "steady_position")})
    eta = mean(each("floor_ms")) - mean(each("rtprop_ms"))
    why_knee = (f"RTprop (the smallest RTT) is {mean(each('rtprop_ms')):.2f} ms, but below the BDP the flow's RTT "
                f"stays {eta:.1f} ms above it ({mean(each('floor_ms')):.2f} ms: delayed ACKs and CUBIC's unpaced "
                "pairs of packets, the noise L48 calls eta): the RTT line meets that floor, not RTprop, "
                f"{mean(each('knee_floor')):.3f} BtlBw x floor; the delivery-rate graph's lines meet at "
                f"{mean(each('knee_rate')):.3f} BDP.")
    rep.measured["fig1.regions"] = Measured(
        members={"app-limited (below 1 BDP)": each("app_rtt"), "bandwidth-limited (1 BDP to the first drop)":
                 each("band_rtt")},
        note=f"the first drop at {mean(each('first_drop_s')):.2f} s, when the excess reaches the buffer "
             "(buffer-limited).")
    rep.measured["fig1.two-regimes"] = Measured(
        members={"below 1 BDP: RTT / RTprop": each("app_rtt"), "above: delivery rate / BtlBw": each("band_rate")})
    rep.measured["fig1.knee"] = Measured(each("knee"), alternatives={FLOOR: Measured(each("knee_floor"))},
                                         note=why_knee)
    rep.measured["fig1.rtt-linear"] = Measured(
        each("slope"), note=f"the fitted RTT line rises {mean(each('slope')) * mean(each('rtprop_ms')):.1f} ms per "
                            f"BDP ({mean(each('bdp_pkts')):.1f} packets) of excess.")
    rep.measured["fig1.drop-at-buffer"] = Measured(
        each("drop_excess"), note=f"the buffer holds {mean(each('buffer_bdp')):.2f} BDP; the first drop at "
                                  f"{mean(each('first_drop_s')):.2f} s.")
    rep.measured["fig1.optimal-at-bdp"] = Measured(
        each("optimal"), alternatives={FLOOR: Measured(each("optimal_floor"))}, note=why_knee)
    rep.measured["fig1.loss-based-right-edge"] = Measured(
        each("steady_position"),
        note=f"CUBIC from {STEADY_FROM_S:g} s: goodput {100 * mean(each('steady_goodput')):.1f}% of BtlBw, mean RTT "
             f"{mean(each('steady_rtt')):.2f} RTprop, {mean(each('steady_drops_per_s')):.2f} drops per second.")
    rows = [[str(s), f"{x['rtprop_ms']:.2f}", f"{x['floor_ms']:.2f}", f"{x['btlbw_mbps']:.3f}", f"{x['bdp_pkts']:.1f}",
             f"{x['knee']:.3f}", f"{x['knee_rate']:.3f}", f"{x['slope']:.3f}", f"{x['drop_excess']:.3f}",
             f"{x['optimal']:.3f}"] for s, x in zip(seeds, m)]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "RTprop (ms)", "RTT below the BDP (ms)", "BtlBw (Mbit/s)", "BDP (packets)", "RTT knee (BDP)",
         "delivery-rate knee (BDP)", "RTT slope (RTprop per BDP)", "excess at the first drop (buffers)",
         "most power at (BDP)"], rows)))
    if fig_dir is not None:
        _figure(fig_dir, m[0], seeds[0])
        rep.figures.append(Figure("fig1.png", "the paper's Fig. 1, measured: each sample's RTT and delivery rate "
                                              "against the data in flight when its packet was sent (dots: the "
                                              "ramp to the first loss; gray: CUBIC afterwards), the RTprop and "
                                              "BtlBw constraints and the in-flight / BtlBw line, in BDPs"))
    return paper.finish(rep, quick)


def _figure(fig_dir: Path, m: dict, seed: int) -> None:
    x, ramp, steady = m["x"], m["ramp"], m["steady"]
    edge = 1.0 + m["buffer_bdp"]
    right = max(2.4, float(np.nanmax(x[ramp | steady])) + 0.1)
    dots = {"linestyle": "none", "marker": ".", "markersize": 3}
    gray = {**dots, "color": "silver"}
    lines = np.array([0.0, 1.0, edge])
    rtt_panel = Panel("RTT (ms)", [
        Line("CUBIC afterwards", m["rtt"][steady], t=x[steady], style=gray),
        Line("the ramp", m["rtt"][ramp], t=x[ramp], style={**dots, "color": "tab:blue"}),
        Line("RTprop", np.full(2, m["rtprop_ms"]), t=np.array([0.0, right]), style={"color": "tab:blue", "ls": "--"}),
        Line("in-flight / BtlBw", lines * m["rtprop_ms"], t=lines, style={"color": "tab:red", "ls": ":"}),
    ], legend_loc="upper left")
    rate_panel = Panel("delivery rate (Mbit/s)", [
        Line("CUBIC afterwards", m["rate"][steady], t=x[steady], style=gray),
        Line("the ramp", m["rate"][ramp], t=x[ramp], style={**dots, "color": "tab:green"}),
        Line("BtlBw", np.array([0.0, m["btlbw_mbps"], m["btlbw_mbps"]]), t=np.array([0.0, 1.0, right]),
             style={"color": "tab:green", "ls": "--"}),
    ], legend_loc="lower right")
    time_panels(fig_dir / "fig1.png", f"One flow, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms, a "
                f"{BUFFER_BDP:g}-BDP buffer (seed {seed}): RTT and delivery rate against the data in flight",
                np.array([0.0, right]), [rtt_panel, rate_panel], xlim=(0.0, right),
                spans=[(0.0, 1.0, "app-limited"), (edge, right, "buffer-limited")],
                marks=[(1.0, "bandwidth-limited"), (edge, "")], xlabel="data in flight (BDP)", height=2.6)


EXPERIMENT = Experiment(
    name="bbr-fig1",
    figure="Fig. 1",
    summary="one flow sweeping the data in flight on 10 Mbit/s, 40 ms, 1-BDP buffer: RTT and delivery rate, "
            "the BDP knee, the drop at BDP + buffer",
    runs=runs,
    analyse=analyse,
)
