"""bbr-policer: one BBR flow through a token-bucket policer far below the
link rate: BBR learns the link's rate from the full bucket, then the
policed rate, and its long-term bandwidth model (lt_bw) pins the rate and
stops the probing losses.

Paper (L177): "BBR's initial YouTube deployment revealed that most of the
world's ISPs mangle traffic with token-bucket policers. The bucket is
typically full at connection startup so BBR learns the underlying
network's BtlBw, but once the bucket empties, all packets sent faster
than the (much lower than BtlBw) bucket fill rate are dropped. BBR
eventually learns this new delivery rate, but the ProbeBW gain cycle
results in continuous moderate losses. To minimize the upstream bandwidth
waste and application latency increase from these losses, we added
policer detection and an explicit policer model to BBR." The paper has no
figure for it; Linux's BBR v1 carries that model (cc/include/bbr_core.h,
bbr_lt_bw_sampling: two lossy intervals at the same delivery rate pin the
estimate to their mean for 48 rounds, at pacing gain 1). Claims:
claims.toml; this module measures them per seed.
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

RATE_MBPS = 100
RTT_MS = 40
#: "Much lower than BtlBw": a tenth of the link.
POLICER_MBPS = 10
#: Full at startup and deep enough that Startup measures the link's rate
#: before it empties ("so BBR learns the underlying network's BtlBw"): two
#: BDPs of the link, what Startup's last rounds send.
BURST = "1MB"
DURATION_S = 60.0
QUICK_DURATION_S = 30.0
#: After Startup, Drain and the first policed rounds.
STEADY_FROM_S = 10.0
INTERVAL = "10ms"
COLUMNS = ("goodput_mbps", *paper.ROUNDS_COLUMNS, "cc_mode", "pacing_gain", "bw_estimate_mbps", "retransmits")
#: lt_bw pins pacing gain at 1 in ProbeBW; the gain cycle never holds 1 for
#: more than 6 of its 8 phases: a ProbeBW stretch at gain 1 longer than a
#: whole cycle (8 RTprop) is the policer model at work.
CYCLE_PHASES = 8
#: Linux's pin length (BBR_LT_BW_MAX_RTTS).
LT_ROUNDS = 48


def duration_s(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def runs(quick: bool) -> list[RunSpec]:
    dur = duration_s(quick)
    return [RunSpec(key(paper.BBR.name, seed),
                    paper.scenario([paper.flow(paper.BBR, RTT_MS)], seed=seed, duration=dur, rate=f"{RATE_MBPS}Mbit",
                                   buffer=paper.buffer(paper.BUFFER_BDP), window=(STEADY_FROM_S, dur),
                                   interval=INTERVAL, policer={"rate": f"{POLICER_MBPS}Mbit", "burst": BURST}),
                    COLUMNS)
            for seed in paper.seeds(quick)]


def pinned(run: Outcome) -> list[tuple[float, float]]:
    """ProbeBW stretches at pacing gain 1 longer than a gain cycle: the
    estimate pinned to lt_bw."""
    rtprop = float(np.nanmin(paper.rtt(run)))
    flag = (run.flow["cc_mode"][0] == traces.PROBE_BW) & (np.abs(run.flow["pacing_gain"][0] - 1) < 1e-3)
    return [(a, b) for a, b in traces.episodes(run.t_s, flag) if b - a > CYCLE_PHASES * rtprop / 1e3]


def measure(run: Outcome, dur: float) -> dict[str, float]:
    t = run.t_s
    bw = run.flow["bw_estimate_mbps"][0]
    mode = run.flow["cc_mode"][0]
    retx = run.flow["retransmits"][0]
    pins = pinned(run)
    flag = np.zeros(len(t), dtype=bool)
    for a, b in pins:
        flag |= traces.window(t, a, b)
    steady = traces.window(t, STEADY_FROM_S, dur)
    dt = float(t[1] - t[0])
    cycling = steady & ~flag & (mode == traces.PROBE_BW)
    in_pin = steady & flag
    delivered = run.goodput(0) * 1e6 / 8 / units.MSS_BYTES * (dur - STEADY_FROM_S)
    return {
        # nanmax: a live run has no estimate before its socket exists.
        "startup_bw": float(np.nanmax(bw[mode == traces.STARTUP])) if (mode == traces.STARTUP).any() else math.nan,
        "bw_median": float(np.median(bw[steady])),
        "goodput": run.goodput(0),
        "pinned_fraction": float(in_pin.sum() / steady.sum()),
        "pins": float(sum(1 for a, _ in pins if a > STEADY_FROM_S)),
        "pin_rounds": mean([paper.smoothed_rounds(run, a, b) for a, b in pins]) if pins else math.nan,
        "first_pin_s": pins[0][0] if pins else math.nan,
        "retx_pinned": float(retx[in_pin].sum() / (in_pin.sum() * dt)) if in_pin.any() else math.nan,
        "retx_cycling": float(retx[cycling].sum() / (cycling.sum() * dt)) if cycling.any() else math.nan,
        "loss_rate": float(run.flows[0]["retransmits"]) / delivered if delivered > 0 else math.nan,
    }


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    dur = duration_s(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds)
    m = [measure(r, dur) for r in per]
    link = paper.payload_mbps(RATE_MBPS)
    policed = paper.payload_mbps(POLICER_MBPS)
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One BBR flow, {RATE_MBPS} Mbit/s, {RTT_MS} ms, buffer {paper.BUFFER_BDP:g} BDP, behind a token-bucket "
        f"policer of {POLICER_MBPS} Mbit/s (\"much lower than BtlBw\": a tenth of the link) with a {BURST} bucket, full "
        "at the start and deep enough for Startup to measure the link's rate before it empties (L177: \"The bucket is "
        f"typically full at connection startup so BBR learns the underlying network's BtlBw\"). {dur:g} s, telemetry "
        f"every {INTERVAL}; the steady state is {STEADY_FROM_S:g}-{dur:g} s. The policer counts wire bytes, so the "
        f"flow can deliver {policed:.2f} Mbit/s of payload.",
        "The engine does not report whether BBR's long-term model (lt_bw) is in use; it is read off the telemetry: "
        "lt_bw holds the pacing gain at 1 in ProbeBW, which the gain cycle never does for more than 6 of its 8 "
        f"phases, so a ProbeBW stretch at gain 1 longer than {CYCLE_PHASES} RTprop is counted as pinned to lt_bw.",
    ]
    for name in ("startup_bw", "bw_median", "goodput", "pinned_fraction", "pin_rounds", "retx_pinned", "retx_cycling",
                 "loss_rate", "first_pin_s"):
        rep.numbers[f"bbr.{name}"] = mean([x[name] for x in m])
    startup = [x["startup_bw"] / link for x in m]
    learned = [x["bw_median"] / policed for x in m]
    retx_pin = [x["retx_pinned"] for x in m]
    retx_cyc = [x["retx_cycling"] for x in m]
    rep.measured["policer.learns-link"] = Measured(
        startup, note=f"{mean([x['startup_bw'] for x in m]):.2f} of {link:.2f} Mbit/s: a delivery-rate sample is "
                      "upper-bounded by the bottleneck capacity (L52), so the max filter reaches the link's rate only "
                      "from below.")
    rep.measured["policer.learns-policed"] = Measured(
        learned, note=f"{mean([x['bw_median'] for x in m]):.2f} of {policed:.2f} Mbit/s.")
    rep.measured["policer.fewer-losses"] = Measured(
        members={"gain cycling": retx_cyc, "pinned to lt_bw": retx_pin})
    rep.measured["policer.moderate-losses"] = Measured(
        [x["loss_rate"] for x in m], note=f"goodput {mean([x['goodput'] for x in m]) / policed:.3f} of the policed "
                                          "payload rate.")
    rep.comparisons += [
        compare.ours_only("time pinned to lt_bw", f"{100 * mean([x['pinned_fraction'] for x in m]):.0f}% of "
                          f"{STEADY_FROM_S:g}-{dur:g} s, {mean([x['pins'] for x in m]):.0f} episodes of "
                          f"{mean([x['pin_rounds'] for x in m]):.0f} rounds",
                          note=f"Linux keeps lt_bw for {LT_ROUNDS} rounds, then probes again; the first pin starts at "
                               f"{mean([x['first_pin_s'] for x in m]):.1f} s."),
    ]
    rows = [[str(s), f"{x['startup_bw']:.1f}", f"{x['bw_median']:.2f}", f"{x['goodput']:.2f}",
             f"{100 * x['pinned_fraction']:.0f}%", f"{x['retx_pinned']:.0f}", f"{x['retx_cycling']:.0f}"]
            for s, x in zip(seeds, m)]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "BtlBw in Startup (Mbit/s)", "median BtlBw (Mbit/s)", "goodput (Mbit/s)", "pinned to lt_bw",
         "retx/s pinned", "retx/s cycling"], rows)))

    if fig_dir is not None:
        run = per[0]
        t = run.t_s
        pins = pinned(run)
        panels = [
            Panel("BtlBw estimate (Mbit/s)", [Line("BtlBw (lt_bw when pinned)", run.flow["bw_estimate_mbps"][0],
                                                   style={"color": "gray", "linewidth": 2}),
                                              Line("policed payload rate", np.full_like(t, policed),
                                                   style={"color": "black", "linestyle": ":"})], logy=True),
            Panel("goodput (Mbit/s, 0.1 s mean)", [Line("goodput", traces.trailing_mean(run.flow["goodput_mbps"][0], 10),
                                                        style={"color": "tab:red"})]),
            Panel("pacing gain", [Line("pacing gain", run.flow["pacing_gain"][0], style={"color": "tab:purple"})],
                  step=True, ymax=3.0),
            Panel("retransmissions per 10 ms", [Line("retransmitted", run.flow["retransmits"][0],
                                                     style={"color": "tab:orange"})], integer=True),
        ]
        spans = [(a, b, "lt_bw" if i == 0 else "") for i, (a, b) in enumerate(pins)]
        time_panels(fig_dir / "policer.png", f"One BBR flow, {RATE_MBPS} Mbit/s, {RTT_MS} ms, policed to {POLICER_MBPS} "
                                             f"Mbit/s, {BURST} bucket (seed {seeds[0]}); shaded: pinned to lt_bw", t,
                    panels, xlim=(0.0, min(dur, 20.0)), spans=spans, height=2.0)
        rep.figures.append(Figure("policer.png", "the first 20 s: Startup learns the link rate from the full bucket, "
                                                 "the gain cycle loses packets at the policed rate, and lt_bw pins the "
                                                 "rate (shaded)"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="bbr-policer",
    figure="Sec. \"Token-Bucket Policers\"",
    summary="one BBR flow behind a 10 Mbit/s token-bucket policer on 100 Mbit/s: Startup, policed rate, lt_bw model",
    runs=runs,
    analyse=analyse,
)
