"""bbq-fig7 and bbq-fig7-with-bbq: the latency-cheating race.

Paper, Sec. III-C (L127): "we initiated two competing BBR flows with the true RTT
of 5 ms. The two flows alternately cheat. Each time a flow cheats, it
delays the inbound traffic and inflates its RTT to 2x of the other. ...
Because a flow can always delay its traffic to steal more bandwidth from
the other, the two keep doing so, causing the RTT growing exponentially."
(Fig. 7: 100 Mbit/s, goodput over time with the RTTs annotated.) The two
claims of that sentence are in claims.toml: every cheat gains the cheater
share (or, the other reading of "steal more", puts it ahead), and the race
goes on at every rung we run.

Protocol (the paper gives no timing; ours): both flows honest (5 ms) for
the first phase; then at the start of each following phase *the flow that
is behind* inflates its RTT to twice the other's: 10, 20, 40, 80, 160 ms.
A phase lasts PHASE_S = 120 s, twelve BBR min-RTT windows (60-s phases
left the 40-160 ms rungs still moving), and is judged on its last
JUDGE_S = 30 s; the report prints, per phase, how far the share
still moved between the two halves of that window (settling), and the
figures show the share over time.

Only the flow behind cheats. Scenarios are fixed before they run, so each
seed runs the race twice, A cheating first and B cheating first; the
honest first phase is the same in both (same seed, same events until the
first cheat), and the analysis keeps the run whose first cheater was
behind at the end of it. After that the alternation is what the rule
gives as long as every cheat wins: the cheater is then ahead and the other
flow behind. A cheat that does not win the cheater the larger share ends
the race for that seed: the flow behind already has twice the other's RTT,
so the paper's move ("2x of the other") gives it nothing more; the run's
later phases (where the flow ahead would move) are drawn faintly and not
counted.

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
from ..framework import MIN_SEEDS, Experiment, Figure, Outcome, Report, RunSpec, Variant
from ..verdict import Measured

TRUE_RTT_MS = 5
PHASE_S = 120
CHEATS = 5
QUICK_PHASE_S = 12
QUICK_CHEATS = 2
#: Goodput is judged over the last JUDGE_S of each phase.
JUDGE_S = 30
QUICK_JUDGE_S = 6
#: The paper's seed set (paper.SEEDS): framework.MIN_SEEDS seeds, the
#: fewest a share claim is judged over.
SEEDS = paper.SEEDS
assert len(SEEDS) >= MIN_SEEDS
#: A phase counts as settled when the share over its judged window is
#: within this much of the share over the JUDGE_S before it.
SETTLED = 0.03
#: Share-over-time smoothing in the figures (samples of 100 ms).
SMOOTH_N = 20


@dataclass(frozen=True)
class Phase:
    start_s: float
    end_s: float
    rtt_ms: tuple[float, float]  # (A, B) during the phase
    cheater: int | None  # the flow that just inflated its RTT (None: honest start)


#: The seeds of each point (variants.seeds).
seeds = paper.seeds


def phases(quick: bool, first: int = 0) -> list[Phase]:
    """The schedule with flow ``first`` (0 = A, 1 = B) cheating first and
    the two alternating."""
    length = QUICK_PHASE_S if quick else PHASE_S
    cheats = QUICK_CHEATS if quick else CHEATS
    rtt = [float(TRUE_RTT_MS), float(TRUE_RTT_MS)]
    out = [Phase(0.0, float(length), (rtt[0], rtt[1]), None)]
    for k in range(cheats):
        cheater = (first + k) % 2
        rtt[cheater] = 2 * rtt[1 - cheater]
        out.append(Phase(float(length * (k + 1)), float(length * (k + 2)), (rtt[0], rtt[1]), cheater))
    return out


def _scenario(variant: Variant, quick: bool, seed: int, first: int) -> dict:
    ph = phases(quick, first)
    flows = []
    for i in (0, 1):
        schedule = [{"at": f"{p.start_s:g}s", "rtt": f"{p.rtt_ms[i]:g}ms"} for p in ph[1:] if p.cheater == i]
        flows.append(paper.flow(variant, TRUE_RTT_MS, rtt_schedule=schedule))
    return paper.scenario(flows, quick=quick, seed=seed, duration=ph[-1].end_s, window=(0, ph[-1].end_s))


def _key(cc: str, seed: int, first: int) -> str:
    return key(cc, seed, first="AB"[first])


def _runs_for(variants: tuple[Variant, ...]):
    def runs(quick: bool) -> list[RunSpec]:
        return [RunSpec(_key(v.name, s, first), _scenario(v, quick, s, first), ("goodput_mbps", "srtt_ms"))
                for v in variants for s in seeds(quick) for first in (0, 1)]

    return runs


@dataclass(frozen=True)
class PhaseResult:
    phase: Phase
    goodput: tuple[float, float]  # A, B over the judged window (Mbit/s)
    share: tuple[float, float]  # A, B over the judged window
    drift: float  # |A's share over the judged window - over the JUDGE_S before it|
    counted: bool  # part of the race (the cheater was behind when it cheated)


@dataclass(frozen=True)
class Race:
    """One seed's race: the run whose first cheater was behind."""

    seed: int
    first: int
    run: Outcome
    phases: list[PhaseResult]

    @property
    def cheats(self) -> list[PhaseResult]:
        return [p for p in self.phases if p.counted and p.phase.cheater is not None]

    @property
    def end_s(self) -> float:
        """Where the race ended (the end of its last counted phase)."""
        return max(p.phase.end_s for p in self.phases if p.counted)

    def gains(self) -> list[float]:
        """The cheater's share after its cheat minus before, per cheat."""
        out = []
        for prev, cur in zip(self.phases, self.phases[1:]):
            if cur.counted and cur.phase.cheater is not None:
                c = cur.phase.cheater
                out.append(cur.share[c] - prev.share[c])
        return out

    def wins(self) -> int:
        return sum(1 for p in self.cheats if p.share[p.phase.cheater] > 0.5)


