"""bbr-probe-rtt: what ProbeRTT costs one BBR flow, on the 10 Mbit/s,
40 ms path of Figs. 2-5, over a minute (six 10-s RTprop windows).

Paper (L213): "BBR was designed to spend the vast majority of its time
(about 98 percent) in ProbeBW and the rest in ProbeRTT ... ProbeRTT lasts
long enough (at least 200 ms) ... while still being short enough to bound
the performance penalty of ProbeRTT's cwnd capping to roughly 2 percent
(200 ms/10 seconds)." The paper has no figure for it. Claims:
claims.toml ("about 98 percent" and "roughly 2 percent" judged on the
paper's own arithmetic, 200 ms / 10 s, with no spread: the paper states
none); this module measures them per seed.
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

DURATION_S = 65.0
QUICK_DURATION_S = 30.0
#: After Startup and Drain (a few hundred ms here), from the first ProbeBW
#: cycle on; six RTprop windows of 10 s fit in 5-65 s.
STEADY_FROM_S = 5.0
INTERVAL = "10ms"
COLUMNS = ("goodput_mbps", "cc_mode", "cwnd")


def duration_s(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def runs(quick: bool) -> list[RunSpec]:
    dur = duration_s(quick)
    return [RunSpec(key(paper.BBR.name, seed),
                    paper.scenario([paper.flow(paper.BBR, paper.LAB_RTT_MS)], seed=seed, duration=dur,
                                   rate=f"{paper.LAB_RATE_MBPS}Mbit", buffer=paper.buffer(paper.BUFFER_BDP),
                                   window=(STEADY_FROM_S, dur), interval=INTERVAL),
                    COLUMNS)
            for seed in paper.seeds(quick)]


def measure(run: Outcome, dur: float) -> dict[str, float]:
    t = run.t_s
    mode = run.flow["cc_mode"][0]
    steady = traces.window(t, STEADY_FROM_S, dur)
    probes = [(a, b) for a, b in traces.episodes(t, mode == traces.PROBE_RTT) if a >= STEADY_FROM_S]
    return {
        "probe_bw": traces.fraction(mode == traces.PROBE_BW, steady),
        "probe_rtt": traces.fraction(mode == traces.PROBE_RTT, steady),
        "penalty": 1.0 - run.goodput(0) / paper.payload_mbps(paper.LAB_RATE_MBPS),
        "probes": float(len(probes)),
        "probe_ms": 1e3 * mean([b - a for a, b in probes]) if probes else float("nan"),
        "interval_s": float(np.mean(np.diff([a for a, _ in probes]))) if len(probes) > 1 else float("nan"),
    }


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    dur = duration_s(quick)
    per = runs_of(outcomes, paper.BBR.name, seeds)
    m = [measure(r, dur) for r in per]
    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One BBR flow, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms (Figs. 2-5's path), buffer "
        f"{paper.BUFFER_BDP:g} BDP, {dur:g} s, telemetry every {INTERVAL}; measured over {STEADY_FROM_S:g}-{dur:g} s "
        "(after Startup and Drain). Time in a state: the share of 10-ms samples in it. ProbeRTT's penalty: the "
        "goodput the flow does not deliver, 1 - goodput / the link's payload rate, over the same window (a lone "
        "BBR flow with a buffer this deep loses no packet, so ProbeRTT is the only cost).",
    ]
    for name in m[0]:
        rep.numbers[f"bbr.{name}"] = mean([x[name] for x in m])
    detail = (f"{mean([x['probes'] for x in m]):.1f} ProbeRTTs per run, {mean([x['probe_ms'] for x in m]):.0f} ms "
              f"each, every {mean([x['interval_s'] for x in m]):.2f} s: ProbeRTT lasts 200 ms after in-flight first "
              "falls to 4 packets plus the round it ends on (cc/bbr.c, bbr_check_probe_rtt_done), so its share is "
              "(drain + 200 ms + a round) / (10 s + that), not 200 ms / 10 s.")
    rep.measured["probe-rtt.probe-bw-share"] = Measured([x["probe_bw"] for x in m], note=detail)
    rep.measured["probe-rtt.penalty"] = Measured([x["penalty"] for x in m], note=detail)
    rows = [[str(s), f"{100 * x['probe_bw']:.2f}%", f"{100 * x['probe_rtt']:.2f}%", f"{100 * x['penalty']:.2f}%",
             f"{x['probes']:.0f}", f"{x['probe_ms']:.0f}", f"{x['interval_s']:.2f}"] for s, x in zip(seeds, m)]
    rep.sections.append(("Per seed", markdown_table(
        ["seed", "time in ProbeBW", "time in ProbeRTT", "goodput not delivered", "ProbeRTTs", "ms each",
         "s between"], rows)))
    if fig_dir is not None:
        run = per[0]
        t = run.t_s
        probes = traces.episodes(t, run.flow["cc_mode"][0] == traces.PROBE_RTT)
        panels = [
            Panel("goodput (Mbit/s, 0.1 s mean)", [Line("goodput", traces.trailing_mean(run.flow["goodput_mbps"][0], 10),
                                                        style={"color": "tab:red"})]),
            Panel("cwnd (packets)", [Line("cwnd", run.flow["cwnd"][0], style={"color": "tab:blue"})], logy=True),
        ]
        time_panels(fig_dir / "probe_rtt.png", f"One BBR flow, {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms "
                                               f"(seed {seeds[0]}); shaded: ProbeRTT", t, panels, xlim=(0.0, dur),
                    spans=[(a, b, "ProbeRTT" if i == 0 else "") for i, (a, b) in enumerate(probes)], height=2.0)
        rep.figures.append(Figure("probe_rtt.png", "ProbeRTT every ~10 s: cwnd to 4 packets for ~200 ms, and the "
                                                   "goodput dip it costs"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="bbr-probe-rtt",
    figure="Sec. \"ProbeRTT\" (L213)",
    summary="one BBR flow for a minute: time in ProbeBW and ProbeRTT, and the goodput ProbeRTT costs",
    runs=runs,
    analyse=analyse,
)
