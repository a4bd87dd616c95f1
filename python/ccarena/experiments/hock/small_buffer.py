"""hock-small-buffer: six BBR flows in the small buffer, and six CUBIC
flows in the same place.

Slides (L113-L116): "Multiple Flows and Small Buffer (0.8 BDP): 6 BBR flows
(2 per interface). BBR causes massive packet loss"; L118: "Sender's
transmission rate"; L122-L125: "Comparison to CUBIC ... Three Orders of
Magnitude"; L88-L90: "Small buffer (< bdp): BBR ignores packet loss as
congestion signal"; backup L206, L210: "Packet Loss BBR - Outgoing data at
sender", "Packet Loss CUBIC - Outgoing data at sender" (the slides name no
scenario for them; their loss comparison is this one). The slides name no
rate: the runs are at 1 and 10 Gbit/s (L96). Claims: claims.toml.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import paper
from ... import units
from .. import compare
from ..common import key, markdown_table, mean, runs_of
from ..figures import Line, Panel, time_panels
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..verdict import Measured

FLOWS = 6
VARIANTS = (paper.BBR, paper.CUBIC)
BBR, CUBIC = (v.name for v in VARIANTS)
COLUMNS = ("goodput_mbps", "retransmits")

def runs(quick: bool) -> list[RunSpec]:
    return [RunSpec(key(v.name, seed, rate=paper.rkey(r)),
                    paper.scenario([paper.flow(v, paper.RTT_MS, count=FLOWS)], seed=seed, quick=quick,
                                   buffer_ms=paper.SMALL_MS, rate_mbps=r, bbr_only=v is paper.BBR), COLUMNS)
            for r in paper.rates(quick) for v in VARIANTS for seed in paper.seeds(quick)]


def sending_rate_mbps(run: Outcome, flow: int, dt_s: float) -> np.ndarray:
    """What the flow put on the wire per telemetry interval, Mbit/s: its
    goodput plus its retransmitted segments (full MSS each)."""
    retx = np.asarray(run.flow["retransmits"][flow], dtype=float)
    return np.asarray(run.flow["goodput_mbps"][flow], dtype=float) + retx * units.MSS_BYTES * 8 / dt_s / 1e6


def outgoing(run: Outcome) -> tuple[np.ndarray, np.ndarray]:
    """What the flows sent together per telemetry interval, and the part
    of it retransmitted (lost once), Mbit/s."""
    dt = float(run.t_s[1] - run.t_s[0])
    sent = sum(sending_rate_mbps(run, i, dt) for i in range(len(run.flows)))
    lost = np.nansum(np.asarray(run.flow["retransmits"], dtype=float), axis=0) * units.MSS_BYTES * 8 / dt / 1e6
    return sent, lost


def lost_mbps(run: Outcome) -> float:
    """The flows' retransmitted data over the window, Mbit/s: what they
    sent and lost."""
    window = run.summary["window"]
    span = float(window["to_s"]) - float(window["from_s"])
    return sum(float(f["retransmits"]) for f in run.flows) * units.MSS_BYTES * 8 / span / 1e6


def sent_over_link(run: Outcome, rate_mbps: float) -> float:
    """The flows' summed sending rate over the window (goodput plus
    retransmitted data) over the link's payload rate."""
    good = sum(run.goodput(i) for i in range(len(run.flows)))
    return (good + lost_mbps(run)) / (rate_mbps * units.MSS_BYTES / units.PACKET_WIRE_BYTES)


