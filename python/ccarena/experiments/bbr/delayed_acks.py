"""bbr-delayed-acks: one BBR flow whose ACKs are now and then held back and
then delivered together, as cellular, Wi-Fi and cable links do, with
ProbeBW's cwnd_gain at 2 (BBR's) and at 1 (in flight limited to one BDP).

Paper (L171-L173, "Delayed and Stretched ACKs"): "Cellular, Wi-Fi, and
cable broadband networks often delay and aggregate ACKs. When inflight is
limited to one BDP, this results in throughput-reducing stalls. Raising
ProbeBW's cwnd_gain to two allowed BBR to continue sending smoothly at the
estimated delivery rate, even when ACKs are delayed by up to one RTT. This
largely avoids stalls." The paper has no figure for it. Claims:
claims.toml; this module measures them per seed.

How ACKs are held: the flow's ACKs cross an aggregating link (a
topology's `[[link]]` with `aggregate`, docs/scenario-format.md): it
releases what it carried at each multiple of the hold, all together, as
Wi-Fi, cellular and cable links release ACKs in bursts. So every ACK is
held for up to the hold (on average half of it), and the ACKs of a hold
reach the sender together. The data path is Figs. 2-5's; the ACK link is
fast and deep enough that ACKs never queue in it. The hosts are the
default model, as everywhere. The flow's RTprop is the base RTT (an ACK
that arrives just before a release waits for almost nothing), so a hold
is a delay BBR's model does not expect, as on a real aggregating link.
BBR is Linux 4.9's, the paper's: Linux's later ACK-aggregation allowance
in cwnd exists for exactly these paths and would blur the cwnd_gain the
paper argues from.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import paper
from .. import compare, traces
from ..common import key, markdown_table, mean, values
from ..compare import spread
from ..figures import Line, Panel, Series, sweep, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

#: ProbeBW's cwnd_gain: BBR's 2, and 1 (L173: "inflight is limited to one BDP").
GAINS = (2.0, 1.0)
VARIANTS = {g: paper.BBR_49.derive(f"bbr-linux49-cwnd{g:g}", {"cwnd_gain": g},
                                   label=f"BBR (Linux 4.9), cwnd_gain {g:g}") for g in GAINS}
#: Not judged: today's BBR, whose ACK-aggregation allowance adds to cwnd
#: what the recent ACK aggregation needs.
TODAY = paper.BBR
#: The longest hold, in base RTTs: none, up to a quarter, a half, one RTT
#: (L173's "up to one RTT") and, beyond the paper's claim, two.
HOLDS_RTT = (0.0, 0.25, 0.5, 1.0, 2.0)
QUICK_HOLDS_RTT = (0.0, 1.0)
#: The holds the paper's "up to one RTT" covers.
UP_TO = 1.0
#: The ACK link: fast and deep, so that ACKs wait only for its releases.
ACK_LINK_RATE = "1Gbit"
ACK_LINK_BUFFER = "10MB"
DURATION_S = 60.0
QUICK_DURATION_S = 30.0
#: After Startup and Drain.
STEADY_FROM_S = 5.0
INTERVAL = "10ms"
COLUMNS = ("goodput_mbps", "cwnd", "inflight")
#: The trace drawn: 2 s of seed 1 with holds of up to one RTT.
TRACE_S = (20.0, 22.0)


def holds(quick: bool) -> tuple[float, ...]:
    return QUICK_HOLDS_RTT if quick else HOLDS_RTT


def duration_s(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def scenario(variant, hold_rtt: float, *, seed: int, duration: float) -> dict[str, Any]:
    """One flow on Figs. 2-5's path, its ACKs through a link that releases
    them every ``hold_rtt`` base RTTs (none for 0)."""
    acks: dict[str, Any] = {"name": "acks", "rate": ACK_LINK_RATE, "buffer": ACK_LINK_BUFFER}
    if hold_rtt > 0:
        acks["aggregate"] = f"{hold_rtt * paper.LAB_RTT_MS:g}ms"
    doc = paper.scenario([paper.flow(variant, paper.LAB_RTT_MS, path=["data"], reverse=["acks"])], seed=seed,
                         duration=duration, rate=f"{paper.LAB_RATE_MBPS}Mbit", buffer=paper.buffer(paper.BUFFER_BDP),
                         window=(STEADY_FROM_S, duration), interval=INTERVAL)
    data = {"name": "data", **doc.pop("bottleneck")}
    return {**doc, "link": [data, acks]}


def _key(gain: float | None, seed: int, hold: float) -> str:
    return key((VARIANTS[gain] if gain else TODAY).name, seed, hold=f"{hold:g}")


def runs(quick: bool) -> list[RunSpec]:
    dur = duration_s(quick)
    specs = []
    for g in GAINS + (None,):
        for h in holds(quick):
            for seed in paper.seeds(quick):
                v = VARIANTS[g] if g else TODAY
                specs.append(RunSpec(_key(g, seed, h), scenario(v, h, seed=seed, duration=dur), COLUMNS))
    return specs


def at_cwnd(run: Outcome) -> float:
    """Share of the window's samples in which the flow has its whole cwnd
    in flight (within 2 packets): it can send nothing until ACKs come."""
    return traces.fraction(traces.cwnd_limited(run.flow["cwnd"][0], run.flow["inflight"][0]),
                           run.t_s > STEADY_FROM_S)


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    hs = holds(quick)
    per = {(g, h): [outcomes[_key(g, s, h)] for s in seeds] for g in GAINS + (None,) for h in hs}
    good = {p: values(r, lambda o: o.goodput(0)) for p, r in per.items()}
    limited = {p: values(r, at_cwnd) for p, r in per.items()}
    rtt = {p: values(r, lambda o: float(o.flows[0]["rtt_mean_ms"])) for p, r in per.items()}
    link = paper.payload_mbps(paper.LAB_RATE_MBPS)

    def change(g: float, h: float) -> list[float]:
        """Goodput with holds of up to h RTTs over goodput without, - 1, per seed."""
        return [a / b - 1 for a, b in zip(good[(g, h)], good[(g, 0.0)], strict=True)]

    rep = Report(setup=list(paper.SETUP))
    rep.setup += [
        f"One BBR flow as Linux 4.9 ran it (the paper's: no ACK-aggregation allowance in cwnd), ProbeBW's cwnd_gain "
        f"{' and '.join(f'{g:g}' for g in GAINS)}, on Figs. 2-5's path ({paper.LAB_RATE_MBPS} Mbit/s, "
        f"{paper.LAB_RTT_MS} ms, buffer {paper.BUFFER_BDP:g} BDP), {duration_s(quick):g} s, measured from "
        f"{STEADY_FROM_S:g} s, telemetry every {INTERVAL}.",
        f"Delayed and aggregated ACKs: the ACKs cross a link ({ACK_LINK_RATE}, {ACK_LINK_BUFFER}) that releases "
        f"what it carried every hold ({', '.join(f'{h:g}' for h in hs)} base RTTs; 0: no aggregation), all together: "
        "every ACK is held for up to the hold (half of it on average) and a hold's ACKs reach the sender at once, "
        "as on Wi-Fi, cellular and cable links (L171). Hosts: the default model.",
        "Stalls: the share of the samples in which the flow has its whole cwnd in flight (within 2 packets), so "
        "that it can send nothing until ACKs arrive.",
    ]
    for (g, h), xs in good.items():
        name = f"cwnd{g:g}" if g else "linux6x"
        rep.numbers[f"{name}.hold{h:g}.goodput_mbps"] = mean(xs)
        rep.numbers[f"{name}.hold{h:g}.at_cwnd"] = mean(limited[(g, h)])

    def status(g: float, h: float) -> str:
        return (f"cwnd_gain {g:g}, holds up to {h:g} RTT: {mean(good[(g, h)]):.2f} Mbit/s "
                f"({100 * mean(good[(g, h)]) / link:.1f}% of the link's payload rate), whole cwnd in flight "
                f"{100 * mean(limited[(g, h)]):.0f}% of the time, mean RTT {mean(rtt[(g, h)]):.1f} ms")

    if UP_TO in hs:
        rep.measured["delayed-acks.one-bdp-stalls"] = Measured(
            change(1.0, UP_TO), note=f"{status(1.0, 0.0)}; {status(1.0, UP_TO)}.")
        rep.measured["delayed-acks.two-bdp-smooth"] = Measured(
            change(2.0, UP_TO),
            note=f"{status(2.0, 0.0)}; {status(2.0, UP_TO)}: with no hold the flow already keeps a standing queue "
                 f"(mean RTT {mean(rtt[(2.0, 0.0)]):.0f} ms against {paper.LAB_RTT_MS}), so in flight sits well "
                 "above one BDP and the headroom under cwnd is less than the paper's one BDP; the held ACKs then "
                 "stall it now and then, and that queue keeps the link busy meanwhile" + (
                     f"; beyond the paper's one RTT, {status(2.0, max(hs))}." if max(hs) > UP_TO else "."))
        rep.measured["delayed-acks.largely-avoids"] = Measured(
            [1 - a / b if b < 0 else float("nan") for a, b in zip(change(2.0, UP_TO), change(1.0, UP_TO))],
            note=f"goodput lost to the holds: {-100 * mean(change(2.0, UP_TO)):.2f}% at cwnd_gain 2, "
                 f"{-100 * mean(change(1.0, UP_TO)):.2f}% at cwnd_gain 1.")
        rep.comparisons.append(compare.ours_only(
            f"today's BBR (Linux 6.x, its ACK-aggregation allowance): goodput with ACKs held up to {max(hs):g} RTT, "
            "against without", f"{100 * mean(change(None, max(hs))):+.2f}%"))
    rows = [[f"{g:g}" if g else "2 (Linux 6.x)", f"{h:g}", f"{mean(good[(g, h)]):.2f}", spread(good[(g, h)], ".2f") or "-",
             f"{100 * mean(limited[(g, h)]):.0f}%", f"{mean(rtt[(g, h)]):.1f}"] for g in GAINS + (None,) for h in hs]
    rep.sections.append(("Per point (mean over seeds)", markdown_table(
        ["cwnd_gain", "longest hold (RTT)", "goodput (Mbit/s)", "over seeds", "whole cwnd in flight",
         "mean RTT (ms)"], rows)))
    if fig_dir is not None:
        styles = {2.0: {"color": "tab:green"}, 1.0: {"color": "tab:red"}}
        sweep(fig_dir / "delayed_acks.png", f"BBR (Linux 4.9), {paper.LAB_RATE_MBPS} Mbit/s, {paper.LAB_RTT_MS} ms: "
              "goodput as ACKs are aggregated (mean and seed range)", list(hs),
              [Series(f"cwnd_gain {g:g}", [100 * mean(good[(g, h)]) / link for h in hs],
                      [100 * min(good[(g, h)]) / link for h in hs], [100 * max(good[(g, h)]) / link for h in hs],
                      style=styles[g]) for g in GAINS]
              + [Series("today's BBR (Linux 6.x), cwnd_gain 2", [100 * mean(good[(None, h)]) / link for h in hs],
                        style={"color": "tab:blue", "ls": "--"})],
              xlabel="longest ACK hold (base RTTs)", ylabel="goodput (% of the link's payload rate)",
              ylim=None, hlines=[(100.0, "the link", {"color": "gray", "ls": ":"})])
        rep.figures.append(Figure("delayed_acks.png", "goodput against the longest ACK hold, cwnd_gain 2 and 1"))
        trace_hold = UP_TO if UP_TO in hs else max(hs)
        runs1 = {g: per[(g, trace_hold)][0] for g in GAINS}
        t = runs1[GAINS[0]].t_s
        time_panels(fig_dir / "delayed_acks_trace.png", f"ACKs held up to {trace_hold:g} RTT (seed {seeds[0]}): "
                    "cwnd and data in flight", t,
                    [Panel(f"cwnd_gain {g:g} (packets)", [Line("cwnd", r.flow["cwnd"][0], style={"color": "tab:blue"}),
                                                          Line("in flight", r.flow["inflight"][0],
                                                               style={"color": styles[g]["color"]})])
                     for g, r in runs1.items()],
                    xlim=TRACE_S if duration_s(quick) > TRACE_S[1] else None, height=2.0)
        rep.figures.append(Figure("delayed_acks_trace.png", "2 s of both flows: with cwnd_gain 1 the data in flight "
                                                            "sits at cwnd while the ACKs are held (a stall)"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="bbr-delayed-acks",
    figure="Sec. \"Delayed and Stretched ACKs\" (L171)",
    summary="one BBR flow (Linux 4.9) with ACKs held up to 2 RTTs and delivered together: goodput at cwnd_gain 2 "
            "and 1",
    runs=runs,
    analyse=analyse,
)