def _share_of(ga: float, gb: float) -> tuple[float, float]:
    total = ga + gb
    return (ga / total, gb / total) if total > 0 else (float("nan"), float("nan"))


def _judge(run: Outcome, quick: bool, first: int) -> list[PhaseResult]:
    judge = QUICK_JUDGE_S if quick else JUDGE_S
    g = run.flow["goodput_mbps"]
    out: list[PhaseResult] = []
    playing = True
    for p in phases(quick, first):
        lo, hi = p.end_s - judge, p.end_s
        ga, gb = traces.mean_over(run.t_s, g[0], lo, hi), traces.mean_over(run.t_s, g[1], lo, hi)
        share = _share_of(ga, gb)
        # Settling: the judged window against the window before it (a
        # share that still climbs in steps at each ProbeRTT shows here).
        before = _share_of(traces.mean_over(run.t_s, g[0], lo - judge, lo),
                           traces.mean_over(run.t_s, g[1], lo - judge, lo))[0]
        if p.cheater is not None and out:
            # The rule: the flow behind moves; once a cheat fails to put the
            # cheater ahead, the race is over.
            playing = playing and out[-1].share[p.cheater] < 0.5
        out.append(PhaseResult(p, (ga, gb), share, abs(share[0] - before), playing))
    return out


def races(outcomes: Mapping[str, Outcome], cc: str, quick: bool) -> list[Race]:
    out = []
    for seed in seeds(quick):
        judged = {first: _judge(outcomes[_key(cc, seed, first)], quick, first) for first in (0, 1)}
        # The run whose first cheater was behind after the honest phase
        # (A-first if neither or both, which the identical prefix rules out).
        first = 1 if judged[1][1].counted and not judged[0][1].counted else 0
        out.append(Race(seed, first, outcomes[_key(cc, seed, first)], judged[first]))
    return out


