"""bbq-fig7 and bbq-fig7-with-bbq: the latency-cheating race.

Paper, Sec. III-C: "we initiated two competing BBR flows with the true RTT
of 5 ms. The two flows alternately cheat. Each time a flow cheats, it
delays the inbound traffic and inflates its RTT to 2x of the other. ...
Because a flow can always delay its traffic to steal more bandwidth from
the other, the two keep doing so, causing the RTT growing exponentially."
(Fig. 7: 100 Mbit/s, goodput over time with the RTTs annotated.)

Protocol (the paper gives no timing; ours): both flows honest (5 ms) for
the first phase; then at the start of each following phase the flow that
is behind inflates its RTT to twice the other's: A 10 ms, B 20 ms, A 40 ms,
B 80 ms, A 160 ms. A phase lasts 40 s, four BBR min-RTT windows, so a
cheater's new RTT is in its model well before the phase ends and the
slower long-RTT dynamics have settled; each phase is judged on its last
10 s.

bbq-fig7-with-bbq runs the same race with BBQ (beyond the paper): does
capping the probe at alpha remove the incentive to cheat?
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import paper
from .paper import LABEL
from .. import compare, traces
from ..common import key, markdown_table
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec, Variant

TRUE_RTT_MS = 5
PHASE_S = 40
CHEATS = 5
QUICK_PHASE_S = 12
QUICK_CHEATS = 2
#: Goodput is judged over the last JUDGE_S of each phase.
JUDGE_S = 10
QUICK_JUDGE_S = 6


@dataclass(frozen=True)
class Phase:
    start_s: float
    end_s: float
    rtt_ms: tuple[float, float]  # (A, B) during the phase
    cheater: int | None  # the flow that just inflated its RTT (None: honest start)


def phases(quick: bool) -> list[Phase]:
    length = QUICK_PHASE_S if quick else PHASE_S
    cheats = QUICK_CHEATS if quick else CHEATS
    rtt = [float(TRUE_RTT_MS), float(TRUE_RTT_MS)]
    out = [Phase(0.0, float(length), (rtt[0], rtt[1]), None)]
    for k in range(cheats):
        cheater = k % 2  # A (flow 0) first
        rtt[cheater] = 2 * rtt[1 - cheater]
        out.append(Phase(float(length * (k + 1)), float(length * (k + 2)), (rtt[0], rtt[1]), cheater))
    return out


def _scenario(variant: Variant, quick: bool) -> dict:
    ph = phases(quick)
    flows = []
    for i in (0, 1):
        schedule = [{"at": f"{p.start_s:g}s", "rtt": f"{p.rtt_ms[i]:g}ms"} for p in ph[1:] if p.cheater == i]
        flows.append(paper.flow(variant, TRUE_RTT_MS, rtt_schedule=schedule))
    return paper.scenario(flows, quick=quick, seed=paper.SEEDS[0], duration=ph[-1].end_s, window=(0, ph[-1].end_s))


def _runs_for(variants: tuple[Variant, ...]):
    def runs(quick: bool) -> list[RunSpec]:
        return [RunSpec(key(v.name, paper.SEEDS[0]), _scenario(v, quick), ("goodput_mbps", "srtt_ms"))
                for v in variants]

    return runs


def phase_shares(run: Outcome, quick: bool) -> list[tuple[Phase, float, float]]:
    """(phase, goodput A, goodput B) over the last JUDGE_S of each phase."""
    judge = QUICK_JUDGE_S if quick else JUDGE_S
    g = run.flow["goodput_mbps"]
    return [(p, traces.mean_over(run.t_s, g[0], p.end_s - judge, p.end_s),
             traces.mean_over(run.t_s, g[1], p.end_s - judge, p.end_s)) for p in phases(quick)]


def _race_numbers(run: Outcome, quick: bool) -> tuple[list[list[str]], dict[str, float], list]:
    """Per-phase table rows, the race's numbers, and the per-phase goodputs."""
    ph = phase_shares(run, quick)
    rows = []
    numbers: dict[str, float] = {}
    wins = 0
    gains = []
    prev_share = {0: 0.5, 1: 0.5}
    for p, ga, gb in ph:
        total = ga + gb
        shares = (ga / total, gb / total) if total > 0 else (float("nan"), float("nan"))
        who = "-" if p.cheater is None else "AB"[p.cheater]
        cheater_share = float("nan") if p.cheater is None else shares[p.cheater]
        if p.cheater is not None:
            wins += int(cheater_share > 0.5)
            gains.append(cheater_share - prev_share[p.cheater])
            numbers[f"phase{len(gains)}.cheater_share"] = cheater_share
        prev_share = {0: shares[0], 1: shares[1]}
        rows.append([f"{p.start_s:g}-{p.end_s:g}", f"{p.rtt_ms[0]:g} / {p.rtt_ms[1]:g}", who,
                     f"{ga:.1f} / {gb:.1f}", "-" if p.cheater is None else f"{100 * cheater_share:.1f}%"])
    numbers["cheats"] = len(ph) - 1
    numbers["cheats_won"] = wins
    numbers["mean_gain_from_cheating"] = float(np.mean(gains)) if gains else float("nan")
    return rows, numbers, ph


