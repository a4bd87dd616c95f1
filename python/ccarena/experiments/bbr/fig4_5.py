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

VARIANTS = (paper.BBR, paper.CUBIC)
BBR, CUBIC = (v.name for v in VARIANTS)
#: Fig. 5: "the first eight seconds".
DURATION_S = 8.0
#: Fig. 4: "the first second".
FIG4_S = 1.0
INTERVAL = "1ms"
COLUMNS = ("goodput_mbps", "cwnd", "inflight", "rtt_ms", "cc_mode", "pacing_gain", "bw_estimate_mbps")
#: "Cycles from 70 to 100 percent full": numbers the paper states in tens
#: of percent, taken to +-5 percentage points.
FILL_LOW = 0.70
FILL_PRECISION = 0.05
#: "Fills the buffer": the queue comes within one packet of the buffer.
#: "Essentially no queue": no more than the 5/4 probe itself queues by
#: design, 1/4 BDP (L109, L207).
PROBE_QUEUE_BDP = 0.25
#: CUBIC's multiplicative decrease (cc/cubic.c: beta = 717/1024).
CUBIC_BETA = 717 / 1024
#: "Reaches BtlBw": the estimate within 5% of the link's payload rate.
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
    return {
        "startup_peak_pkts": float(q[t <= exit_s].max()),
        "drain_s": drain_s, "exit_s": exit_s, "cycle_s": cycle,
        "reach_s": reached, "reach_rounds": paper.rounds(t, rtt, 0.0, reached),
        "plateau_rounds": paper.rounds(t, rtt, reached, drain_s),
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


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    bdp = paper.bdp_packets(paper.LAB_RATE_MBPS, paper.LAB_RTT_MS)
    buffer_pkts = paper.BUFFER_BDP * bdp
    per = {cc: runs_of(outcomes, cc, seeds) for cc in (BBR, CUBIC)}
    b = [bbr_startup(r) for r in per[BBR]]
    c = [cubic_fill(r, buffer_pkts) for r in per[CUBIC]]
    log2_bdp = math.log2(bdp)
    predicted_fill = (CUBIC_BETA * (1 + paper.BUFFER_BDP) - 1) / paper.BUFFER_BDP
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One flow, BBR or CUBIC, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms, buffer {paper.BUFFER_BDP:g} BDP "
        f"({buffer_pkts:.0f} packets), {DURATION_S:g} s, telemetry every {INTERVAL}. The time/sequence plot is drawn "
        "from the flow's telemetry: the receiver's progress is its cumulative in-order goodput, the sender's that plus "
        "its in-flight data.",
        f"BBR \"drains its startup queue completely\" when the smallest bottleneck queue in the first gain cycle after "
        "Drain is no larger than what ProbeBW keeps anyway (the largest per-cycle minimum of the queue over the rest "
        "of the run): nothing of Startup's queue is left. \"Essentially no queue\": the median queue after that first "
        f"cycle is at most the 1/4 BDP ({PROBE_QUEUE_BDP * bdp:.1f} packets) the 5/4 probe queues by design (L109, "
        f"L207). \"Discovers BtlBw in log2BDP RTTs\" (L117): the BtlBw estimate comes within {100 * (1 - REACH):.0f}% "
        f"of the link's payload rate within log2({bdp:.1f} packets) = {log2_bdp:.1f} rounds (rounds: the sum of dt / "
        "RTT from the start).",
        f"CUBIC \"fills the available buffer\" when the queue comes within one packet of it; \"cycles from 70 to 100 "
        f"percent full\": after that first fill, the queue's lowest and highest fill, with the paper's round 70% taken "
        f"to +-{100 * FILL_PRECISION:.0f} points.",
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
    rep.numbers["bbr.probe_queue_pkts"] = PROBE_QUEUE_BDP * bdp

    reach_rounds = [x["reach_rounds"] for x in b]
    first_min = [x["first_cycle_min_pkts"] for x in b]
    kept = [x["steady_cycle_min_max_pkts"] for x in b]
    steady_bdp = [x["steady_median_bdp"] for x in b]
    fill_min = [x["fill_min"] for x in c]
    fill_max = [x["fill_max"] for x in c]
    rep.comparisons += [
        compare.bound("BBR: rounds until the BtlBw estimate reaches the link rate",
                      f"\"discovers BtlBw in log2BDP RTTs\" (L117): <= {log2_bdp:.1f} rounds", reach_rounds, log2_bdp,
                      below=True, scale=1, fmt=".1f", unit=" rounds", spread_text=compare.spread(reach_rounds, ".1f"),
                      reason=f"the estimate reaches {REACH * paper.payload_mbps(paper.LAB_RATE_MBPS):.2f} Mbit/s "
                             f"{1e3 * mean([x['reach_s'] for x in b]):.0f} ms after the start, starting from the "
                             "10-packet initial window."),
        compare.ours_only("BBR: Startup's peak queue", f"{mean([x['startup_peak_pkts'] for x in b]):.0f} packets "
                          f"({mean([x['startup_peak_pkts'] for x in b]) / bdp:.2f} BDP)",
                          note="L117: \"creates up to 2BDP excess queue\"; Startup leaves "
                               f"{mean([x['plateau_rounds'] for x in b]):.1f} rounds after the estimate stops growing "
                               f"(L221: three rounds), at {1e3 * mean([x['drain_s'] for x in b]):.0f} ms; ProbeBW "
                               f"begins at {1e3 * mean([x['exit_s'] for x in b]):.0f} ms."),
        compare.claim("BBR: smallest queue in the first gain cycle after Drain",
                      "\"BBR completely drains its startup queue\" (L123)",
                      f"{mean(first_min):.1f} packets (ProbeBW keeps {mean(kept):.1f} per cycle later)",
                      all(f <= k for f, k in zip(first_min, kept)), spread_text=compare.spread(first_min, ".1f"),
                      reason=f"Drain ends at in-flight {mean([x['inflight_at_exit'] for x in b]):.1f} packets "
                             f"(1 BDP = {bdp:.1f}): Linux's target is the BDP estimate plus a quantization allowance "
                             "of a few packets, which stay queued."),
        compare.claim("BBR: median queue after the first gain cycle",
                      "\"After startup, BBR (green) runs with essentially no queue\" (L125)",
                      f"{mean([x['steady_median_pkts'] for x in b]):.1f} packets ({mean(steady_bdp):.2f} BDP; RTT "
                      f"{mean([x['rtt_after_ms'] for x in b]):.1f} ms against {mean([x['startup_rtt_ms'] for x in b]):.0f} "
                      "in Startup)", all(s <= PROBE_QUEUE_BDP for s in steady_bdp),
                      spread_text=compare.spread(steady_bdp, ".2f"),
                      reason="the standing queue BBR's in-flight target (BDP estimate plus the quantization allowance) "
                             "keeps."),
        compare.claim("CUBIC: fills the buffer", "\"CUBIC (red) fills the available buffer\" (L125)",
                      f"first full at {mean([x['first_full_s'] for x in c]):.2f} s", all(np.isfinite(
                          [x["first_full_s"] for x in c]))),
        compare.numeric("CUBIC: lowest fill after the first fill (\"cycles from 70 to 100 percent full\", L125)",
                        FILL_LOW, fill_min, fmt=".0f", unit="%", scale=100,
                        tol=FILL_PRECISION,
                        reason=f"CUBIC cuts cwnd to beta = {CUBIC_BETA:.2f} of what it was at the loss (from "
                               f"{mean([x['cwnd_peak'] for x in c]):.0f} to {mean([x['cwnd_after'] for x in c]):.0f} "
                               f"packets), which leaves beta x (BDP + buffer) - BDP queued: "
                               f"{100 * predicted_fill:.1f}% of a {paper.BUFFER_BDP:g}-BDP buffer (70% is reached "
                               "only as the buffer grows to many BDPs; the paper's buffer is not given)."),
        compare.numeric("CUBIC: highest fill after the first fill (the same sentence)", 1.0, fill_max, fmt=".0f", unit="%", scale=100,
                        tol=FILL_PRECISION),
        compare.ours_only("CUBIC: time between loss episodes", f"{mean([x['gap_s'] for x in c]):.2f} s",
                          compare.spread([x["gap_s"] for x in c], ".2f"),
                          note=f"the paper: \"every few seconds\"; {mean([x['losses'] for x in c]):.0f} loss "
                               f"episodes in {DURATION_S:g} s."),
    ]
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
                            Line("buffer 70% full", np.full_like(t, base + FILL_LOW * full_ms),
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
