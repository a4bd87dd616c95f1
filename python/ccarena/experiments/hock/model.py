"""hock-model: the slides' "simplified example with two flows" (L67-L80):
two BBR flows on a 100 Mbit/s bottleneck, each at about half of it once
Startup and Drain are done; does their data in flight keep growing?

Slides (L67): "Simplified example with two flows: Bottleneck 100Mbit/s,
fully utilized; Each flows sends with 50Mbit/s initially"; (L72) "Flow
probes and actually gets higher delivery rate, although bottleneck fully
utilized! Windowed maximum filter keeps send rate too high"; (L79)
"Rate-based approach: amount of inflight data steadily increases;
Bottleneck becomes overloaded". The slides' RTT (20 ms) and large buffer
(160 ms, 8 BDP); BBR as Linux 4.9 ran it. Claims: claims.toml; this module
measures them per seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .. import traces, variants
from ..common import key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

RATE_MBPS = 100
FLOWS = 2
#: From the end of Startup and Drain (well under 1 s at 20 ms) to the first
#: ProbeRTT (10 s after the first RTprop sample), in 1-s steps.
STEPS_S = tuple(range(1, 10))
DURATION_S = 10.0
INTERVAL = "10ms"
COLUMNS = ("inflight", "cwnd", "cc_mode", "bw_estimate_mbps")


def _doc(seed: int) -> dict:
    return variants.scenario([variants.flow(paper.BBR, paper.RTT_MS, count=FLOWS)], seed=seed, duration=DURATION_S,
                             rate=f"{RATE_MBPS}Mbit", buffer=paper.buffer_of(paper.LARGE_MS, RATE_MBPS),
                             interval=INTERVAL)


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed), _doc(seed), COLUMNS, ("queue_delay_ms",)) for seed in paper.seeds(quick)]


def per_second(run: Outcome, values: np.ndarray) -> list[float]:
    """Means over each 1-s step of STEPS_S."""
    return [float(np.mean(values[traces.window(run.t_s, a, a + 1)])) for a in STEPS_S]


#: The climb is measured in this many equal parts, from both flows' first
#: ProbeBW sample to the first sample in which both are cwnd-limited.
CLIMB_PARTS = 4


def climb(run: Outcome, bdp: float) -> list[float]:
    """The two flows' summed in-flight (BDPs of the link) averaged over each
    of CLIMB_PARTS equal parts of their climb: from the first sample with
    both in ProbeBW (Drain done, each sending at about half the link, the
    slides' starting point, L67) to the first in which both are
    cwnd-limited (in-flight within 2 packets of cwnd: the cap, L84). NaN
    where the run shows no such climb."""
    f = run.flow
    probe_bw = (f["cc_mode"] == traces.PROBE_BW).all(axis=0)
    if not probe_bw.any():
        return [float("nan")] * CLIMB_PARTS
    start = int(np.argmax(probe_bw))
    capped = traces.cwnd_limited(f["cwnd"][0], f["inflight"][0]) & traces.cwnd_limited(f["cwnd"][1], f["inflight"][1])
    capped[:start] = False
    end = int(np.argmax(capped))
    if not capped.any() or end - start < CLIMB_PARTS:
        return [float("nan")] * CLIMB_PARTS
    total = f["inflight"].sum(axis=0) / bdp
    edges = np.linspace(start, end, CLIMB_PARTS + 1).round().astype(int)
    return [float(total[a:b].mean()) for a, b in zip(edges, edges[1:])]


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds)
    bdp = paper.bdp_packets(paper.RTT_MS, RATE_MBPS)
    inflight = [per_second(r, r.flow["inflight"].sum(axis=0) / bdp) for r in per]
    estimate = [per_second(r, r.flow["bw_estimate_mbps"].sum(axis=0) / RATE_MBPS) for r in per]
    queue = [per_second(r, r.link["queue_delay_ms"]) for r in per]
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"Two {paper.LABEL[paper.BBR.name]} flows, {RATE_MBPS} Mbit/s, {paper.RTT_MS} ms, a {paper.LARGE_MS:g}-ms "
        f"buffer, starting together, {DURATION_S:g} s (up to the first ProbeRTT), telemetry every {INTERVAL}; the "
        "two flows' data in flight summed, in BDPs of the link, and their bandwidth estimates summed, over the link "
        f"rate, averaged over each second from {STEPS_S[0]} s to {STEPS_S[-1] + 1} s.",
        f"The claim's steps: the summed in-flight over each of {CLIMB_PARTS} equal parts of the climb from both "
        "flows' first ProbeBW sample (Drain done, each at about half the link, the slides' starting point) to the "
        "first sample in which both are cwnd-limited (in flight within 2 packets of cwnd: the cap the slides' "
        "next claim says BBR then operates at, L84).",
    ]
    climbs = [climb(r, bdp) for r in per]
    members = {f"part {i + 1}": [c[i] for c in climbs] for i in range(CLIMB_PARTS)}
    for i, a in enumerate(STEPS_S):
        rep.numbers[f"bbr.inflight_bdp.{a}s"] = mean([x[i] for x in inflight])
        rep.numbers[f"bbr.estimates_over_link.{a}s"] = mean([x[i] for x in estimate])
    rep.numbers["bbr.queue_delay_ms"] = mean([mean(q) for q in queue])
    rep.measured["model.inflight-increases"] = Measured(
        members=members,
        note=f"the climb ends at the cwnd cap (2 x estimate x RTprop), which then holds: in flight "
             f"{mean([x[0] for x in inflight]):.2f} BDP in the first second, {mean([x[-1] for x in inflight]):.2f} "
             f"in the last; the summed bandwidth estimate {mean([x[0] for x in estimate]):.2f}x and "
             f"{mean([x[-1] for x in estimate]):.2f}x the link.")
    rep.measured["model.overloaded"] = Measured([mean(q) for q in queue])
    rows = [[f"{a}-{a + 1}", f"{mean([x[i] for x in inflight]):.2f}", f"{mean([x[i] for x in estimate]):.2f}",
             f"{mean([q[i] for q in queue]):.1f}"] for i, a in enumerate(STEPS_S)]
    rep.sections.append(("Per second", markdown_table(
        ["time (s)", "in flight (BDP, both flows)", "bandwidth estimates / link", "queueing delay (ms)"], rows)
        + "\n\nMeans over seeds."))
    if fig_dir is not None:
        run = per[0]
        panels = [
            Panel("in flight (BDP)", [Line(f"flow {i}", run.flow["inflight"][i] / bdp) for i in range(FLOWS)]
                  + [Line("both", run.flow["inflight"].sum(axis=0) / bdp, style={"color": "black"})]),
            Panel("bandwidth estimate (Mbit/s)", [Line(f"flow {i}", run.flow["bw_estimate_mbps"][i])
                                                  for i in range(FLOWS)]),
            Panel("queueing delay (ms)", [Line("queue", run.link["queue_delay_ms"], style={"color": "gray"})]),
        ]
        time_panels(fig_dir / "model.png", f"Two BBR flows, {RATE_MBPS} Mbit/s, {paper.RTT_MS} ms (seed {seeds[0]})",
                    run.t_s, panels, xlim=(0.0, DURATION_S), height=2.0)
        rep.figures.append(Figure("model.png", "the slides' two-flow example: data in flight, bandwidth estimates, "
                                               "queue"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-model",
    figure="two-flow model (L67-L80)",
    summary="two BBR flows on 100 Mbit/s, 20 ms, 160-ms buffer, up to the first ProbeRTT: in flight per second",
    runs=runs,
    analyse=analyse,
)