def _numbers(rs: list[Race]) -> dict[str, float]:
    gains = [g for r in rs for g in r.gains()]
    per_seed = [float(np.mean(r.gains())) for r in rs]
    cheats = sum(len(r.cheats) for r in rs)
    first_share = [r.phases[1].share[r.phases[1].phase.cheater] for r in rs]
    drift = [p.drift for r in rs for p in r.phases if p.counted]
    return {
        "seeds": len(rs),
        "cheats": cheats,
        "cheats_won": sum(r.wins() for r in rs),
        "cheats_gained": sum(1 for g in gains if g > 0),
        "mean_gain_from_cheating": float(np.mean(gains)),
        "seed_mean_gain_min": min(per_seed),
        "seed_mean_gain_max": max(per_seed),
        "gain_min": min(gains),
        "gain_max": max(gains),
        "first_cheat_share_mean": float(np.mean(first_share)),
        "first_cheat_share_min": min(first_share),
        "first_cheat_share_max": max(first_share),
        "races_complete": sum(1 for r in rs if len(r.cheats) == len(r.phases) - 1),
        "max_drift": max(drift),
        "phases_settled": sum(1 for d in drift if d <= SETTLED),
        "phases_judged": len(drift),
    }


def _pts(x: float) -> str:
    return f"{100 * x:+.1f}"


def _per_phase_table(rs: list[Race]) -> str:
    header = ["seed", "first cheater", "phase (s)", "RTT cheater / other (ms)", "cheater's share before -> after",
              "gain (points)", "settling (points)", "counted"]
    rows = []
    for r in rs:
        for prev, cur in zip(r.phases, r.phases[1:]):
            c = cur.phase.cheater
            rows.append([str(r.seed), "AB"[r.first], f"{cur.phase.start_s:g}-{cur.phase.end_s:g}",
                         f"{cur.phase.rtt_ms[c]:g} / {cur.phase.rtt_ms[1 - c]:g}",
                         f"{100 * prev.share[c]:.1f}% -> {100 * cur.share[c]:.1f}%",
                         _pts(cur.share[c] - prev.share[c]), f"{100 * cur.drift:.1f}",
                         "yes" if cur.counted else "no (cheater was ahead; race over)"])
    return markdown_table(header, rows)


def _per_rung_table(rs: list[Race], quick: bool) -> str:
    """Per rung of the ladder (k-th cheat): how many races got there, the
    cheater's gain (mean, range) and how many of those phases settled."""
    header = ["cheat", "RTT cheater / other (ms)", "races", "gain (points): mean (range)",
              "cheater ahead after", "settled"]
    rows = []
    for k, p in enumerate(phases(quick)[1:], start=1):
        played = [(r.phases[k - 1], r.phases[k]) for r in rs if r.phases[k].counted]
        if not played:
            rows.append([str(k), f"{p.rtt_ms[p.cheater]:g} / {p.rtt_ms[1 - p.cheater]:g}", "0", "-", "-", "-"])
            continue
        gains = [cur.share[cur.phase.cheater] - prev.share[cur.phase.cheater] for prev, cur in played]
        ahead = sum(1 for _, cur in played if cur.share[cur.phase.cheater] > 0.5)
        settled = sum(1 for _, cur in played if cur.drift <= SETTLED)
        rows.append([str(k), f"{p.rtt_ms[p.cheater]:g} / {p.rtt_ms[1 - p.cheater]:g}", str(len(played)),
                     f"{_pts(float(np.mean(gains)))} ({_pts(min(gains))} to {_pts(max(gains))})",
                     f"{ahead} of {len(played)}", f"{settled} of {len(played)}"])
    return markdown_table(header, rows)


def _setup(quick: bool) -> list[str]:
    judge = QUICK_JUDGE_S if quick else JUDGE_S
    length = QUICK_PHASE_S if quick else PHASE_S
    return [
        f"Two flows (both BBR, or both BBQ) with a true RTT of {TRUE_RTT_MS} ms on 100 Mbit/s, "
        f"2 MB droptail buffer, seeds {', '.join(map(str, seeds(quick)))}. "
        f"Phases of {length} s: both honest, then at each phase boundary the flow behind inflates its "
        "RTT to 2x the other's. The RTT change is a per-flow rtt_schedule (split evenly between "
        "the data and ACK directions, as a receiver delaying its ACKs and the path would).",
        "Only the flow behind cheats: each seed runs A-first and B-first schedules (identical until the "
        "first cheat) and keeps the one whose first cheater was behind after the honest phase; a cheat that "
        "leaves the cheater behind ends that seed's race (its RTT is already 2x the other's), and later "
        "phases are not counted.",
        f"Each phase is judged on its last {judge} s (the paper gives no timing). Settling: how many points "
        f"the share moved from the {judge} s before that window to the window; a phase is settled when "
        f"<= {100 * SETTLED:.0f}.",
    ]


