"""bbr-fig4-5: the first second of a 10 Mbit/s, 40 ms BBR flow as a
time/sequence plot with its state transitions, against CUBIC (Fig. 4), and
the first eight seconds of both flows' RTT (Fig. 5).

Paper (L117): Startup "discovers BtlBw in log2BDP RTTs but creates up to
2BDP excess queue in the process. Once Startup finds BtlBw, BBR
transitions to Drain, which uses the inverse of Startup's gain to get rid
of the excess queue, then to ProbeBW once the inflight drops to a BDP."
L121: "Figure 4 shows the first second of a 10-Mbps, 40-ms BBR flow. The
time/sequence plot shows the sender (green) and receiver (blue) progress
vs. time. The red line shows a CUBIC sender under identical conditions.
Vertical gray lines mark BBR state transitions." L123: "Their initial
behavior is similar, but BBR completely drains its startup queue while
CUBIC can't." L125: "Figure 5 shows RTT behavior during the first eight
seconds of the connections shown in figure 4. CUBIC (red) fills the
available buffer, then cycles from 70 to 100 percent full every few
seconds. After startup, BBR (green) runs with essentially no queue."
Claims: claims.toml; this module measures them per seed.
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
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

VARIANTS = (paper.BBR, paper.CUBIC)
BBR, CUBIC = (v.name for v in VARIANTS)
#: Fig. 5: "the first eight seconds".
DURATION_S = 8.0
#: Fig. 4: "the first second".
FIG4_S = 1.0
INTERVAL = "1ms"
COLUMNS = ("goodput_mbps", "cwnd", "inflight", *paper.ROUNDS_COLUMNS, "cc_mode", "pacing_gain", "bw_estimate_mbps")
#: CUBIC's multiplicative decrease (cc/cubic.c: beta = 717/1024).
CUBIC_BETA = 717 / 1024
#: The metric's "discovers BtlBw" (claims.toml): the estimate within 5%
#: of the link's payload rate.
REACH = 0.95


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(v.name, seed), paper.lab(v, seed=seed, duration=DURATION_S, interval=INTERVAL), COLUMNS,
                    ("queue_bytes", "drops"))
            for v in VARIANTS for seed in paper.seeds(quick)]


def bbr_startup(run: Outcome) -> dict[str, float]:
    """Startup and Drain of a BBR run, and the queue before and after."""
    t = run.t_s
    mode = run.flow["cc_mode"][0]
    q = run.link["queue_bytes"] / units.PACKET_WIRE_BYTES
    rtt = paper.rtt(run)
    link = paper.payload_mbps(paper.LAB_RATE_MBPS)
    probe_bw = np.nonzero(mode == traces.PROBE_BW)[0]
    drain = np.nonzero(mode == traces.DRAIN)[0]
    exit_s = float(t[probe_bw[0]]) if len(probe_bw) else math.nan
    drain_s = float(t[drain[0]]) if len(drain) else math.nan
    reached = traces.time_to_reach(t, run.flow["bw_estimate_mbps"][0], REACH * link, 0.0)
    cycle = paper.cycle_s(run, 0, exit_s, DURATION_S)
    qmin = paper.cycle_min_queue(run, cycle) / units.PACKET_WIRE_BYTES
    first = traces.window(t, exit_s, exit_s + cycle)
    steady = traces.window(t, exit_s + cycle, DURATION_S)
    bdp = paper.bdp_packets(paper.LAB_RATE_MBPS, paper.LAB_RTT_MS)
    reach_rounds, reach_latest = paper.rounds_both(run, 0.0, reached)
    return {
        "startup_peak_pkts": float(q[t <= exit_s].max()),
        "drain_s": drain_s, "exit_s": exit_s, "cycle_s": cycle,
        "reach_s": reached, "reach_rounds": reach_rounds, "reach_rounds_latest": reach_latest,
        "plateau_rounds": paper.smoothed_rounds(run, reached, drain_s),
        "first_cycle_min_pkts": float(q[first].min()),
        "steady_cycle_min_max_pkts": float(qmin[steady].max()),
        "steady_cycle_min_median_pkts": float(np.median(qmin[steady])),
        "steady_median_pkts": float(np.median(q[steady])),
        "steady_median_bdp": float(np.median(q[steady])) / bdp,
        "inflight_at_exit": float(run.flow["inflight"][0][probe_bw[0]]) if len(probe_bw) else math.nan,
        "rtt_after_ms": float(np.nanmedian(rtt[steady])),
        "startup_rtt_ms": float(np.nanmax(rtt[t <= exit_s])),
    }


def cubic_fill(run: Outcome, buffer_pkts: float) -> dict[str, float]:
    """When CUBIC first fills the buffer, and how full it stays after."""
    t = run.t_s
    q = run.link["queue_bytes"] / units.PACKET_WIRE_BYTES
    full = np.nonzero(q >= buffer_pkts - 1)[0]
    if not len(full):
        return {"first_full_s": math.nan, "fill_min": math.nan, "fill_max": float(q.max() / buffer_pkts),
                "losses": 0.0, "gap_s": math.nan, "cwnd_peak": math.nan, "cwnd_after": math.nan}
    after = t >= t[full[0]]
    drops = run.link["drops"]
    # Loss episodes: drops separated by more than a second (one CUBIC reduction each).
    drop_t = t[drops > 0]
    episodes = [float(x) for i, x in enumerate(drop_t) if i == 0 or x - drop_t[i - 1] > 1.0]
    cwnd = run.flow["cwnd"][0]
    before_loss = cwnd[t <= episodes[0]] if episodes else cwnd
    after_loss = cwnd[traces.window(t, episodes[0], episodes[1] if len(episodes) > 1 else DURATION_S)] \
        if episodes else cwnd
    return {"first_full_s": float(t[full[0]]), "fill_min": float(q[after].min() / buffer_pkts),
            "fill_max": float(q[after].max() / buffer_pkts), "losses": float(len(episodes)),
            "gap_s": float(np.mean(np.diff(episodes))) if len(episodes) > 1 else math.nan,
            "cwnd_peak": float(before_loss.max()), "cwnd_after": float(after_loss.min())}


def _cubic_cut(c: list[dict[str, float]], predicted_fill: float) -> str:
    """Why CUBIC's queue falls back where it does: its beta cut."""
    return (f"CUBIC cuts cwnd to beta = {CUBIC_BETA:.2f} of what it was at the loss (from "
            f"{_avg(c, 'cwnd_peak'):.0f} to {_avg(c, 'cwnd_after'):.0f} packets), which "
            f"leaves beta x (BDP + buffer) - BDP queued: {100 * predicted_fill:.1f}% of a {paper.BUFFER_BDP:g}-BDP "
            "buffer (70% is reached only as the buffer grows to many BDPs; the paper's buffer is not given).")


