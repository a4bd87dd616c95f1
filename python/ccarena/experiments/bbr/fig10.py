"""bbr-fig10: steady-state median RTT against the bottleneck buffer on a
128 kbit/s, 40 ms link (an emulated 2.5G SGSN) with eight BBR or eight
CUBIC flows, and how long a new connection's first packet would wait.

Paper (L159): "Figure 10 compares (emulated) SGSN Internet-to-mobile delay
for BBR and CUBIC. The horizontal lines mark one of the more serious
consequences: TCP adapts to long RTT delay except on the connection
initiation SYN packet, which has an OS-dependent fixed timeout. When the
mobile device is receiving bulk data (e.g., from automatic app updates)
via a large-buffered SGSN, the device can't connect to anything on the
Internet until the queue empties (the SYN ACK accept packet is delayed for
longer than the fixed SYN timeout)." L163: "Figure 10 shows steady-state
median RTT variation with link buffer size on a 128-Kbps/40-ms link with
eight BBR (green) or CUBIC (red) flows. BBR keeps the queue near its
minimum, independent of both bottleneck buffer size and number of active
flows. CUBIC flows always fill the buffer, so the delay grows linearly
with buffer size." Claims: claims.toml (independence of the buffer and of
the number of flows as "constant" orders, CUBIC's fill against Fig. 5's 70
to 100 percent; "near its minimum" and "linearly" are shown); this module
measures them per seed and buffer.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from ... import units
from .. import compare, traces
from ..common import key, live_of, markdown_table, mean, runs_of
from ..figures import Series, sweep
from ..framework import Experiment, Figure, Outcome, Report, RunSpec, Variant
from ..verdict import Measured

VARIANTS = (paper.BBR, paper.CUBIC)
BBR, CUBIC = (v.name for v in VARIANTS)
RATE_KBPS = 128
RTT_MS = 40
FLOWS = 8
#: Buffers, kB (the paper's are not given; L159: SGSNs have "frequently
#: megabytes of buffer"). 1 MB holds 65 s at 128 kbit/s.
BUFFERS_KB = (10, 20, 50, 100, 200, 500, 1000)
QUICK_BUFFERS_KB = (20, 200)
#: Long enough for eight CUBIC flows to fill 1 MB; steady state is the second half.
DURATION_S = 600.0
QUICK_DURATION_S = 120.0
INTERVAL = "100ms"
#: "Independent of ... number of active flows": BBR alone and in groups, at
#: the largest buffer.
FLOW_COUNTS = (1, 2, 4, FLOWS)
QUICK_FLOW_COUNTS = (1, FLOWS)
#: Initial SYN retransmission timeouts: Linux's 1 s (RFC 6298, TCP_TIMEOUT_INIT)
#: and the 3 s of RFC 1122 that older stacks keep.
SYN_TIMEOUTS_S = (1.0, 3.0)
def buffers(quick: bool) -> tuple[int, ...]:
    return QUICK_BUFFERS_KB if quick else BUFFERS_KB


def duration_s(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def flow_counts(quick: bool) -> tuple[int, ...]:
    return QUICK_FLOW_COUNTS if quick else FLOW_COUNTS


def _spec(v: Variant, seed: int, b: int, n: int, quick: bool) -> RunSpec:
    dur = duration_s(quick)
    point = {"buffer": f"{b}KB"} if n == FLOWS else {"buffer": f"{b}KB", "flows": n}
    return RunSpec(key(v.name, seed, **point),
                   paper.scenario([paper.flow(v, RTT_MS, count=n)], seed=seed, duration=dur, rate=f"{RATE_KBPS}Kbit",
                                  buffer=f"{b}KB", window=(dur / 2, dur), interval=INTERVAL),
                   ("rtt_ms", "cc_mode"), ("queue_delay_ms",))


def runs(quick: bool) -> list[RunSpec]:
    specs = [_spec(v, seed, b, FLOWS, quick) for v in VARIANTS for b in buffers(quick) for seed in paper.seeds(quick)]
    specs += [_spec(paper.BBR, seed, buffers(quick)[-1], n, quick) for n in flow_counts(quick) if n != FLOWS
              for seed in paper.seeds(quick)]
    return specs


#: ``--live`` repeats BBR's first seed at this buffer (kB) on real Linux
#: (the kernel's own BBR): does Linux keep the same seconds of queue?
LIVE_BUFFER_KB = 100
QUICK_LIVE_BUFFER_KB = 200


def live_buffer_kb(quick: bool) -> int:
    return QUICK_LIVE_BUFFER_KB if quick else LIVE_BUFFER_KB


def live_runs(quick: bool) -> list[RunSpec]:
    """``--live``: eight BBR flows at one buffer, seed 1, the simulated
    run's scenario (its whole duration: 10 minutes of testbed, 2 with --quick)."""
    point = _spec(paper.BBR, paper.seeds(quick)[0], live_buffer_kb(quick), FLOWS, quick)
    return [RunSpec(point.key, point.scenario)]