def _settling(n: Mapping[str, float]) -> str:
    return (f"{int(n['phases_settled'])} of {int(n['phases_judged'])} counted phases settled "
            f"(max drift {100 * n['max_drift']:.1f} points)")


def _analyse_bbr(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    rs = races(outcomes, "bbr", quick)
    n = _numbers(rs)
    rep = Report(setup=_setup(quick), numbers=n)
    rep.sections.append(("Per rung", _per_rung_table(rs, quick)))
    rep.sections.append(("Per cheat", _per_phase_table(rs)))
    cheats = int(n["cheats"])
    rungs = len(phases(quick)) - 1
    rep.measured["fig7.steal"] = Measured(
        [min(r.gains()) for r in rs],
        # "Steal more bandwidth" read as: the cheater ends with the larger share (the other reasonable reading).
        alternatives={"the cheater's share after its cheat minus 50%, smallest in the race": Measured(
            [min(p.share[p.phase.cheater] for p in r.cheats) - 0.5 for r in rs])},
        note=f"{int(n['cheats_gained'])} of {cheats} cheats gained share and {int(n['cheats_won'])} put the cheater "
             f"ahead ({len(rs)} seeds). " + _lost_reason(rs))
    rep.measured["fig7.keep-doing-so"] = Measured(
        [len(r.cheats) / rungs for r in rs],
        note=f"{int(n['races_complete'])} of {len(rs)} races reach the last rung. " + _lost_reason(rs))
    rep.comparisons += [
        compare.ours_only("share gained by a cheat (after - before)",
                          f"{_pts(n['mean_gain_from_cheating'])} points",
                          f"{_pts(n['gain_min'])} to {_pts(n['gain_max'])} over {cheats} cheats"),
        compare.ours_only("settling of the judged windows", _settling(n)),
    ]
    if fig_dir is not None:
        _plot_goodput(rs[0], "bbr", fig_dir / "fig7.png", quick)
        _plot_shares(rs, "bbr", fig_dir / "fig7-settling.png", quick)
        rep.figures += [
            Figure("fig7.png", f"the paper's Fig. 7 (seed {rs[0].seed}): goodput over time (0.5 s mean) and each "
                               "flow's RTT; dashed lines mark each cheat and its new RTT"),
            Figure("fig7-settling.png", "settling: the first cheater's share over time (2 s mean), one line per "
                                        "seed; shaded: the judged windows; faint: phases after the race ended"),
        ]
    return rep


def _answer(per: Mapping[str, Mapping[str, float]]) -> str:
    b, q = per["bbr"], per["bbq"]

    def said(n: Mapping[str, float], name: str) -> str:
        return (f"With {name} the flow behind gains {_pts(n['mean_gain_from_cheating'])} points of share per cheat "
                f"on average (per-seed means {_pts(n['seed_mean_gain_min'])} to {_pts(n['seed_mean_gain_max'])}; "
                f"single cheats {_pts(n['gain_min'])} to {_pts(n['gain_max'])}); {int(n['cheats_gained'])} of "
                f"{int(n['cheats'])} cheats gain share and {int(n['cheats_won'])} put the cheater ahead; the first "
                f"cheat (5 -> 10 ms) gives it {100 * n['first_cheat_share_mean']:.1f}% "
                f"({100 * n['first_cheat_share_min']:.1f}-{100 * n['first_cheat_share_max']:.1f}%); "
                f"{int(n['races_complete'])} of {int(n['seeds'])} races reach the last rung.")

    if q["gain_max"] <= 0:
        verdict = "Under BBQ no cheat gained share: capping the probe removes the incentive to inflate the RTT."
    elif q["seed_mean_gain_max"] <= 0:
        verdict = (f"Under BBQ cheating does not pay on average in any seed, but {int(q['cheats_gained'])} of "
                   f"{int(q['cheats'])} single cheats still gained share: the cap removes most of the incentive, "
                   "not all of it.")
    else:
        less = q["seed_mean_gain_max"] < b["seed_mean_gain_min"]
        verdict = ("Capping the probe does not remove the incentive: inflating the RTT still pays under BBQ"
                   + (", though less than under BBR (the per-seed ranges do not overlap)." if less else
                      "; the per-seed ranges under BBR and BBQ overlap."))
    unsettled = [f"{int(n['phases_judged'] - n['phases_settled'])} of {int(n['phases_judged'])} under {name}"
                 for name, n in (("BBR", b), ("BBQ", q)) if n["phases_settled"] < n["phases_judged"]]
    caveat = (f" Not every judged window had settled ({', '.join(unsettled)} counted phases still moved by more than "
              f"{100 * SETTLED:.0f} points between the last two {JUDGE_S} s windows; see the per-rung tables): "
              "where a cheat had not settled, its gain is provisional." if unsettled else "")
    return f"{said(b, 'BBR')} {said(q, 'BBQ')} {verdict}{caveat}"


def _analyse_bbq(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    rep = Report(setup=_setup(quick))
    per: dict[str, dict[str, float]] = {}
    all_races = {}
    for cc in ("bbr", "bbq"):
        rs = races(outcomes, cc, quick)
        all_races[cc] = rs
        per[cc] = _numbers(rs)
        rep.numbers.update({f"{cc}.{k}": v for k, v in per[cc].items()})
        rep.sections.append((f"Per rung, {LABEL[cc]}", _per_rung_table(rs, quick)))
        rep.sections.append((f"Per cheat, {LABEL[cc]}", _per_phase_table(rs)))
    for cc in ("bbr", "bbq"):
        n = per[cc]
        rep.comparisons += [
            compare.ours_only(f"{LABEL[cc]}: share gained by the flow behind when it cheats",
                              f"{_pts(n['mean_gain_from_cheating'])} points",
                              f"seed means {_pts(n['seed_mean_gain_min'])} to {_pts(n['seed_mean_gain_max'])} "
                              f"({int(n['seeds'])} seeds, {int(n['cheats'])} cheats)"),
            compare.ours_only(f"{LABEL[cc]}: cheats that gain share / that put the cheater ahead",
                              f"{int(n['cheats_gained'])} / {int(n['cheats_won'])} of {int(n['cheats'])}"),
            compare.ours_only(f"{LABEL[cc]}: the first cheater's share (5 -> 10 ms)",
                              f"{100 * n['first_cheat_share_mean']:.1f}%",
                              f"{100 * n['first_cheat_share_min']:.1f}-{100 * n['first_cheat_share_max']:.1f}% "
                              f"({int(n['seeds'])} seeds)"),
            compare.ours_only(f"{LABEL[cc]}: settling of the judged windows", _settling(n)),
        ]
    rep.numbers["incentive_removed"] = float(per["bbq"]["gain_max"] <= 0)
    rep.sections.insert(0, ("Answer", _answer(per)))
    if fig_dir is not None:
        _plot_shares(all_races["bbq"], "bbq", fig_dir / "fig7-bbq.png", quick)
        _plot_shares(all_races["bbr"], "bbr", fig_dir / "fig7-bbr.png", quick)
        rep.figures += [
            Figure("fig7-bbq.png", "the race with BBQ: the first cheater's share over time (2 s mean), one line per "
                                   "seed, and the RTTs; shaded: judged windows; faint: phases after the race ended"),
            Figure("fig7-bbr.png", "the same race with BBR (the paper's Fig. 7), for comparison"),
        ]
    return rep


def base_rtt(t: np.ndarray, flow: int, quick: bool, first: int = 0) -> np.ndarray:
    """The flow's (possibly inflated) base RTT at each sample, ms."""
    out = np.full(len(t), float(TRUE_RTT_MS))
    for p in phases(quick, first):
        out[t > p.start_s] = p.rtt_ms[flow]
    return out


def _marks(quick: bool, first: int, names: str = "AB") -> list[tuple[float, str]]:
    return [(p.start_s, f"{names[p.cheater]}: {p.rtt_ms[p.cheater]:g} ms") for p in phases(quick, first)[1:]
            if p.cheater is not None]


def _plot_goodput(race: Race, cc: str, path: Path, quick: bool) -> None:
    run, first = race.run, race.first
    t = run.t_s
    g = np.vstack([traces.trailing_mean(run.flow["goodput_mbps"][i], 5) for i in (0, 1)])
    time_panels(
        path,
        f"{LABEL[cc]}: two {TRUE_RTT_MS} ms flows; the flow behind inflates its RTT to 2x the other's "
        f"(100 Mbit/s, seed {race.seed})",
        t,
        [Panel("goodput (Mbit/s, 0.5 s mean)", [Line("flow A", g[0]), Line("flow B", g[1])]),
         Panel("RTT (ms): smoothed (solid), base (dotted)",
               [Line("flow A", run.flow["srtt_ms"][0], style={"color": "tab:blue"}),
                Line("flow B", run.flow["srtt_ms"][1], style={"color": "tab:orange"}),
                Line("", base_rtt(t, 0, quick, first), style={"color": "tab:blue", "linestyle": ":"}),
                Line("", base_rtt(t, 1, quick, first), style={"color": "tab:orange", "linestyle": ":"})],
               logy=True)],
        marks=_marks(quick, first),
    )


def _plot_shares(rs: list[Race], cc: str, path: Path, quick: bool) -> None:
    """The first cheater's (X's) share over time, one line per seed, so that
    every seed's schedule lines up; the judged windows shaded."""
    t = rs[0].run.t_s
    judge = QUICK_JUDGE_S if quick else JUDGE_S
    lines = []
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink"]
    for i, r in enumerate(rs):
        g = [traces.trailing_mean(r.run.flow["goodput_mbps"][f], SMOOTH_N) for f in (0, 1)]
        total = g[0] + g[1]
        share = 100 * np.divide(g[r.first], total, out=np.full(len(total), np.nan), where=total > 0)
        colour = colours[i % len(colours)]
        played = r.run.t_s <= r.end_s + 1e-9
        lines.append(Line(f"seed {r.seed}", np.where(played, share, np.nan), t=r.run.t_s,
                          style={"color": colour}))
        if not played.all():
            lines.append(Line("", np.where(played, np.nan, share), t=r.run.t_s,
                              style={"color": colour, "alpha": 0.3, "linewidth": 0.8}))
    lines.append(Line("fair share (50%)", np.full(len(t), 50.0),
                      style={"color": "gray", "linestyle": "--", "linewidth": 0.8}))
    ph = phases(quick)
    spans = [(p.end_s - judge, p.end_s, "") for p in ph]
    time_panels(
        path,
        f"{LABEL[cc]}: the flow behind inflates its RTT to 2x the other's; X = the first cheater, Y = the other "
        f"({len(rs)} seeds)",
        t,
        [Panel("X's share (%, 2 s mean)", lines, ymin=0, ymax=100, legend_loc="upper left"),
         Panel("base RTT (ms)",
               [Line("X", base_rtt(t, 0, quick, 0), style={"color": "black"}),
                Line("Y", base_rtt(t, 1, quick, 0), style={"color": "gray", "linestyle": "--"})],
               step=True, logy=True)],
        spans=spans,
        marks=_marks(quick, 0, "XY"),
        height=3.0,
    )


def _lost_reason(rs: list[Race]) -> str:
    """For each cheat that did not win: what the cheater got, and whether
    the share had settled in the judged window."""
    parts = []
    for r in rs:
        for p in r.cheats:
            c = p.phase.cheater
            if p.share[c] > 0.5:
                continue
            parts.append(
                f"seed {r.seed}, the cheat at {p.phase.start_s:g} s (cheater {p.phase.rtt_ms[c]:g} ms against "
                f"{p.phase.rtt_ms[1 - c]:g} ms) left the cheater {100 * p.share[c]:.1f}% "
                + ("(settled: the share moved "
                   if p.drift <= SETTLED else "(not settled: the share still moved ")
                + f"{100 * p.drift:.1f} points across the judged window)"
            )
    return "; ".join(parts) + "." if parts else ""


EXPERIMENT = Experiment(
    name="bbq-fig7",
    figure="Fig. 7",
    summary="latency-cheating race: two 5 ms BBR flows; the flow behind inflates its RTT to 2x the other's",
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