def _avg(runs: list[dict[str, float]], name: str) -> float:
    """The mean over the seeds of one measured quantity."""
    return mean([r[name] for r in runs])


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    bdp = paper.bdp_packets(paper.LAB_RATE_MBPS, paper.LAB_RTT_MS)
    # The full packets the buffer holds (a droptail queue of bytes).
    buffer_pkts = float(math.floor(paper.BUFFER_BDP * bdp))
    per = {cc: runs_of(outcomes, cc, seeds) for cc in (BBR, CUBIC)}
    b = [bbr_startup(r) for r in per[BBR]]
    c = [cubic_fill(r, buffer_pkts) for r in per[CUBIC]]
    predicted_fill = (CUBIC_BETA * (1 + paper.BUFFER_BDP) - 1) / paper.BUFFER_BDP
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One flow, BBR or CUBIC, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms, buffer {paper.BUFFER_BDP:g} BDP "
        f"({buffer_pkts:.0f} full packets), {DURATION_S:g} s, telemetry every {INTERVAL}. The time/sequence plot is "
        "drawn from the flow's telemetry: the receiver's progress is its cumulative in-order goodput, the sender's "
        "that plus its in-flight data.",
        "What is left of Startup's queue: the smallest bottleneck queue in the first gain cycle after Drain less what "
        "ProbeBW keeps anyway (the largest per-cycle minimum of the queue over the rest of the run). BBR has "
        f"\"discovered BtlBw\" when its estimate comes within {100 * (1 - REACH):.0f}% of the link's payload rate; "
        f"rounds are the sum of dt / RTT from the start, over the smoothed RTT (over the latest sample as the "
        f"row's alternative); log2 of the BDP ({bdp:.1f} packets) is {math.log2(bdp):.2f}.",
        "CUBIC's fill of the buffer: the queue in full packets over the full packets the buffer holds; its low is "
        "the queue's minimum after it first fills (within one packet).",
    ]
    for name, vals in (("startup_peak_pkts", [x["startup_peak_pkts"] for x in b]),
                       ("exit_s", [x["exit_s"] for x in b]), ("reach_rounds", [x["reach_rounds"] for x in b]),
                       ("first_cycle_min_pkts", [x["first_cycle_min_pkts"] for x in b]),
                       ("steady_cycle_min_max_pkts", [x["steady_cycle_min_max_pkts"] for x in b]),
                       ("steady_median_pkts", [x["steady_median_pkts"] for x in b]),
                       ("rtt_after_ms", [x["rtt_after_ms"] for x in b])):
        rep.numbers[f"bbr.{name}"] = mean(vals)
    for name in ("first_full_s", "fill_min", "fill_max", "gap_s"):
        rep.numbers[f"cubic.{name}"] = mean([x[name] for x in c])
    rep.numbers["cubic.fill_min_predicted"] = predicted_fill

    first_min = [x["first_cycle_min_pkts"] for x in b]
    kept = [x["steady_cycle_min_max_pkts"] for x in b]
    rep.measured["fig4.startup-rounds"] = Measured(
        [x["reach_rounds"] for x in b],
        alternatives={paper.LATEST_SAMPLE: Measured([x["reach_rounds_latest"] for x in b])},
        note=f"the estimate reaches {REACH * paper.payload_mbps(paper.LAB_RATE_MBPS):.2f} Mbit/s "
             f"{1e3 * _avg(b, 'reach_s'):.0f} ms after the start, starting from the 10-packet initial "
             "window.")
    rep.measured["fig4.startup-queue"] = Measured(
        [x["startup_peak_pkts"] / bdp for x in b],
        note=f"{_avg(b, 'startup_peak_pkts'):.0f} packets at the peak; Startup's cwnd gain 2/ln2 bounds "
             "the queue to (cwnd_gain - 1) x BDP = 1.89 BDP (L219) of BBR's own BDP estimate, to which Linux adds its "
             "quantization allowance (3 TSO bursts) and ACK-aggregation allowance; Startup leaves "
             f"{_avg(b, 'plateau_rounds'):.1f} rounds after the estimate stops growing (L221: three "
             f"rounds), at {1e3 * _avg(b, 'drain_s'):.0f} ms; ProbeBW begins at "
             f"{1e3 * _avg(b, 'exit_s'):.0f} ms.")
    rep.measured["fig4.drains"] = Measured(
        [f - k for f, k in zip(first_min, kept)],
        alternatives={"the queue itself at its first-cycle minimum (packets), against nothing queued":
                      Measured(first_min)},
        note=f"the first cycle's smallest queue is {mean(first_min):.1f} packets, ProbeBW keeps {mean(kept):.1f} per "
             f"cycle later; Drain ends at in-flight {_avg(b, 'inflight_at_exit'):.1f} packets "
             f"(1 BDP = {bdp:.1f}): Linux's target is the BDP estimate plus a quantization allowance of a few packets, "
             "which stay queued.")
    rep.measured["fig5.no-queue"] = Measured(
        [x["steady_median_bdp"] for x in b],
        note=f"{_avg(b, 'steady_median_pkts'):.1f} packets; RTT {_avg(b, 'rtt_after_ms'):.1f} "
             f"ms against {_avg(b, 'startup_rtt_ms'):.0f} in Startup; the 5/4 probe queues up to 1/4 BDP "
             f"({bdp / 4:.1f} packets) by design (L207): the standing queue is BBR's in-flight target (BDP estimate "
             "plus the quantization allowance).")
    rep.measured["fig5.cubic-fills"] = Measured(
        [x["fill_max"] for x in c], note=f"first full at {_avg(c, 'first_full_s'):.2f} s.")
    rep.measured["fig5.cubic-cycles"] = Measured([x["fill_min"] for x in c], note=_cubic_cut(c, predicted_fill))
    rep.measured["fig5.cubic-period"] = Measured(
        [x["gap_s"] for x in c], note=f"{_avg(c, 'losses'):.0f} loss episodes in {DURATION_S:g} s.")
    rows = [[str(s), f"{x['startup_peak_pkts']:.0f}", f"{1e3 * x['exit_s']:.0f}", f"{x['first_cycle_min_pkts']:.0f}",
             f"{x['steady_median_pkts']:.1f}", f"{100 * y['fill_min']:.0f}-{100 * y['fill_max']:.0f}%"]
            for s, x, y in zip(seeds, b, c)]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "BBR Startup peak queue (packets)", "BBR enters ProbeBW (ms)", "BBR first-cycle min queue (packets)",
         "BBR median queue after (packets)", "CUBIC fill after first fill"], rows)))

    if fig_dir is not None:
        _figures(fig_dir, per[BBR][0], per[CUBIC][0], bdp, buffer_pkts, seeds[0])
        rep.figures += [
            Figure("fig4.png", "the paper's Fig. 4: the first second, time/sequence and RTT, with BBR's state "
                               "transitions"),
            Figure("fig5.png", "the paper's Fig. 5: RTT over the first eight seconds, BBR and CUBIC"),
        ]
    return paper.finish(rep, quick)


