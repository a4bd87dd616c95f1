"""bbr-fig6: several BBR flows with staggered starts on a 100 Mbit/s,
10 ms bottleneck converging to a fair share.

Paper (L131): "Figure 6 shows how individual throughputs for several BBR
flows sharing a 100-Mbps/10-ms bottleneck converge to a fair share. The
downward facing triangular structures are connection ProbeRTT states
whose self-synchronization accelerates final convergence." L135: "ProbeBW
gain cycling (figure 2) causes bigger flows to yield bandwidth to smaller
flows, resulting in each learning its fair share. This happens fairly
quickly (a few ProbeBW cycles), though unfairness can persist when late
starters overestimate RTprop as a result of starting when other flows
have (temporarily) created a queue." L137: "Large flows entering ProbeRTT
drain many packets from the queue, so several flows see a new RTprop (new
minimum RTT). This makes their RTprop estimates expire at the same time,
so they enter ProbeRTT together". Claims: claims.toml (ProbeRTT together
is judged; "a fair share" and "a few ProbeBW cycles" have no number and
are shown); this module measures them per seed.
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

RATE_MBPS = 100
RTT_MS = 10
#: "Several": five flows, one starting every 2 s (the paper gives neither).
FLOWS = 5
STAGGER_S = 2.0
DURATION_S = 60.0
QUICK_DURATION_S = 30.0
INTERVAL = "10ms"
COLUMNS = ("goodput_mbps", "rtt_ms", "cc_mode", "pacing_gain")
#: Jain's index is taken on each flow's goodput per second.
BIN_S = 1.0
#: The metric of "until the flows stay fair" (claims.toml, fig6.few-cycles):
#: rates within the gain cycle's own +-1/4 of each other (L207: 5/4 and
#: 3/4); Jain's index of rates half at 5/4 and half at 3/4 of the mean is
#: 1 / (1 + (1/4)^2). The paper gives no number for "a fair share"; the
#: claim is shown, not judged.
FAIR_JAIN = 1 / (1 + 0.25 ** 2)
#: ProbeRTT's "downward facing triangular structures" (L131) are not
#: unfairness: the seconds within this long after any flow's ProbeRTT
#: starts are left out when deciding whether the flows have converged.
TRANSIENT_S = 2.0
#: ProbeRTT period (L211: RTprop not updated "for more than 10 seconds").
PROBE_RTT_PERIOD_S = 10.0
#: "Together": ProbeRTT starts within its own 200 ms (L211, L213: long
#: enough for "overlapping ProbeRTT states").
TOGETHER_S = 0.2
#: The same with a 1-BDP buffer, where BBR loses packets (ours only).
SHALLOW_BDP = 1.0


def duration_s(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def last_start() -> float:
    return (FLOWS - 1) * STAGGER_S


def _doc(seed: int, quick: bool, buffer_bdp: float) -> dict:
    flows = [paper.flow(paper.BBR, RTT_MS, start=f"{i * STAGGER_S:g}s") for i in range(FLOWS)]
    return paper.scenario(flows, seed=seed, duration=duration_s(quick), rate=f"{RATE_MBPS}Mbit",
                          buffer=paper.buffer(buffer_bdp), window=(last_start(), duration_s(quick)),
                          interval=INTERVAL)


def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(paper.BBR.name, seed, buffer=f"{b:g}"), _doc(seed, quick, b), COLUMNS)
            for b in (paper.BUFFER_BDP, SHALLOW_BDP) for seed in paper.seeds(quick)]


def jain_series(run: Outcome) -> tuple[np.ndarray, np.ndarray]:
    """Jain's index of the flows' goodput per BIN_S, for the bins after the last start."""
    t, g = traces.binned(run, "goodput_mbps", BIN_S)
    sel = t > last_start() + 1e-9
    return t[sel], np.array([traces.jain(g[:, i]) for i in np.nonzero(sel)[0]])


def converged_at(run: Outcome, bar: float) -> float:
    """Seconds after the last start from which Jain's index (per second)
    stays at or above ``bar`` to the end, ProbeRTT transients aside; NaN
    if it never does."""
    t, j = jain_series(run)
    starts = [g[0] for g in probe_rtt_rounds(run)]
    transient = np.array([any(s < te and te - BIN_S < s + TRANSIENT_S for s in starts) for te in t], dtype=bool)
    below = np.nonzero(~(j >= bar) & ~transient)[0]
    if not len(below):
        return float(t[0] - BIN_S - last_start())
    if below[-1] == len(j) - 1:
        return math.nan
    return float(t[below[-1]] - last_start())


def probe_rtt_rounds(run: Outcome) -> list[list[float]]:
    """Groups of ProbeRTT start times (all flows) within TOGETHER_S of the first of the group."""
    starts = sorted(a for i in range(FLOWS) for a, _ in traces.episodes(run.t_s, run.flow["cc_mode"][i]
                                                                         == traces.PROBE_RTT))
    groups: list[list[float]] = []
    for a in starts:
        if groups and a - groups[-1][0] <= TOGETHER_S:
            groups[-1].append(a)
        else:
            groups.append([a])
    return groups


def first_joint(run: Outcome, flows: int = FLOWS) -> float:
    """Start of the first ProbeRTT at least ``flows`` flows enter together (NaN if none)."""
    return next((g[0] for g in probe_rtt_rounds(run) if len(g) >= flows), math.nan)


def first_rtprop(run: Outcome) -> list[float]:
    """Each flow's RTprop over its first 10 s (its first min-RTT window):
    the lowest RTT sample it takes then, ms."""
    return [float(np.nanmin(paper.rtt(run, i)[traces.window(run.t_s, i * STAGGER_S, i * STAGGER_S
                                                              + PROBE_RTT_PERIOD_S)])) for i in range(FLOWS)]


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    dur = duration_s(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds, buffer=f"{paper.BUFFER_BDP:g}")
    shallow = runs_of(outcomes, paper.BBR.name, seeds, buffer=f"{SHALLOW_BDP:g}")
    conv = [converged_at(r, FAIR_JAIN) for r in per]
    cycle = [mean([paper.cycle_s(r, i, last_start(), dur) for i in range(FLOWS)]) for r in per]
    conv_cycles = [c / cy for c, cy in zip(conv, cycle)]
    final = [float(np.mean(jain_series(r)[1][-10:])) for r in per]
    final_shallow = [float(np.mean(jain_series(r)[1][-10:])) for r in shallow]
    whole = [float(r.summary["jain"]) for r in per]
    joint = [first_joint(r) for r in per]
    # The first ProbeRTT several flows share (L137: "several flows see a new RTprop").
    shared = [first_joint(r, 2) for r in per]
    shared_n = [next(len(g) for g in probe_rtt_rounds(r) if g[0] == sh) if np.isfinite(sh) else 0
                for r, sh in zip(per, shared)]
    groups = [probe_rtt_rounds(r) for r in per]
    # After the first joint ProbeRTT: does every later one include all flows?
    after = [[g for g in gs if g[0] > jt] for gs, jt in zip(groups, joint)]
    # The share of them every flow enters together; a seed without a later one (a --quick run may end first)
    # has nothing to measure.
    together = [sum(len(g) >= FLOWS for g in gs) / len(gs) if gs else None for gs in after]
    spreads = [g[-1] - g[0] for gs in after for g in gs if len(g) >= FLOWS]
    rtprops = [first_rtprop(r) for r in per]
    drops = [float(r.summary["drops"]) for r in per]
    drops_shallow = [float(r.summary["drops"]) for r in shallow]
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"{FLOWS} BBR flows on {RATE_MBPS} Mbit/s, {RTT_MS} ms, starting {STAGGER_S:g} s apart (0-{last_start():g} s; "
        f"the paper gives neither the number nor the starts), {dur:g} s, telemetry every {INTERVAL}; buffer "
        f"{paper.BUFFER_BDP:g} BDP, and {SHALLOW_BDP:g} BDP as an unjudged comparison.",
        f"Jain's index is taken on the flows' goodput per {BIN_S:g} s after the last flow has started (traces.binned's "
        f"measure). The flows stay fair from the first second from which the index stays at or above {FAIR_JAIN:.3f} "
        "(that of flows whose rates differ by the gain cycle's own +-1/4, L207) to the end of the run, leaving out "
        f"the {TRANSIENT_S:g} s after each ProbeRTT (the \"downward facing triangular structures\" of L131), counted in "
        f"the flows' own mean gain cycles. ProbeRTTs are \"together\" when every flow starts one within "
        f"{1e3 * TOGETHER_S:.0f} ms (the ProbeRTT duration, L211) of the first.",
    ]
    for name, vals in (("converged_s", conv), ("converged_cycles", conv_cycles), ("final_jain", final),
                       ("whole_jain", whole), ("first_joint_probe_rtt_s", joint),
                       ("final_jain_1bdp", final_shallow), ("drops", drops)):
        rep.numbers[f"bbr.{name}"] = mean(vals)
    late = [max(rp[1:]) - rp[0] for rp in rtprops]
    rep.measured["fig6.fair-share"] = Measured(final, note=f"whole-window Jain's index {mean(whole):.3f}.")
    # Counted in whole BIN_S bins: one bin is BIN_S / cycle cycles.
    rep.measured["fig6.few-cycles"] = Measured(conv_cycles, note=_late_reason(conv, shared, shared_n, rtprops, cycle,
                                                                              drops),
                                               resolution=BIN_S / mean(cycle))
    measured_together = [x for x in together if x is not None]
    rep.measured["fig6.together"] = Measured(
        measured_together or [math.nan],
        note=(f"where every flow enters, their starts span at most {1e3 * max(spreads):.0f} ms; " if spreads else "")
        + f"the first ProbeRTT of all flows together starts at {mean(joint):.1f} s"
        + ("" if None not in together else f"; {together.count(None)} seed(s) have no later one before the run ends")
        + ".")
    rep.comparisons += [
        compare.ours_only(f"Jain's index per second, last 10 s, {SHALLOW_BDP:g}-BDP buffer",
                          f"{mean(final_shallow):.3f}", compare.spread(final_shallow, ".3f"),
                          note=f"{mean(drops_shallow):.0f} drops in the window against {mean(drops):.0f} at "
                               f"{paper.BUFFER_BDP:g} BDP: with losses the shares keep moving."),
    ]
    rows = [[str(s), f"{c:.1f}", f"{c / cy:.0f}", f"{jt:.1f}", f"{fi:.3f}", ", ".join(f"{x:.1f}" for x in rp)]
            for s, c, cy, jt, fi, rp in zip(seeds, conv, cycle, joint, final, rtprops)]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "fair after last start (s)", "in ProbeBW cycles", f"first ProbeRTT of all {FLOWS} flows (s)",
         "Jain, last 10 s",
         "RTprop over the first 10 s, flows 1-5 (ms)"], rows)))

    if fig_dir is not None:
        run = per[0]
        t, g = traces.binned(run, "goodput_mbps", 0.1)
        tj, j = jain_series(run)
        time_panels(
            fig_dir / "fig6.png", f"{FLOWS} BBR flows, {RATE_MBPS} Mbit/s, {RTT_MS} ms, starting {STAGGER_S:g} s apart "
                                  f"(seed {seeds[0]})", t,
            [Panel("goodput (Mbit/s, 0.1 s mean)", [Line(f"flow {i + 1}", g[i]) for i in range(FLOWS)]),
             Panel(f"Jain's index (per {BIN_S:g} s)", [Line("flows", j, t=tj, style={"color": "black"}),
                                                       Line(f"{FAIR_JAIN:.3f}: rates +-1/4 of each other",
                                                            np.full_like(tj, FAIR_JAIN), t=tj,
                                                            style={"color": "dimgray", "linestyle": ":"})],
                   ymin=0.4, ymax=1.02, legend_loc="lower right")],
            marks=[(g_[0], f"ProbeRTT ({len(g_)} flows)") for g_ in probe_rtt_rounds(run) if len(g_) >= 2], height=3.0,
        )
        rep.figures.append(Figure("fig6.png", "the paper's Fig. 6: per-flow goodput converging; dashed lines: "
                                              "ProbeRTTs several flows enter together"))
    return paper.finish(rep, quick)


def _late_reason(conv: list[float], shared: list[float], shared_n: list[int], rtprops: list[list[float]],
                 cycle: list[float], drops: list[float]) -> str:
    first = mean([rp[0] for rp in rtprops])
    later = [mean([rp[i] for rp in rtprops]) for i in range(1, FLOWS)]
    return (f"the flows stay fair from {last_start() + mean(conv):.1f} s ({mean(conv):.1f} s after the last start, "
            f"{mean(cycle) * 1e3:.0f}-ms cycles); the first ProbeRTT several flows (two or more) enter together comes "
            f"at {mean(shared):.1f} s ({min(shared_n)}-{max(shared_n)} of {FLOWS} flows; the per-seed table's "
            f"\"first ProbeRTT of all {FLOWS}\" counts only those every flow enters). Until then the late starters "
            f"overestimate RTprop, as L135 warns: over its first 10 s the first flow measures {first:.1f} ms, the "
            f"later ones {', '.join(f'{x:.1f}' for x in later)} ms (base {RTT_MS} ms), having started into the queue "
            f"the earlier flows' Startups built ({mean(drops):.0f} drops in the window), so their BDP estimates and "
            "cwnds are too large.")


EXPERIMENT = Experiment(
    name="bbr-fig6",
    figure="Fig. 6",
    summary=f"{FLOWS} BBR flows with staggered starts on 100 Mbit/s, 10 ms: convergence to a fair share, ProbeRTT sync",
    runs=runs,
    analyse=analyse,
)