def orders(bbr: float, cubic: float) -> float:
    """log10 of BBR's retransmission rate over CUBIC's (inf when CUBIC has none)."""
    if cubic <= 0:
        return math.inf
    return math.log10(bbr / cubic) if bbr > 0 else -math.inf


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = paper.seeds(quick)
    rates = paper.rates(quick)
    per = {(cc, r): runs_of(outcomes, cc, seeds, rate=paper.rkey(r)) for cc in (BBR, CUBIC) for r in rates}
    rate = {k: [paper.retransmit_rate(x) for x in v] for k, v in per.items()}
    util = {k: [x.utilization for x in v] for k, v in per.items()}
    jain = {k: [float(x.summary["jain"]) for x in v] for k, v in per.items()}
    sent = {k: [sent_over_link(x, k[1]) for x in v] for k, v in per.items()}
    lost = {k: [lost_mbps(x) for x in v] for k, v in per.items()}
    order = {r: [orders(b, c) for b, c in zip(rate[(BBR, r)], rate[(CUBIC, r)])] for r in rates}
    rep = Report(setup=list(paper.SETUP))
    rep.setup.append(
        f"{FLOWS} flows of one algorithm (the slides' \"2 per interface\" of three senders is {FLOWS} flows on one "
        f"bottleneck here), {paper.RTT_MS} ms, {paper.SMALL_MS}-ms buffer ({paper.SMALL_MS / paper.RTT_MS:g} BDP) at "
        f"{' and '.join(paper.rkey(r) for r in rates)} (the slides name no rate here; L96), "
        f"{paper.duration_s(quick):g} s, measured from {paper.window_from_s(quick):g} s (BBR alone at 10 Gbit/s: "
        f"{paper.BBR_ONLY_HIGH_DURATION_S:g} s from {paper.BBR_ONLY_HIGH_FROM_S:g} s). Retransmission rate: "
        "retransmitted segments over all segments sent in the window. \"Three orders of magnitude\" is measured as "
        "log10 of BBR's rate over CUBIC's, per seed. The sender's transmission rate: the flows' goodput plus their "
        "retransmitted data (each retransmission a full segment), over the link's payload rate; the lost data is "
        "the retransmitted part of it.")
    def suffix(r: float) -> str:
        """Numbers at 1 Gbit/s keep their names; 10 Gbit/s ones end in .10Gbit."""
        return "" if r == paper.RATE_MBPS else f".{paper.rkey(r)}"

    for (cc, r) in per:
        rep.numbers[f"{cc}.retransmit_rate{suffix(r)}"] = mean(rate[(cc, r)])
        rep.numbers[f"{cc}.utilization{suffix(r)}"] = mean(util[(cc, r)])
        rep.numbers[f"{cc}.sent_over_link{suffix(r)}"] = mean(sent[(cc, r)])
        rep.numbers[f"{cc}.lost_mbps{suffix(r)}"] = mean(lost[(cc, r)])
    for r in rates:
        finite = [o for o in order[r] if math.isfinite(o)]
        rep.numbers[f"orders{suffix(r)}"] = mean(finite) if finite else math.nan

    def ratio_text(r: float) -> str:
        return (f"{paper.rkey(r)}: BBR retransmits {100 * mean(rate[(BBR, r)]):.2f}% of its segments, CUBIC "
                f"{100 * mean(rate[(CUBIC, r)]):.4f}% (per seed: "
                f"{', '.join(f'{10 ** o:.0f}x' if math.isfinite(o) else 'CUBIC none' for o in order[r])}); BBR "
                f"keeps {100 * mean(util[(BBR, r)]):.1f}% utilisation while losing them (it ignores loss, L90), "
                f"CUBIC {100 * mean(util[(CUBIC, r)]):.1f}%")

    by_rate = lambda table, cc: {paper.rkey(r): table[(cc, r)] for r in rates}  # noqa: E731
    rep.measured["small-buffer.loss"] = Measured(members=by_rate(rate, BBR))
    rep.measured["small-buffer.sending-rate"] = Measured(
        members=by_rate(sent, BBR), note="; ".join(f"{paper.rkey(r)}: CUBIC's {FLOWS} flows send "
                                                   f"{mean(sent[(CUBIC, r)]):.3f}x the link" for r in rates) + ".")
    # A seed in which CUBIC retransmits nothing has no finite ratio: it is
    # left out, and the claim is judged only on the seeds that have one.
    rep.measured["small-buffer.orders"] = Measured(
        members={paper.rkey(r): [o for o in order[r] if math.isfinite(o)] for r in rates},
        note="; ".join(ratio_text(r) for r in rates) + ".")
    rep.measured["small-buffer.outgoing-bbr"] = Measured(members=by_rate(lost, BBR))
    rep.measured["small-buffer.outgoing-cubic"] = Measured(members=by_rate(lost, CUBIC))
    rep.comparisons += [
        compare.ours_only(f"CUBIC: retransmitted segments, {paper.rkey(r)}", f"{100 * mean(rate[(CUBIC, r)]):.4f}%",
                          compare.spread([100 * x for x in rate[(CUBIC, r)]], ".4f")) for r in rates] + [
        compare.ours_only(f"Jain's index, BBR / CUBIC, {paper.rkey(r)}",
                          f"{mean(jain[(BBR, r)]):.3f} / {mean(jain[(CUBIC, r)]):.3f}") for r in rates]
    rows = [[paper.rkey(r), str(s), f"{100 * rb:.3f}%", f"{100 * rc:.5f}%", f"{10 ** o:.0f}x" if math.isfinite(o) else "-",
             f"{100 * ub:.1f}%", f"{100 * uc:.1f}%"]
            for r in rates
            for s, rb, rc, o, ub, uc in zip(seeds, rate[(BBR, r)], rate[(CUBIC, r)], order[r], util[(BBR, r)],
                                            util[(CUBIC, r)])]
    rep.sections.append(("Per seed", markdown_table(
        ["rate", "seed", "BBR retransmitted", "CUBIC retransmitted", "ratio", "BBR utilisation", "CUBIC utilisation"],
        rows)))
    if fig_dir is not None:
        first = {cc: per[(cc, paper.RATE_MBPS)][0] for cc in (BBR, CUBIC)}
        t = first[BBR].t_s
        dt = float(t[1] - t[0])
        panels = [Panel(f"{paper.LABEL[cc]}: sending rate (Mbit/s)",
                        [Line(f"flow {i}", sending_rate_mbps(first[cc], i, dt)) for i in range(FLOWS)],
                        legend_loc="upper right") for cc in (BBR, CUBIC)]
        panels.append(Panel("retransmissions per second (all flows)",
                            [Line(paper.LABEL[cc], np.nansum(first[cc].flow["retransmits"], axis=0) / dt)
                             for cc in (BBR, CUBIC)], symlog=1.0))
        title = (f"{FLOWS} flows, {paper.RTT_MS} ms, {paper.SMALL_MS}-ms buffer, {paper.RATE_MBPS / 1000:g} Gbit/s "
                 f"(seed {seeds[0]})")
        time_panels(fig_dir / "small_buffer.png", title, t, panels)
        rep.figures.append(Figure("small_buffer.png", "each flow's sending rate (goodput plus retransmitted "
                                                      "segments), BBR and CUBIC, as the slides' \"Sender's "
                                                      "transmission rate\" (L118), and the retransmissions per "
                                                      "second of each (log scale above 1/s, linear below)"))
        out = {cc: outgoing(first[cc]) for cc in (BBR, CUBIC)}
        time_panels(fig_dir / "outgoing_data.png", title, t,
                    [Panel(f"{paper.LABEL[cc]}: outgoing data (Mbit/s)",
                           [Line("sent", out[cc][0], style={"color": "tab:blue"}),
                            Line("lost (retransmitted)", out[cc][1], style={"color": "tab:red"})],
                           symlog=1.0, legend_loc="lower right") for cc in (BBR, CUBIC)])
        rep.figures.append(Figure("outgoing_data.png", "the backup slides' \"Packet Loss - Outgoing data at "
                                                       "sender\" (L206, L210): what the six flows send together and "
                                                       "the part of it lost, BBR and CUBIC (log scale above 1 Mbit/s)"))
    return paper.finish(rep, quick)


EXPERIMENT = Experiment(
    name="hock-small-buffer",
    figure="small buffer, vs CUBIC",
    summary="six BBR or six CUBIC flows, 1 and 10 Gbit/s, 20 ms, 16-ms buffer: retransmissions (three orders of "
            "magnitude), sending rate, outgoing data",
    runs=runs,
    analyse=analyse,
)