def _setup(quick: bool) -> list[str]:
    judge = QUICK_JUDGE_S if quick else JUDGE_S
    return [
        f"Two flows (both BBR, or both BBQ) with a true RTT of {TRUE_RTT_MS} ms on 100 Mbit/s, "
        "2 MB droptail buffer, seed 1. "
        f"Phases of {QUICK_PHASE_S if quick else PHASE_S} s: both honest, then the flow behind inflates its "
        "RTT to 2x the other's (A first). The RTT change is a per-flow rtt_schedule (split evenly between "
        "the data and ACK directions, as a receiver delaying its ACKs and the path would).",
        f"Each phase is judged on its last {judge} s (the paper gives no timing; 40 s phases leave four "
        "10-s min-RTT filter windows for the cheat to enter the cheater's model and the flows to settle).",
    ]


HEADER = ["phase (s)", "RTT A / B (ms)", "cheater", "goodput A / B (Mbit/s)", "cheater's share"]


def _analyse_bbr(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    run = outcomes[key("bbr", paper.SEEDS[0])]
    rows, numbers, ph = _race_numbers(run, quick)
    rep = Report(setup=_setup(quick), numbers=numbers)
    rep.sections.append(("Per phase", markdown_table(HEADER, rows)))
    wins, cheats = int(numbers["cheats_won"]), int(numbers["cheats"])
    rep.comparisons += [
        compare.claim("every cheat wins the cheater the larger share", "yes (\"can always ... steal more\")",
                      f"{wins} of {cheats}", wins == cheats, reason=_lost_reason(run, ph)),
        compare.ours_only("mean share gained by a cheat", f"{100 * numbers['mean_gain_from_cheating']:+.1f} points"),
    ]
    if fig_dir is not None:
        _plot(run, "bbr", fig_dir / "fig7.png", quick)
        rep.figures.append(Figure("fig7.png", "the paper's Fig. 7: goodput over time (0.5 s mean) and each flow's "
                                              "RTT; dashed lines mark each cheat and its new RTT"))
    return rep


def _analyse_bbq(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    rep = Report(setup=_setup(quick))
    per = {}
    for cc in ("bbr", "bbq"):
        rows, numbers, ph = _race_numbers(outcomes[key(cc, paper.SEEDS[0])], quick)
        per[cc] = numbers
        rep.numbers.update({f"{cc}.{k}": v for k, v in numbers.items()})
        rep.sections.append((f"Per phase, {LABEL[cc]}", markdown_table(HEADER, rows)))
    for cc in ("bbr", "bbq"):
        rep.comparisons += [
            compare.ours_only(f"{LABEL[cc]}: cheats that win the cheater the larger share",
                              f"{int(per[cc]['cheats_won'])} of {int(per[cc]['cheats'])}"),
            compare.ours_only(f"{LABEL[cc]}: mean share gained by a cheat",
                              f"{100 * per[cc]['mean_gain_from_cheating']:+.1f} points"),
        ]
    removed = per["bbq"]["mean_gain_from_cheating"] < 0.5 * per["bbr"]["mean_gain_from_cheating"]
    rep.numbers["incentive_removed"] = float(removed)
    rep.sections.insert(0, ("Answer", (
        f"With BBR a cheat gains the cheater {100 * per['bbr']['mean_gain_from_cheating']:+.1f} points of share on "
        f"average and wins {int(per['bbr']['cheats_won'])} of {int(per['bbr']['cheats'])} phases; with BBQ "
        f"{100 * per['bbq']['mean_gain_from_cheating']:+.1f} points and {int(per['bbq']['cheats_won'])} of "
        f"{int(per['bbq']['cheats'])}. " + (
            "Capping the probe removes most of the incentive to inflate the RTT." if removed else
            "Capping the probe does not remove the incentive: inflating the RTT still pays under BBQ.")
    )))
    if fig_dir is not None:
        _plot(outcomes[key("bbq", paper.SEEDS[0])], "bbq", fig_dir / "fig7-bbq.png", quick)
        _plot(outcomes[key("bbr", paper.SEEDS[0])], "bbr", fig_dir / "fig7-bbr.png", quick)
        rep.figures += [
            Figure("fig7-bbq.png", "the race with BBQ: goodput (0.5 s mean) and RTTs; dashed lines mark each cheat"),
            Figure("fig7-bbr.png", "the same race with BBR (the paper's Fig. 7), for comparison"),
        ]
    return rep


def base_rtt(t: np.ndarray, flow: int, quick: bool) -> np.ndarray:
    """The flow's (possibly inflated) base RTT at each sample, ms."""
    out = np.full(len(t), float(TRUE_RTT_MS))
    for p in phases(quick):
        out[t > p.start_s] = p.rtt_ms[flow]
    return out


def _plot(run: Outcome, cc: str, path: Path, quick: bool) -> None:
    t = run.t_s
    g = np.vstack([traces.trailing_mean(run.flow["goodput_mbps"][i], 5) for i in (0, 1)])
    marks = [(p.start_s, f"{'AB'[p.cheater]}: {p.rtt_ms[p.cheater]:g} ms") for p in phases(quick)[1:]
             if p.cheater is not None]
    time_panels(
        path,
        f"{LABEL[cc]}: two {TRUE_RTT_MS} ms flows alternately inflating their RTT to 2x the other's (100 Mbit/s)",
        t,
        [Panel("goodput (Mbit/s, 0.5 s mean)", [Line("flow A", g[0]), Line("flow B", g[1])]),
         Panel("RTT (ms): smoothed (solid), base (dotted)",
               [Line("flow A", run.flow["srtt_ms"][0], style={"color": "tab:blue"}),
                Line("flow B", run.flow["srtt_ms"][1], style={"color": "tab:orange"}),
                Line("", base_rtt(t, 0, quick), style={"color": "tab:blue", "linestyle": ":"}),
                Line("", base_rtt(t, 1, quick), style={"color": "tab:orange", "linestyle": ":"})], logy=True)],
        marks=marks,
    )


def _lost_reason(run: Outcome, ph: list[tuple[Phase, float, float]]) -> str:
    """For each cheat that did not win: what the cheater got, and whether it
    was still gaining when the phase ended."""
    parts = []
    for p, ga, gb in ph:
        if p.cheater is None or (ga, gb)[p.cheater] > (ga, gb)[1 - p.cheater]:
            continue
        g = run.flow["goodput_mbps"][p.cheater]
        start = traces.mean_over(run.t_s, g, p.end_s - 12, p.end_s - 10)
        end = traces.mean_over(run.t_s, g, p.end_s - 2, p.end_s)
        parts.append(
            f"the cheat at {p.start_s:g} s (A/B at {p.rtt_ms[0]:g}/{p.rtt_ms[1]:g} ms) got the cheater "
            f"{(ga, gb)[p.cheater]:.1f} of {ga + gb:.1f} Mbit/s over the phase's last 10 s, but its goodput was still "
            f"rising ({start:.1f} -> {end:.1f} Mbit/s from the start to the end of that window): with RTTs of "
            "80-160 ms the exchange of share takes longer than the phase"
        )
    return "; ".join(parts) + "." if parts else ""


EXPERIMENT = Experiment(
    name="bbq-fig7",
    figure="Fig. 7",
    summary="latency-cheating race: two 5 ms BBR flows alternately inflate their RTT to 2x the other's",
    runs=_runs_for((paper.BBR,)),
    analyse=_analyse_bbr,
)

EXPERIMENT_BBQ = Experiment(
    name="bbq-fig7-with-bbq",
    figure="beyond the paper (Fig. 7 with BBQ)",
    summary="the same cheating race with BBQ: does capping the probe remove the incentive to cheat?",
    runs=_runs_for((paper.BBR, paper.BBQ)),
    analyse=_analyse_bbq,
)
