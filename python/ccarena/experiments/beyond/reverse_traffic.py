"""beyond-reverse-traffic: one flow up a link, its ACKs down another; with
or without a bulk CUBIC flow sending down that other link. What does
traffic the other way do to the forward flow?

The ACKs then wait in the reverse link's queue behind the reverse flow's
data, and leave it back to back: ACK compression (Zhang, Shenker and
Clark, "Observations on the dynamics of a congestion control algorithm:
the effects of two-way traffic", SIGCOMM 1991). A window-based sender
answers a burst of ACKs with a burst of data; BBR measures its delivery
rate over those ACKs, so a compressed burst reads as more bandwidth than
the link has, and Linux's BBR adds an allowance for ACK aggregation to its
cwnd (extra_acked, cc/include/bbr_core.h): the report shows that filter as
the algorithm reports it (timeseries.parquet's extra_acked) and the gaps
between the ACKs (ack_gap_p10_us, ack_gap_p50_us). No paper of ours states
a number: shown, not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ... import units
from .. import traces
from ..common import key, markdown_table, mean, runs_of, values
from ..figures import Series, grouped_bars
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..variants import flow
from .common import BBR, CUBIC, finish, link, seeds, topology
from ..blog.fairness_map import BBR3

#: The forward flow's algorithms.
FORWARD = (BBR, BBR3, CUBIC)
RATE_MBPS = 50
RTT_MS = 40
BUFFER_BDP = 2.0
#: The reverse flow starts here, after the forward flow's Startup.
REVERSE_START_S = 10.0
DURATION_S = 60.0
QUICK_DURATION_S = 30.0
WINDOW_FROM_S = 20.0
CASES = ("alone", "reverse")
COLUMNS = ("bw_estimate_mbps", "cwnd", "rtt_ms", "acks", "acks_compressed", "extra_acked", "ack_gap_p10_us",
           "ack_gap_p50_us")


def _duration(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def scenario(variant, case: str, *, seed: int, duration: float) -> dict:
    """``variant`` up (its ACKs down); with ``case`` "reverse", CUBIC down
    from REVERSE_START_S (its ACKs up)."""
    links = [link("up", RATE_MBPS, BUFFER_BDP), link("down", RATE_MBPS, BUFFER_BDP)]
    flows = [flow(variant, RTT_MS, path=["up"], reverse=["down"])]
    if case == "reverse":
        flows.append(flow(CUBIC, RTT_MS, path=["down"], reverse=["up"], start=f"{REVERSE_START_S:g}s"))
    return topology(links, flows, seed=seed, duration=duration, window=(min(WINDOW_FROM_S, duration / 2), duration))


def runs(quick: bool) -> list[RunSpec]:
    dur = _duration(quick)
    return [RunSpec(key(v.name, seed, case=case), scenario(v, case, seed=seed, duration=dur), flow_columns=COLUMNS)
            for v in FORWARD for case in CASES for seed in seeds(quick)]


def _compressed(run: Outcome) -> float:
    """The forward flow's compressed ACKs over all its ACKs in the window
    (timeseries.parquet's acks_compressed, docs/scenario-format.md)."""
    w = run.summary["window"]
    sel = traces.window(run.t_s, float(w["from_s"]), float(w["to_s"]))
    acks = float(np.sum(run.flow["acks"][0][sel]))
    return float(np.sum(run.flow["acks_compressed"][0][sel])) / acks if acks else float("nan")


def _window_mean(run: Outcome, column: str, stat=np.nanmean) -> float:
    """The forward flow's mean (or ``stat``) of a telemetry column over the
    window (NaN where the column is all null: CUBIC's extra_acked)."""
    w = run.summary["window"]
    sel = traces.window(run.t_s, float(w["from_s"]), float(w["to_s"]))
    column = np.asarray(run.flow[column][0][sel], dtype=float)
    return float(stat(column)) if np.isfinite(column).any() else float("nan")


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    dur = _duration(quick)
    payload = RATE_MBPS * units.MSS_BYTES / units.PACKET_WIRE_BYTES
    per = {(v.name, c): runs_of(outcomes, v.name, seeds(quick), case=c) for v in FORWARD for c in CASES}
    goodput = {p: values(r, lambda o: o.goodput(0) / payload) for p, r in per.items()}
    retx = {p: values(r, lambda o: float(o.flows[0]["retransmits"])) for p, r in per.items()}
    rtt = {p: values(r, lambda o: float(o.flows[0]["rtt_mean_ms"])) for p, r in per.items()}
    bw = {p: values(r, lambda o: _window_mean(o, "bw_estimate_mbps") / payload) for p, r in per.items()}
    cwnd = {p: values(r, lambda o: _window_mean(o, "cwnd")) for p, r in per.items()}
    compressed = {p: values(r, _compressed) for p, r in per.items()}
    extra = {p: values(r, lambda o: _window_mean(o, "extra_acked")) for p, r in per.items()}
    # Medians over the intervals: a few intervals of sparse ACKs (recovery) would sway a mean.
    gap_p10 = {p: values(r, lambda o: _window_mean(o, "ack_gap_p10_us", np.nanmedian)) for p, r in per.items()}
    gap_p50 = {p: values(r, lambda o: _window_mean(o, "ack_gap_p50_us", np.nanmedian)) for p, r in per.items()}
    rep = Report(setup=[
        f"Two links of {RATE_MBPS} Mbit/s, droptail, {BUFFER_BDP:g} BDP ({RTT_MS} ms) each: `up` carries the forward "
        f"flow's data and the reverse flow's ACKs, `down` the reverse flow's data and the forward flow's ACKs (an "
        f"ACK takes 66 bytes of a link, more with SACK blocks). Base RTT {RTT_MS} ms for both flows.",
        f"`alone`: the forward flow only (its ACKs cross an empty `down`); `reverse`: a bulk CUBIC flow down from "
        f"{REVERSE_START_S:g} s. {dur:g} s, measured over {min(WINDOW_FROM_S, dur / 2):g}-{dur:g} s; seeds "
        f"{', '.join(map(str, seeds(quick)))}.",
        "An ACK is compressed when it reaches the sender less than half a full packet's time at the link rate after "
        "the ACK before it (it waited in the `down` queue and left it back to back).",
        "Goodput and the bandwidth estimate are over the link's payload capacity (1448 of every 1514 bytes); the "
        "estimate is the algorithm's (BBR's max filter; CUBIC has none: n/a).",
        "extra_acked is the algorithm's ACK-aggregation filter as it reports it (packets more than its bandwidth "
        "estimate predicts that recent ACKs delivered; BBR adds it to cwnd; CUBIC has none: n/a), mean of the "
        "samples; the ACK gaps are the 10th percentile and the median of the gaps between consecutive ACKs at the "
        f"sender in each sample interval, µs, median over the window's intervals (a full packet takes "
        f"{units.PACKET_WIRE_BYTES * 8 / RATE_MBPS:.0f} µs at the link rate).",
        "No paper of ours states a number for traffic both ways: every row is shown, not judged.",
    ])
    rows = []
    for v in FORWARD:
        for c in CASES:
            p = (v.name, c)
            est = mean(bw[p])
            rep.numbers[f"{v.name}.{c}.goodput"] = mean(goodput[p])
            rep.numbers[f"{v.name}.{c}.retransmits"] = mean(retx[p])
            rep.numbers[f"{v.name}.{c}.acks_compressed"] = mean(compressed[p])
            rep.numbers[f"{v.name}.{c}.extra_acked"] = mean(extra[p])
            rep.numbers[f"{v.name}.{c}.ack_gap_p10_us"] = mean(gap_p10[p])
            rows.append([v.label, c, f"{100 * mean(compressed[p]):.1f}%", f"{mean(gap_p10[p]):.0f} / {mean(gap_p50[p]):.0f}",
                         f"{100 * mean(goodput[p]):.1f}%", f"{mean(retx[p]):.0f}",
                         f"{mean(rtt[p]):.1f}", f"{mean(cwnd[p]):.0f}",
                         f"{est:.3f}" if v is not CUBIC and np.isfinite(est) else "n/a",
                         f"{mean(extra[p]):.1f}" if np.isfinite(mean(extra[p])) else "n/a"])
    rep.sections.append(("The forward flow, alone and with traffic the other way", markdown_table(
        ["algorithm", "case", "ACKs compressed", "ACK gap p10 / p50 (µs)", "goodput / capacity", "retransmits",
         "mean RTT (ms)", "mean cwnd (packets)", "bandwidth estimate / capacity", "extra_acked (packets)"], rows)))
    if fig_dir is not None:
        grouped_bars(fig_dir / "reverse_traffic.png", f"Forward flow on {RATE_MBPS} Mbit/s, {RTT_MS} ms: goodput over "
                     "the link's capacity, alone and with a CUBIC flow the other way", [v.label for v in FORWARD],
                     [Series(c, [100 * mean(goodput[(v.name, c)]) for v in FORWARD],
                             [100 * min(goodput[(v.name, c)]) for v in FORWARD],
                             [100 * max(goodput[(v.name, c)]) for v in FORWARD]) for c in CASES],
                     ylabel="goodput (% of capacity)")
        rep.figures.append(Figure("reverse_traffic.png", "The forward flow's goodput alone and with reverse traffic "
                                                         "(mean and range over seeds)"))
        bbrs = [v for v in FORWARD if v is not CUBIC]
        grouped_bars(fig_dir / "reverse_traffic_extra_acked.png", f"extra_acked on {RATE_MBPS} Mbit/s, {RTT_MS} ms: "
                     "alone and with CUBIC the other way", [v.label for v in bbrs],
                     [Series(c, [mean(extra[(v.name, c)]) for v in bbrs], [min(extra[(v.name, c)]) for v in bbrs],
                             [max(extra[(v.name, c)]) for v in bbrs]) for c in CASES],
                     ylabel="extra_acked (packets, mean over the window)", ylim=None)
        rep.figures.append(Figure("reverse_traffic_extra_acked.png", "BBR's and BBRv3's extra_acked alone and with "
                                                                     "reverse traffic (mean and range over seeds)"))
    return finish(rep, quick)


EXPERIMENT = Experiment(
    name="beyond-reverse-traffic",
    figure="beyond the papers (traffic both ways)",
    summary="BBR, BBRv3 or CUBIC up a 50 Mbit/s link, alone or with a CUBIC flow the other way: goodput, "
            "retransmissions, RTT, cwnd, BBR's bandwidth estimate and ACK-aggregation estimate (extra_acked), ACK gaps",
    runs=runs,
    analyse=analyse,
)
