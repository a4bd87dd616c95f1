"""bbq-fig8-11: the deep dive into Fig. 1's BBR run, 12-22 s, at 10 ms
telemetry: goodput (Fig. 8), RTT (Fig. 9), per-flow queue share (Fig. 10),
cwnd and in-flight (Fig. 11).

The paper's account (Sec. IV-A): when the 50 ms flow's MinRTT expires it
enters ProbeRTT; the queue dips and "the 10-ms RTT flow detects a new
MaxBw and reclaims all the available bandwidth"; "When the 50-ms RTT flow
returns to ProbeBw, the 10-ms RTT flow is quickly overwhelmed" (Fig. 8).
"After the 50-ms RTT flow exits ProbeRTT, the RTTs of both flows explode
until the surging inflight is bounded by CWND" (Fig. 9). "The 10-ms RTT
flow quickly occupies all queue slots when its competitor enters ProbeRTT
... when the 50-ms RTT flow returns to ProbeBw, the 10-ms RTT flow quickly
recedes" (Fig. 10). "The 10-ms RTT flow has its inflight CWND-bounded,
whereas the 50-ms RTT flow can still inflate inflight" (Fig. 11).
Lines L142-L161; the claims are in claims.toml. Each is measured per
seed around the 50 ms flow's first ProbeRTT in 12-22 s; "all" (of the
link, of the queue) is a number and is judged, the other words have none.
The figures show the first seed's trace, as the paper's show one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .. import claims, traces
from ..common import DEEP_COLUMNS, key
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

WINDOW = (12.0, 22.0)
DURATION_S = 30
INTERVAL = "10ms"
#: Goodput a 100 Mbit/s link can carry: payload / wire bytes.
LINK_GOODPUT_MBPS = 100 * 1448 / 1514
#: Samples (10 ms) in the trailing mean used for goodput (50 ms).
SMOOTH = 5
NAME = "bbq-fig8-11"


def runs(quick: bool) -> list[RunSpec]:
    flows = [paper.flow(paper.BBR, paper.SHORT_MS), paper.flow(paper.BBR, paper.LONG_MS)]
    return [RunSpec(key("bbr", seed), paper.scenario(flows, quick=quick, seed=seed, duration=DURATION_S,
                                                      window=(10, DURATION_S), interval=INTERVAL),
                    DEEP_COLUMNS, ("queue_delay_ms", "queue_bytes"))
            for seed in paper.seeds(quick)]


def _probe_rtt(run: Outcome, flow: int, lo: float, hi: float) -> tuple[float, float] | None:
    t = run.t_s
    eps = [e for e in traces.episodes(t, run.flow["cc_mode"][flow] == traces.PROBE_RTT) if lo <= e[0] < hi]
    return eps[0] if eps else None


def _measure(run: Outcome) -> dict | None:
    """What one run shows around the 50 ms flow's first ProbeRTT in
    12-22 s (None: it has none there)."""
    t, f = run.t_s, run.flow
    lo, hi = WINDOW
    long_prt = _probe_rtt(run, 1, lo, hi)
    if long_prt is None:
        return None
    s, e = long_prt
    short_prt = _probe_rtt(run, 0, lo - 1, hi)
    goodput = np.vstack([traces.trailing_mean(f["goodput_mbps"][i], SMOOTH) for i in (0, 1)])
    queue = f["queue_bytes"]
    total_q = queue.sum(axis=0)
    rtt = f["rtt_ms"]

    def byte_share(sel: np.ndarray) -> float:
        return float(queue[0][sel].sum() / max(total_q[sel].sum(), 1.0))

    probe_bw = traces.window(t, lo, hi) & (f["cc_mode"][0] == traces.PROBE_BW) & (f["cc_mode"][1] == traces.PROBE_BW)
    alone = e - s if short_prt is None else max(0.0, e - max(short_prt[1], s))
    return {
        "s": s, "e": e, "short_prt": short_prt, "alone": alone, "goodput": goodput,
        "peak": float(goodput[0][traces.window(t, s, e + 0.3)].max()),
        "short_before": float(goodput[0][traces.window(t, lo, s - 0.5)].mean()),
        "short_after": float(goodput[0][traces.window(t, e + 1.0, e + 2.0)].mean()),
        "rtt_at_exit": [float(np.nanmin(rtt[i][traces.window(t, s, e + 0.1)])) for i in (0, 1)],
        "rtt_peak": [float(np.nanmax(rtt[i][traces.window(t, e, e + 2.0)])) for i in (0, 1)],
        "qshare_during": byte_share(traces.window(t, s, e + 0.3)),
        "qshare_after": byte_share(traces.window(t, e + 1.0, hi)),
        "queue_in_probe": float(total_q[traces.window(t, s, e)].mean() / 1514),
        "limited": [traces.fraction(traces.cwnd_limited(f["cwnd"][i], f["inflight"][i]), probe_bw) for i in (0, 1)],
        "cwnd_grow": (float(np.nanmin(f["cwnd"][0][traces.window(t, e - alone, e)])) if alone > 0 else float("nan"),
                      float(np.nanmax(f["cwnd"][0][traces.window(t, e - alone, e + 0.05)])) if alone > 0
                      else float("nan")),
    }


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    per = [_measure(outcomes[key("bbr", seed)]) for seed in seeds]
    run = outcomes[key("bbr", seeds[0])]
    t = run.t_s
    f = run.flow
    rep = Report(setup=list(paper.SETUP[:1]))
    rep.setup += [
        f"Fig. 1's BBR run with 10 ms telemetry, looked at from 12 to 22 s as in the paper, over {len(seeds)} "
        f"seed(s); the figures show seed {seeds[0]}'s trace, as the paper's show one. Goodput is a 50 ms trailing "
        "mean; cwnd, in-flight, RTT and per-flow queue bytes are sampled every 10 ms.",
        "\"cwnd-limited\" = in-flight within 2 packets of cwnd at a sample.",
        "Each row is measured per seed around the 50 ms flow's first ProbeRTT in 12-22 s (a seed with none "
        "there measures nothing, and the row is then not judged). Most of the paper's words give no number and "
        "are shown; \"all\" of the link and of the queue are judged. The notes are what seed "
        f"{seeds[0]}'s trace shows where it departs from the paper's account.",
    ]
    first = per[0]
    if first is None:
        for claim in claims.of_experiment(paper.PAPER.key, NAME):
            rep.measured[claim.id] = Measured(note=f"no ProbeRTT of the 50 ms flow in 12-22 s (seed {seeds[0]}).")
        return rep

    def over_seeds(pick) -> list[float]:
        return [float(pick(m)) if m is not None else float("nan") for m in per]

    s, e, short_prt, alone = first["s"], first["e"], first["short_prt"], first["alone"]
    goodput, queue = first["goodput"], f["queue_bytes"]
    total_q = queue.sum(axis=0)
    short_qshare = np.divide(queue[0], total_q, out=np.full_like(total_q, np.nan), where=total_q > 0)
    rtt = f["rtt_ms"]
    rep.numbers["long_probe_rtt_start_s"] = s
    rep.numbers["long_probe_rtt_end_s"] = e
    if short_prt is not None:
        rep.numbers["short_probe_rtt_start_s"] = short_prt[0]
        rep.numbers["short_probe_rtt_end_s"] = short_prt[1]
    rep.numbers.update({"short_goodput_before_mbps": first["short_before"],
                        "short_goodput_peak_mbps": first["peak"], "short_goodput_after_mbps": first["short_after"]})
    rtt_at_exit, rtt_peak = first["rtt_at_exit"], first["rtt_peak"]
    rep.numbers.update({"short_rtt_min_probe_ms": rtt_at_exit[0], "short_rtt_peak_after_ms": rtt_peak[0],
                        "long_rtt_min_probe_ms": rtt_at_exit[1], "long_rtt_peak_after_ms": rtt_peak[1]})
    rep.numbers.update({"short_queue_share_during": first["qshare_during"],
                        "short_queue_share_after": first["qshare_after"]})
    limited = first["limited"]
    rep.numbers.update({"short_cwnd_limited": limited[0], "long_cwnd_limited": limited[1]})

    sync = ""
    if short_prt is not None:
        sync = (f" Our 10 ms flow enters ProbeRTT too, at {short_prt[0]:.2f} s: both flows' min-RTT filters were last "
                "refreshed by the same drained queue at the previous ProbeRTT, so they expire together. It leaves "
                f"ProbeRTT at {short_prt[1]:.2f} s, which leaves it {1000 * alone:.0f} ms alone on the link before the "
                f"50 ms flow returns at {e:.2f} s.")
    rep.numbers["short_alone_s"] = alone
    cwnd_grow = first["cwnd_grow"]
    seed1 = f"seed {seeds[0]}: "
    rep.measured["fig8.probe-rtt"] = Measured(over_seeds(lambda m: m["s"]),
                                              note=f"{seed1}the 50 ms flow is in ProbeRTT {s:.2f}-{e:.2f} s.")
    rep.measured["fig8.reclaims"] = Measured(
        over_seeds(lambda m: m["peak"] / LINK_GOODPUT_MBPS),
        note=(f"{seed1}peak {first['peak']:.1f} Mbit/s (50 ms mean; {first['short_before']:.1f} Mbit/s before the "
              f"ProbeRTT).{sync} In that "
              f"time its cwnd grows from {cwnd_grow[0]:.0f} to {cwnd_grow[1]:.0f} packets (it is cwnd-limited, and "
              "each round's higher delivery rate raises its bandwidth estimate and so its 2-BDP cwnd), not enough "
              "to fill the link before the 50 ms flow is back. In the paper's trace the 10 ms flow was evidently "
              "not in ProbeRTT at the same time."))
    rep.measured["fig8.overwhelmed"] = Measured(
        over_seeds(lambda m: m["short_after"] / LINK_GOODPUT_MBPS),
        note=f"{seed1}{first['short_after']:.1f} Mbit/s 1-2 s after the 50 ms flow's return.")
    rep.measured["fig9.rtts-explode"] = Measured(
        members={"10 ms flow": over_seeds(lambda m: m["rtt_peak"][0] / m["rtt_at_exit"][0]),
                 "50 ms flow": over_seeds(lambda m: m["rtt_peak"][1] / m["rtt_at_exit"][1])},
        note=f"{seed1}10 ms flow {rtt_at_exit[0]:.0f} -> {rtt_peak[0]:.0f} ms, 50 ms flow {rtt_at_exit[1]:.0f} -> "
             f"{rtt_peak[1]:.0f} ms.")
    rep.measured["fig10.occupies-queue"] = Measured(
        over_seeds(lambda m: m["qshare_during"]),
        note=(f"{seed1}the queue holds {first['queue_in_probe']:.1f} packets on average while the 50 ms flow is in "
              "ProbeRTT (both flows are, most of that time), and when the 50 ms flow returns the 10 ms flow has had "
              f"only {1000 * alone:.0f} ms to raise its rate, so the queue that builds from then on is mostly the "
              "50 ms flow's."))
    rep.measured["fig10.recedes"] = Measured(over_seeds(lambda m: m["qshare_after"]))
    rep.measured["fig11.cwnd-bounded"] = Measured(members={"10 ms flow": over_seeds(lambda m: m["limited"][0]),
                                                           "50 ms flow": over_seeds(lambda m: m["limited"][1])})

    if fig_dir is not None:
        span = [(s, e, "50 ms flow in ProbeRTT")]
        labels = ("10 ms", "50 ms")
        common = {"xlim": WINDOW, "spans": span}
        time_panels(fig_dir / "fig8.png", "Fig. 8: goodput of the two BBR flows, 12-22 s (50 ms mean)", t,
                    [Panel("goodput (Mbit/s)", [Line(labels[i], goodput[i]) for i in (0, 1)])], **common, height=3.2)
        time_panels(fig_dir / "fig9.png", "Fig. 9: RTT of the two BBR flows, 12-22 s", t,
                    [Panel("RTT (ms)", [Line(labels[i], rtt[i]) for i in (0, 1)])], **common, height=3.2)
        time_panels(fig_dir / "fig10.png", "Fig. 10: per-flow bytes in the bottleneck queue, 12-22 s", t,
                    [Panel("queued (packets)", [Line(labels[i], queue[i] / 1514) for i in (0, 1)]),
                     Panel("10 ms flow's share of the queue (%)", [Line("10 ms", 100 * short_qshare)], ymax=100)],
                    **common)
        time_panels(fig_dir / "fig11.png", "Fig. 11: cwnd and in-flight of the two BBR flows, 12-22 s", t,
                    [Panel(f"{labels[i]} flow (packets)",
                           [Line("cwnd", f["cwnd"][i]), Line("in-flight", f["inflight"][i], style={"linewidth": 0.7})])
                     for i in (0, 1)], **common)
        rep.figures += [
            Figure("fig8.png", "the paper's Fig. 8: goodput, 12-22 s"),
            Figure("fig9.png", "the paper's Fig. 9: RTT samples, 12-22 s"),
            Figure("fig10.png", "the paper's Fig. 10: per-flow queue occupancy and the 10 ms flow's share of it"),
            Figure("fig11.png", "the paper's Fig. 11: cwnd and in-flight of each flow"),
        ]
    return rep


EXPERIMENT = Experiment(
    name=NAME,
    figure="Figs. 8-11",
    summary="deep dive into Fig. 1's BBR run, 12-22 s: goodput, RTT, per-flow queue share, cwnd and in-flight",
    runs=runs,
    analyse=analyse,
)