def _figures(fig_dir: Path, bbr: Outcome, cubic: Outcome, bdp: float, buffer_pkts: float, seed: int) -> None:
    t = bbr.t_s
    mss_mb = units.MSS_BYTES / 1e6
    recv = paper.cumulative_mb(bbr)
    sent = recv + bbr.flow["inflight"][0] * mss_mb
    cubic_sent = paper.cumulative_mb(cubic) + cubic.flow["inflight"][0] * mss_mb
    marks = [(x, paper.MODE_NAME[m]) for x, m in paper.mode_changes(bbr) if x <= FIG4_S]
    rtt_b, rtt_c = paper.rtt(bbr), paper.rtt(cubic)
    time_panels(
        fig_dir / "fig4.png", f"The first second, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms (seed {seed}); "
                              "grey lines: BBR state transitions", t,
        [Panel("data (MB)", [Line("BBR sender", sent, style={"color": "tab:green"}),
                             Line("BBR receiver", recv, style={"color": "tab:blue"}),
                             Line("CUBIC sender", cubic_sent, t=cubic.t_s, style={"color": "tab:red"})],
               legend_loc="upper left"),
         Panel("RTT (ms)", [Line("BBR", rtt_b, style={"color": "tab:green"}),
                            Line("CUBIC", rtt_c, t=cubic.t_s, style={"color": "tab:red"})], ymin=None),
         Panel("in-flight (packets)", [Line("BBR", bbr.flow["inflight"][0], style={"color": "tab:green"}),
                                       Line("CUBIC", cubic.flow["inflight"][0], t=cubic.t_s,
                                            style={"color": "tab:red"}),
                                       Line("1 BDP", np.full_like(t, bdp), style={"color": "dimgray",
                                                                                  "linestyle": ":"})], integer=True)],
        xlim=(0.0, FIG4_S), marks=marks, height=2.4,
    )
    base = paper.LAB_RTT_MS + paper.serialisation_ms(paper.LAB_RATE_MBPS)
    full_ms = buffer_pkts * paper.serialisation_ms(paper.LAB_RATE_MBPS)
    time_panels(
        fig_dir / "fig5.png", f"RTT over the first {DURATION_S:g} s, buffer {paper.BUFFER_BDP:g} BDP (seed {seed})", t,
        [Panel("RTT (ms)", [Line("CUBIC", rtt_c, t=cubic.t_s, style={"color": "tab:red"}),
                            Line("BBR", rtt_b, style={"color": "tab:green"}),
                            Line("buffer 100% full", np.full_like(t, base + full_ms),
                                 style={"color": "dimgray", "linestyle": "--"}),
                            Line("buffer 70% full (L125)", np.full_like(t, base + 0.70 * full_ms),
                                 style={"color": "dimgray", "linestyle": ":"})], legend_loc="center right")],
        height=4.0,
    )


EXPERIMENT = Experiment(
    name="bbr-fig4-5",
    figure="Figs. 4-5",
    summary="10 Mbit/s, 40 ms: BBR's Startup and Drain vs CUBIC's slow start (first second), RTT over 8 s",
    runs=runs,
    analyse=analyse,
)
