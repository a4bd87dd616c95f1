"""hock-large-buffer: two BBR flows of equal RTT in the large buffer.

Slides (L107-L109): "Different RTTs, Two Flows - Large buffer: 2 Flows,
same RTT_min: RTT is doubled -> BBR queues 1 bdp"; L179-L182 (backup): "1
Gbit/s, 20ms RTT_min: RTT is increased to 40ms -> BBR operates at
inflight cap of 2bdp"; L82-L84: "Large buffer (>= bdp): BBR operates at
its inflight cap (1 to 1.5bdp queued!)". The three claims are in
claims.toml.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from .. import traces
from ..common import key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

FLOWS = 2
COLUMNS = ("rtt_ms",) + paper.OWN_BDP_COLUMNS


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed),
                    paper.scenario([paper.flow(paper.BBR, paper.RTT_MS, count=FLOWS)], seed=seed, quick=quick,
                                   buffer_ms=paper.LARGE_MS), COLUMNS)
            for seed in paper.seeds(quick)]


def rtt_ratio(run: Outcome) -> float:
    return mean([float(f["rtt_mean_ms"]) for f in run.flows]) / paper.RTT_MS


def queue_bdp(run: Outcome) -> float:
    return run.queue_delay_mean_ms / paper.RTT_MS


def inflight_bdp(run: Outcome, lo: float) -> float:
    """The flows' summed in-flight, mean over the window, in link BDPs."""
    total = np.nansum(run.flow["inflight"], axis=0)
    return traces.mean_over(run.t_s, total, lo, float(run.t_s[-1])) / paper.bdp_packets()


def cwnd_limited(run: Outcome, lo: float) -> float:
    """Share of the window's samples in which the flows are cwnd-limited (mean over flows)."""
    sel = run.t_s > lo
    return mean([traces.fraction(traces.cwnd_limited(run.flow["cwnd"][i], run.flow["inflight"][i]), sel)
                 for i in range(len(run.flows))])


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    lo = paper.window_from_s(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds)
    rtt = [rtt_ratio(r) for r in per]
    queue = [queue_bdp(r) for r in per]
    infl = [inflight_bdp(r, lo) for r in per]
    limited = [cwnd_limited(r, lo) for r in per]
    drops = [float(r.summary["drops"]) for r in per]
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"{FLOWS} BBR flows, both {paper.RTT_MS} ms, {paper.LARGE_MS}-ms buffer at {paper.RATE_MBPS / 1000:g} Gbit/s "
        f"(L181), {paper.duration_s(quick):g} s, measured from {lo:g} s. RTT: the flows' mean RTT over the window "
        "against the base RTT; queue: the mean queueing delay in base RTTs (= BDPs); in-flight at the cap: each "
        "flow's in-flight over its own BDP (as in hock-rtt); the flows' summed in-flight (telemetry every 100 ms, "
        "mean over the window, in BDPs of the link) is shown per seed.")
    own = {f"flow {i}": [paper.over_own_bdp(r, i, paper.RTT_MS, lo) for r in per] for i in range(FLOWS)}
    rep.numbers.update({"bbr.rtt_ratio": mean(rtt), "bbr.queue_bdp": mean(queue), "bbr.inflight_bdp": mean(infl),
                        "bbr.cwnd_limited": mean(limited)})
    why = (f"the flows are cwnd-limited in {100 * mean(limited):.0f}% of the samples, with {mean(infl):.2f} link "
           f"BDP in flight together and {mean(queue):.2f} BDP queued; {mean(drops):.0f} drops.")
    rep.measured["large-buffer.rtt"] = Measured(rtt, note=why)
    rep.measured["large-buffer.queue"] = Measured(queue, note=why)
    rep.measured["large-buffer.inflight-cap"] = Measured(members=own, note=why)
    rows = [[str(s), f"{r:.2f}", f"{q:.2f}", f"{i:.2f}", f"{100 * c:.0f}%", f"{d:.0f}"]
            for s, r, q, i, c, d in zip(seeds, rtt, queue, infl, limited, drops)]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "RTT / base", "queue (BDP)", "in-flight, both flows (link BDP)", "cwnd-limited", "drops"], rows)))
    if fig_dir is not None:
        run = per[0]
        t = run.t_s
        time_panels(
            fig_dir / "large_buffer.png",
            f"{FLOWS} BBR flows (Linux 4.9), {paper.RTT_MS} ms, {paper.LARGE_MS}-ms buffer, "
            f"{paper.RATE_MBPS / 1000:g} Gbit/s (seed {seeds[0]})", t,
            [Panel("RTT (ms)", [Line(f"flow {i}", traces.rtt(run, i)) for i in range(FLOWS)]
                   + [Line("base RTT", np.full(len(t), float(paper.RTT_MS)), style={"color": "gray", "ls": ":"}),
                      Line("2 x base RTT", np.full(len(t), 2.0 * paper.RTT_MS), style={"color": "gray", "ls": "--"})]),
             Panel("in-flight / own BDP", [Line(f"flow {i}", paper.in_own_bdps(run, i, paper.RTT_MS))
                                           for i in range(FLOWS)]
                   + [Line("2 own BDP: the cwnd cap (2 x BtlBw x RTprop)", np.full(len(t), 2.0),
                           style={"color": "gray", "ls": "--"})], ymax=6.0)],
            spans=[(lo, float(t[-1]), "window")])
        rep.figures.append(Figure("large_buffer.png", "RTT per flow, and each flow's in-flight over its own BDP (its "
                                                      "bandwidth estimate x base RTT) against its cwnd cap of 2"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-large-buffer",
    figure="two flows, large buffer",
    summary="two BBR flows of equal RTT, 1 Gbit/s, 20 ms, 160-ms buffer: RTT doubled, 1 BDP queued, 2 BDP in flight",
    runs=runs,
    analyse=analyse,
)