def median_rtt_ms(run: Outcome) -> float:
    """The median of every flow's RTT samples (one per interval) in the window."""
    lo = float(run.summary["window"]["from_s"])
    x = np.concatenate([paper.rtt(run, i)[run.t_s > lo] for i in range(len(run.flows))])
    return float(np.nanmedian(x))


def lowest_rtt_ms(run: Outcome) -> float:
    """The lowest RTT sample of any flow in the window (what RTprop can be)."""
    lo = float(run.summary["window"]["from_s"])
    x = np.concatenate([paper.rtt(run, i)[run.t_s > lo] for i in range(len(run.flows))])
    return float(np.nanmin(x)) if np.isfinite(x).any() else float("nan")


def startup_fraction(run: Outcome) -> float:
    """The share of the window's samples, over every flow, in which a flow
    is in STARTUP (0 for CUBIC, which reports no mode)."""
    lo = float(run.summary["window"]["from_s"])
    x = np.concatenate([run.flow["cc_mode"][i][run.t_s > lo] for i in range(len(run.flows))])
    return float(np.mean(x == traces.STARTUP)) if len(x) else float("nan")


def syn_wait_s(run: Outcome) -> float:
    """How long a packet joining the queue waits (median sojourn), s: what
    a new connection's SYN-ACK waits behind the bulk data."""
    return float(run.summary["queue_delay_ms"]["p50"]) / 1e3


def time_out_fraction(run: Outcome, timeout_s: float) -> float:
    """Fraction of the window's intervals whose mean queueing delay exceeds ``timeout_s``."""
    lo = float(run.summary["window"]["from_s"])
    d = run.link["queue_delay_ms"][run.t_s > lo]
    d = d[np.isfinite(d)]
    return float(np.mean(d > 1e3 * timeout_s)) if len(d) else float("nan")


def crossing_kb(bufs: list[int], waits: list[float], timeout_s: float) -> float | None:
    """The buffer (kB, log-interpolated) at which the median wait first
    exceeds ``timeout_s``; None if it never does."""
    for i, (b, w) in enumerate(zip(bufs, waits)):
        if w > timeout_s:
            if i == 0:
                return float(b)
            b0, w0 = bufs[i - 1], waits[i - 1]
            f = (timeout_s - w0) / (w - w0)
            return float(np.exp(np.log(b0) + f * (np.log(b) - np.log(b0))))
    return None


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    bufs = list(buffers(quick))
    dur = duration_s(quick)
    per = {cc: {b: runs_of(outcomes, cc, seeds, buffer=f"{b}KB") for b in bufs} for cc in (BBR, CUBIC)}
    med = {cc: {b: [median_rtt_ms(r) for r in per[cc][b]] for b in bufs} for cc in (BBR, CUBIC)}
    wait = {cc: {b: [syn_wait_s(r) for r in per[cc][b]] for b in bufs} for cc in (BBR, CUBIC)}
    ser = paper.serialisation_ms(RATE_KBPS / 1e3)
    empty = RTT_MS + ser
    drain_ms = {b: b * 1e3 * 8 / RATE_KBPS for b in bufs}  # a full buffer's queueing delay
    fill = {b: [(m - empty) / drain_ms[b] for m in med[CUBIC][b]] for b in bufs}
    big = bufs[-1]
    counts = flow_counts(quick)
    by_n = {n: [median_rtt_ms(r) for r in (per[BBR][big] if n == FLOWS else
                                           runs_of(outcomes, BBR, seeds, buffer=f"{big}KB", flows=n))] for n in counts}
    rep = Report(setup=list(paper.SETUP[1:]))
    rep.setup += [
        f"Eight flows of one algorithm (`count = {FLOWS}`, all starting at 0 s) on {RATE_KBPS} kbit/s, {RTT_MS} ms, "
        f"droptail buffers of {', '.join(map(str, bufs))} kB (the paper's are not given); {dur:g} s, steady state "
        f"over the second half. An empty path's RTT is {empty:.0f} ms: {RTT_MS} ms plus one packet's {ser:.0f} ms on "
        f"the {RATE_KBPS} kbit/s link. Median RTT: the median of every flow's RTT samples taken every {INTERVAL} in "
        f"the window. BBR also runs with {', '.join(map(str, counts[:-1]))} flows at the largest buffer.",
        "CUBIC's fill of the buffer: its median queue (median RTT less the empty path's) over a full buffer's "
        "queueing delay (buffer / rate).",
        "A new connection's SYN-ACK waits behind the bulk data for the queue's median sojourn time (the summary's "
        f"p50 queueing delay); the SYN timeouts are Linux's initial RTO of {SYN_TIMEOUTS_S[0]:g} s (RFC 6298) and the "
        f"{SYN_TIMEOUTS_S[1]:g} s of RFC 1122 that older stacks keep.",
    ]
    for cc in (BBR, CUBIC):
        for b in bufs:
            rep.numbers[f"{cc}.median_rtt_ms.{b}KB"] = mean(med[cc][b])
            rep.numbers[f"{cc}.syn_wait_s.{b}KB"] = mean(wait[cc][b])
    for b in bufs:
        rep.numbers[f"cubic.fill.{b}KB"] = mean(fill[b])
    for n in counts:
        rep.numbers[f"bbr.median_rtt_ms.{n}flows.{big}KB"] = mean(by_n[n])
    floor_ms = FLOWS * paper.BBR_MIN_CWND * ser - RTT_MS  # min-cwnd packets beyond the pipe, queued
    startup = {b: mean([startup_fraction(r) for r in per[BBR][b]]) for b in bufs}
    for b in bufs:
        rep.numbers[f"bbr.startup_fraction.{b}KB"] = startup[b]
    lowest = {b: min(lowest_rtt_ms(r) for r in per[BBR][b]) for b in bufs}
    lb = live_buffer_kb(quick)
    live = live_of(outcomes, BBR, seeds[0], buffer=f"{lb}KB")
    sim_live_point = outcomes[key(BBR, seeds[0], buffer=f"{lb}KB")]
    if live is None:
        linux = (f" Whether real Linux keeps the same queue is measured by `ccarena reproduce bbr-fig10 --live` "
                 "(root), not by this run.")
    else:
        linux = (f" Real Linux's own BBR on this host keeps the same queue (this run's --live pass, seed "
                 f"{seeds[0]}, {lb} kB): median queueing delay {syn_wait_s(live):.2f} s against the simulator's "
                 f"{syn_wait_s(sim_live_point):.2f} s.")
    bbr_reason = (f"BBR's minimum cwnd is {paper.BBR_MIN_CWND} packets (ProbeRTT's too): eight flows in ProbeRTT "
                  f"together still hold {FLOWS * paper.BBR_MIN_CWND} packets, which take "
                  f"{FLOWS * paper.BBR_MIN_CWND * ser / 1e3:.1f} s to cross the link while the pipe holds "
                  f"{RTT_MS / ser:.1f} of them: {floor_ms / 1e3:.1f} s of queue. So the flows never see the empty path "
                  f"(the lowest RTT sample of any flow in the window at {big} kB is {lowest[big] / 1e3:.2f} s, "
                  f"{lowest[big] / empty:.0f}x the empty path's {empty:.0f} ms), their RTprop carries seconds of queue, "
                  "and cwnd = 2 x bw x RTprop keeps about twice that in flight. Median RTT "
                  + ", ".join(f"{b} kB: {mean(med[BBR][b]) / 1e3:.2f} s" for b in bufs)
                  + ". RTOs (the queue swings by seconds; below the floor, drops) reset BBR's full-bandwidth "
                  "detection, and a flow that never found full bandwidth goes back to STARTUP after each ProbeRTT "
                  "(cwnd 2.89 x bw x RTprop): flows are in STARTUP in "
                  + ", ".join(f"{b} kB: {100 * startup[b]:.0f}%" for b in bufs) + " of the window"
                  + f"; buffers smaller than the floor ({FLOWS * paper.BBR_MIN_CWND * units.PACKET_WIRE_BYTES / 1e3:.0f} kB) "
                  "stay full and drop." + linux)
    rep.measured["fig10.bbr-near-minimum"] = Measured(members={f"{b} kB": med[BBR][b] for b in bufs},
                                                      note=bbr_reason)
    rep.measured["fig10.bbr-independent-of-buffer"] = Measured(members={f"{b} kB": med[BBR][b] for b in bufs},
                                                               note=bbr_reason)
    rep.measured["fig10.bbr-independent-of-flows"] = Measured(
        members={f"{n} flows": by_n[n] for n in counts},
        note=f"the floor of BBR's queue grows with the number of flows: {paper.BBR_MIN_CWND} packets each, "
             f"{paper.BBR_MIN_CWND * ser / 1e3:.2f} s of queue per flow at {RATE_KBPS} kbit/s; one flow alone sits at "
             f"{mean(by_n[counts[0]]) / 1e3:.2f} s against an empty path's {empty:.0f} ms.")
    rep.measured["fig10.cubic-fills"] = Measured(
        members={f"{b} kB": fill[b] for b in bufs},
        note="; ".join(f"{b} kB: {100 * mean(fill[b]):.0f}%" for b in bufs) + ".")
    if live is not None:
        rep.comparisons.append(compare.live(
            f"BBR, {FLOWS} flows, {lb} kB: median queueing delay (seed {seeds[0]})", f"{syn_wait_s(live):.2f} s",
            f"{syn_wait_s(sim_live_point):.2f} s"))
    slopes = [float(np.polyfit([float(b) for b in bufs], [med[CUBIC][b][i] for b in bufs], 1)[0])
              if len(bufs) > 1 else float("nan") for i in range(len(seeds))]
    rep.numbers["cubic.rtt_slope_ms_per_kb"] = mean(slopes)
    rep.measured["fig10.cubic-linear"] = Measured(
        slopes, note=f"a full buffer adds {8 / RATE_KBPS * 1e3:.1f} ms per kB at {RATE_KBPS} kbit/s.")
    for timeout in SYN_TIMEOUTS_S:
        for cc in (BBR, CUBIC):
            x = crossing_kb(bufs, [mean(wait[cc][b]) for b in bufs], timeout)
            rep.numbers[f"{cc}.syn_timeout_{timeout:g}s_kb"] = float("nan") if x is None else x
            rep.comparisons.append(compare.ours_only(
                f"{paper.LABEL[cc]}: buffer from which a SYN-ACK waits > {timeout:g} s",
                "never" if x is None else f"{x:.0f} kB",
                note=f"the paper marks its SYN timeouts as horizontal lines (no number); at {bufs[-1]} kB the median "
                     f"wait is {mean(wait[cc][bufs[-1]]):.1f} s and the queue delay exceeds {timeout:g} s in "
                     f"{100 * mean([time_out_fraction(r, timeout) for r in per[cc][bufs[-1]]]):.0f}% of the time."))
    rows = [[f"{b}", f"{mean(med[BBR][b]):.0f}", f"{mean(wait[BBR][b]):.2f}", f"{mean(med[CUBIC][b]):.0f}",
             f"{mean(wait[CUBIC][b]):.2f}", f"{100 * mean(fill[b]):.0f}%"] for b in bufs]
    rep.sections.append(("Per buffer (mean over seeds)", markdown_table(
        ["buffer (kB)", "BBR median RTT (ms)", "BBR SYN-ACK wait (s)", "CUBIC median RTT (ms)", "CUBIC SYN-ACK wait (s)",
         "CUBIC queue / buffer"], rows)))

    if fig_dir is not None:
        series = [Series(paper.LABEL[cc], [mean(med[cc][b]) / 1e3 for b in bufs], [min(med[cc][b]) / 1e3 for b in bufs],
                         [max(med[cc][b]) / 1e3 for b in bufs], style={"color": color})
                  for cc, color in ((BBR, "tab:green"), (CUBIC, "tab:red"))]
        top = max(max(med[cc][b]) for cc in (BBR, CUBIC) for b in bufs) / 1e3
        sweep(fig_dir / "fig10.png", f"{FLOWS} flows, {RATE_KBPS} kbit/s, {RTT_MS} ms: steady-state median RTT",
              bufs, series, xlabel="bottleneck buffer (kB)", ylabel="median RTT (s)", logx=True, logy=True,
              ylim=(0.1, 1.5 * top),
              hlines=[(timeout, f"SYN timeout {timeout:g} s ({who})", style)
                      for timeout, who, style in zip(SYN_TIMEOUTS_S, ("Linux, RFC 6298", "RFC 1122"),
                                                     ({"linestyle": "--"}, {"linestyle": "-."}))],
              reference=Series(f"empty path ({empty:.0f} ms)", [empty / 1e3] * len(bufs),
                               style={"linestyle": ":", "color": "black"}))
        rep.figures.append(Figure("fig10.png", "the paper's Fig. 10: median RTT against the buffer (mean, seed range); "
                                               "the horizontal lines are the initial SYN timeouts, Linux's 1 s "
                                               "(dashed) and RFC 1122's 3 s (dash-dotted); dotted: the empty path"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="bbr-fig10",
    figure="Fig. 10",
    summary="8 flows on 128 kbit/s, 40 ms: median RTT vs buffer size, BBR and CUBIC; when a new connection's SYN times out",
    runs=runs,
    analyse=analyse,
    live=live_runs,
)
