"""blog-fairness-map: the shorter flow's share over (short RTT, long RTT)
for BBRv2 and tuned BBRv2 (the blog's algorithm, judged), BBR v1 and its
tuning, BBRv3 and its tuning, BBQ, DA-BBR and CUBIC, one high-rate row,
and the same family against CUBIC across buffer sizes.

The blog's claims are in claims.toml (L9 CUBIC's bias, L17 BBRv2's lower
loss below 1.5 BDP, L35 "more than 90%" at 5x and the bias alleviated on
a low-bandwidth bottleneck, both of BBR v1 as the testbeds it cites ran
it, Figure 2, L49 BBQ and DA-BBR against BBR v1, L69 the pacing margin
alone at 10 vs 50 ms, L79 the short flow favoured at ~50 ms, L83 the
high-rate pair, L97 beyond 5x); this module measures them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np

from ... import units
from .. import compare, variants
from ..common import fair_gap, finish, key, markdown_table, mean, retransmit_rate, runs_of
from ..figures import Series, heatmaps, sweep
from ..framework import Experiment, Figure, Outcome, Report, RunSpec, Variant
from ..verdict import Measured

BBR = variants.BBR
CUBIC = variants.CUBIC
#: The blog's algorithm (cc/bbr2.c, Google's v2alpha) and its tuning.
BBR2 = Variant("bbr2", "bbr2", label="BBRv2")
BBR2_TUNED = Variant("bbr2_tuned", "bbr2_tuned", label="BBRv2 tuned")
#: Extra columns: the same tuning on BBR v1 and on BBRv3 (v2's successor).
BBR_TUNED = Variant("bbr_tuned", "bbr_tuned", label="BBR tuned")
BBR3 = Variant("bbr3", "bbr3", label="BBRv3")
BBR3_TUNED = Variant("bbr3_tuned", "bbr3_tuned", label="BBRv3 tuned")
BBQ = Variant("bbq", "bbq", label="BBQ")
DA_BBR = Variant("da_bbr", "da_bbr", label="DA-BBR")
FAMILIES = (BBR2, BBR2_TUNED, BBR, BBR_TUNED, BBR3, BBR3_TUNED, BBQ, DA_BBR, CUBIC)
#: The tuning's two knobs one at a time on BBRv2 (the reason rows use them).
MARGIN_ONLY = BBR2.derive("bbr2-margin7", {"pacing_margin": 0.07}, label="BBRv2, 7% margin only")
QUANTUM_ONLY = BBR2.derive("bbr2-linear-quantum", {"send_quantum": 2}, label="BBRv2, linear quantum only")

#: Base RTTs of the grid, ms: 5 to 400 (the blog's range), with the 5x
#: pairs 5/25, 10/50 and 50/250 (same ratio, growing difference).
RTTS_MS = (5, 10, 25, 50, 100, 250, 400)
QUICK_RTTS_MS = (10, 50, 250)
RATE_MBPS = 100
RATE = f"{RATE_MBPS}Mbit"
#: The high-rate row: "pacing rate ... high (> 50Mbps)" (L83) for both
#: flows of a pair, a 50 ms flow against longer ones.
HIGH_RATE_MBPS = 500
HIGH_RATE = f"{HIGH_RATE_MBPS}Mbit"
HIGH_SHORT_MS = 50
HIGH_LONG_MS = (100, 250, 400)
QUICK_HIGH_LONG_MS = (250,)
#: L35's "low bandwidth bottleneck" (the blog gives no rate): a tenth of
#: the grid's rate, for BBR v1's and BBRv2's 10 vs 50 ms pair.
LOW_RATE_MBPS = 10
LOW_RATE = f"{LOW_RATE_MBPS}Mbit"
LOW_PAIR = (10, 50)
#: The blog gives no buffer: 2 BDP of the longer flow, deep enough that
#: BBR's 2-BDP cwnd, not loss, sets the shares.
BUFFER_BDP = 2.0
#: Against CUBIC, both at this RTT, over these buffers (BDP).
CUBIC_RTT_MS = 40
BUFFERS_BDP = (0.5, 1.0, 2.0, 4.0, 8.0)
QUICK_BUFFERS_BDP = (0.5, 2.0)
DURATION_S = 90.0
WINDOW_FROM_S = 30.0
QUICK_WINDOW_FROM_S = 10.0
#: Telemetry of the tuned 10 vs 50 ms pair (the reason of its row).
TRACED = ("cwnd", "inflight", "bw_estimate_mbps")
#: L79's "absolute difference ... low (~50ms)": the grid's pairs 40-50 ms apart.
NEAR_50MS = ((5, 50), (10, 50), (50, 100))
#: L17's "buffer sizes that are less than 1.5 X the bandwidth-delay product".
LOSS_BELOW_BDP = 1.5


def _rtts(quick: bool) -> tuple[int, ...]:
    return QUICK_RTTS_MS if quick else RTTS_MS


def _duration(quick: bool) -> float:
    return variants.QUICK_DURATION_S if quick else DURATION_S


def _from(quick: bool) -> float:
    return QUICK_WINDOW_FROM_S if quick else WINDOW_FROM_S


def _pair_doc(v: Variant, short: int, long_: int, seed: int, quick: bool, rate: str = RATE) -> dict:
    d = _duration(quick)
    return variants.scenario([variants.flow(v, short), variants.flow(v, long_)], seed=seed, duration=d, rate=rate,
                             buffer=variants.buffer(BUFFER_BDP), window=(_from(quick), d))


def pairs(quick: bool) -> list[tuple[int, int]]:
    return list(combinations(_rtts(quick), 2))


def runs(quick: bool) -> list[RunSpec]:
    specs = []
    for seed in variants.seeds(quick):
        for v in FAMILIES:
            for s, lg in pairs(quick):
                traced = TRACED if (v is BBR2_TUNED and (s, lg) == (10, 50)) else ()
                specs.append(RunSpec(key(v.name, seed, rtts=f"{s}-{lg}"), _pair_doc(v, s, lg, seed, quick), traced))
            for lg in QUICK_HIGH_LONG_MS if quick else HIGH_LONG_MS:
                traced = TRACED if (v is BBR2_TUNED and lg == 250) else ()
                specs.append(RunSpec(key(v.name, seed, rtts=f"{HIGH_SHORT_MS}-{lg}", rate="high"),
                                     _pair_doc(v, HIGH_SHORT_MS, lg, seed, quick, HIGH_RATE), traced))
            if v is not CUBIC:
                for b in QUICK_BUFFERS_BDP if quick else BUFFERS_BDP:
                    d = _duration(quick)
                    doc = variants.scenario([variants.flow(v, CUBIC_RTT_MS), variants.flow(CUBIC, CUBIC_RTT_MS)],
                                            seed=seed, duration=d, rate=RATE, buffer=variants.buffer(b),
                                            window=(_from(quick), d))
                    specs.append(RunSpec(key(v.name, seed, vs="cubic", buffer=f"{b:g}"), doc))
        for v in (MARGIN_ONLY, QUANTUM_ONLY):
            specs.append(RunSpec(key(v.name, seed, rtts="10-50"), _pair_doc(v, 10, 50, seed, quick)))
        for v in (BBR, BBR2):
            specs.append(RunSpec(key(v.name, seed, rtts="-".join(map(str, LOW_PAIR)), rate="low"),
                                 _pair_doc(v, *LOW_PAIR, seed, quick, LOW_RATE)))
    return specs


def window_bound(traced: Sequence[Outcome], rtts_ms: tuple[int, int], lo: float, target: float) -> str:
    """Why the shares are what they are when both flows are window-bound
    in a shared queue, from the traced runs (means over seeds): each flow
    i delivers about W_i / (R_i + Q) (its in-flight over its base RTT plus
    the mean queueing delay Q), so the short flow's share follows the
    ratio of the windows; the window it would need for ``target`` at the
    measured queue, against what it holds."""
    q_ms = mean([r.summary["queue_delay_ms"]["mean"] for r in traced])
    infl = [mean([float(np.median(r.flow["inflight"][i][r.t_s > lo])) for r in traced]) for i in (0, 1)]
    cwnd = [mean([float(np.median(r.flow["cwnd"][i][r.t_s > lo])) for r in traced]) for i in (0, 1)]
    got = [mean([r.goodput(i) for r in traced]) for i in (0, 1)]
    # Packets per second each window would deliver over its RTT plus the queue, as Mbit/s of payload.
    model = [infl[i] * units.MSS_BYTES * 8 / ((rtts_ms[i] + q_ms) / 1e3) / 1e6 for i in (0, 1)]
    need = target / (1 - target) * infl[1] * (rtts_ms[0] + q_ms) / (rtts_ms[1] + q_ms)
    return (f"Both flows are window-bound in one queue (mean queueing delay {q_ms:.0f} ms; median in flight "
            f"{infl[0]:.0f} / {infl[1]:.0f} packets against cwnd {cwnd[0]:.0f} / {cwnd[1]:.0f}): in flight over base "
            f"RTT plus queue gives {model[0]:.0f} / {model[1]:.0f} Mbit/s against the {got[0]:.0f} / {got[1]:.0f} "
            f"delivered, so the windows set the shares. For {100 * target:.0f}% at this queue the "
            f"{rtts_ms[0]} ms flow would need {need:.0f} packets in flight; it holds {infl[0]:.0f}.")


def _shares(outcomes: Mapping[str, Outcome], v: Variant, seeds, rtts: str, **point) -> list[float]:
    return [r.share(0) for r in runs_of(outcomes, v.name, seeds, rtts=rtts, **point)]


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    seeds = variants.seeds(quick)
    rtts = _rtts(quick)
    share = {(v.name, s, lg): _shares(outcomes, v, seeds, f"{s}-{lg}") for v in FAMILIES for s, lg in pairs(quick)}
    highs = QUICK_HIGH_LONG_MS if quick else HIGH_LONG_MS
    high = {(v.name, lg): _shares(outcomes, v, seeds, f"{HIGH_SHORT_MS}-{lg}", rate="high")
            for v in FAMILIES for lg in highs}
    buffers = QUICK_BUFFERS_BDP if quick else BUFFERS_BDP
    jain = {(v.name, b): [r.summary["jain"] for r in runs_of(outcomes, v.name, seeds, vs="cubic", buffer=f"{b:g}")]
            for v in FAMILIES if v is not CUBIC for b in buffers}
    cubic_share = {(v.name, b): [r.share(1) for r in runs_of(outcomes, v.name, seeds, vs="cubic", buffer=f"{b:g}")]
                   for v in FAMILIES if v is not CUBIC for b in buffers}
    ablation = {v.name: _shares(outcomes, v, seeds, "10-50") for v in (MARGIN_ONLY, QUANTUM_ONLY)}

    rep = Report(setup=[
        f"Two flows of one algorithm with base RTTs short < long from {{{', '.join(map(str, rtts))}}} ms, starting "
        f"together, {RATE_MBPS} Mbit/s, a {BUFFER_BDP:g}-BDP buffer (of the longer RTT; the blog gives none), "
        f"{_duration(quick):g} s measured from {_from(quick):g} s; the value is the shorter flow's share. The "
        f"high-rate row: a {HIGH_SHORT_MS} ms flow against {', '.join(map(str, highs))} ms at {HIGH_RATE_MBPS} "
        f"Mbit/s. Against CUBIC: one flow of each at {CUBIC_RTT_MS} ms over {', '.join(f'{b:g}' for b in buffers)} "
        "BDP of buffer, Jain's index.",
        "BBRv2 is cc/bbr2.c (Google's v2alpha tcp_bbr2.c, the version the blog tuned); BBRv2 tuned is "
        "cc/bbr2_tuned.c: a 7% pacing margin (the middle of the blog's 5-10%) and a send quantum linear in min RTT "
        "from 64 KB at 10 ms to 2 segments at 400 ms (the blog's end points). The blog's claims are judged on "
        "them; BBR v1 and BBRv3 with the same tuning (bbr_tuned, bbr3_tuned) are extra columns. BBQ and DA-BBR "
        "are modifications of BBR v1 and are compared with it (L49).",
    ])
    for (name, s, lg), xs in share.items():
        rep.numbers[f"{name}.share.{s}-{lg}ms"] = mean(xs)
    for (name, lg), xs in high.items():
        rep.numbers[f"{name}.share_high.{HIGH_SHORT_MS}-{lg}ms"] = mean(xs)
    for (name, b), xs in jain.items():
        rep.numbers[f"{name}.jain_vs_cubic.{b:g}bdp"] = mean(xs)

    def pct(xs: list[float]) -> str:
        return f"{100 * mean(xs):.1f}%"

    def per_pair(v: Variant, chosen) -> dict[str, list[float]]:
        return {f"{s}/{lg} ms": share[(v.name, s, lg)] for s, lg in chosen if (s, lg) in pairs(quick)}

    five_x = [(s, lg) for s, lg in pairs(quick) if lg == 5 * s]
    rep.measured["l9.cubic-favours-short"] = Measured(members=per_pair(CUBIC, pairs(quick)))
    retx = {(v.name, b): [retransmit_rate(r, [0]) for r in runs_of(outcomes, v.name, seeds, vs="cubic", buffer=f"{b:g}")]
            for v in (BBR, BBR2) for b in buffers if b < LOSS_BELOW_BDP}
    rep.measured["l17.less-loss"] = Measured(
        members={f"{b:g} BDP": [x2 - x1 for x1, x2 in zip(retx[(BBR.name, b)], retx[(BBR2.name, b)], strict=True)]
                 for b in buffers if b < LOSS_BELOW_BDP},
        note="; ".join(f"{b:g} BDP: BBR v1 {100 * mean(retx[(BBR.name, b)]):.3f}%, BBRv2 "
                       f"{100 * mean(retx[(BBR2.name, b)]):.3f}% of its segments" for b in buffers if b < LOSS_BELOW_BDP)
        + ".")
    # L35 describes BBR as L31's specification has it (v1), as its other
    # half (l35.low-bandwidth) is judged; BBRv2 and v3 are noted.
    rep.measured["l35.seize"] = Measured(
        members={f"{s}/{lg} ms": [1 - x for x in share[(BBR.name, s, lg)]] for s, lg in five_x},
        note="BBRv2: " + ", ".join(pct([1 - x for x in share[(BBR2.name, *p)]]) for p in five_x)
        + "; BBRv3: " + ", ".join(pct([1 - x for x in share[(BBR3.name, *p)]]) for p in five_x)
        + f" ({', '.join(f'{s}/{lg}' for s, lg in five_x)} ms).")
    low_key = "-".join(map(str, LOW_PAIR))
    low = {v.name: _shares(outcomes, v, seeds, low_key, rate="low") for v in (BBR, BBR2)}
    rep.measured["l35.low-bandwidth"] = Measured(
        members={f"{RATE_MBPS} Mbit/s": share[(BBR.name, *LOW_PAIR)], f"{LOW_RATE_MBPS} Mbit/s": low[BBR.name]},
        note=f"BBRv2's {LOW_PAIR[0]} ms flow: {pct(share[(BBR2.name, *LOW_PAIR)])} at {RATE_MBPS} Mbit/s, "
             f"{pct(low[BBR2.name])} at {LOW_RATE_MBPS} Mbit/s.")
    rep.measured["fig2.ratio-and-difference"] = Measured(members=per_pair(BBR2, five_x))
    near_far = [p for p in ((10, 50), (50, 250)) if p in pairs(quick)]
    for v, tag in ((BBQ, "bbq"), (DA_BBR, "da-bbr")):
        rep.measured[f"l49.{tag}-fairer"] = Measured(members={
            f"{s}/{lg} ms": fair_gap(share[(v.name, s, lg)], share[(BBR.name, s, lg)]) for s, lg in near_far},
            note="; ".join(f"{s}/{lg} ms: {v.label} {pct(share[(v.name, s, lg)])}, BBR {pct(share[(BBR.name, s, lg)])}"
                           for s, lg in near_far) + ".")
        rep.measured[f"l49.{tag}-not-difference"] = Measured(
            fair_gap(share[(v.name, 50, 250)], share[(v.name, 10, 50)]) if len(near_far) == 2 else [])
    if (10, 50) in pairs(quick):
        tuned = share[(BBR2_TUNED.name, 10, 50)]
        traced = runs_of(outcomes, BBR2_TUNED.name, seeds, rtts="10-50")
        lo = _from(quick)
        cwnd = [mean([float(np.median(r.flow["cwnd"][i][r.t_s > lo])) for r in traced]) for i in (0, 1)]
        # Each flow's own BDP as its bandwidth estimate makes it, packets.
        bdp = [mean([float(np.median(r.flow["bw_estimate_mbps"][i][r.t_s > lo])) * 1e6 / 8 * rtt / 1e3
                     / units.MSS_BYTES for r in traced]) for i, rtt in ((0, 10), (1, 50))]
        rep.measured["l69.margin"] = Measured(
            ablation[MARGIN_ONLY.name],
            note=f"untuned BBRv2 {pct(share[(BBR2.name, 10, 50)])}; the linear quantum alone "
                 f"{pct(ablation[QUANTUM_ONLY.name])}; both (tuned BBRv2) {pct(tuned)}; the same tuning on BBR v1 "
                 f"{pct(share[(BBR_TUNED.name, 10, 50)])}, on BBRv3 {pct(share[(BBR3_TUNED.name, 10, 50)])}. Tuned, "
                 f"the 10 ms flow's median cwnd is {cwnd[0]:.0f} packets, {cwnd[0] / bdp[0]:.2f} of its own BDP "
                 f"({bdp[0]:.0f}: its bandwidth estimate x 10 ms), the 50 ms flow's {cwnd[1]:.0f}, "
                 f"{cwnd[1] / bdp[1]:.2f} of its own ({bdp[1]:.0f}): each holds about the same multiple of its own "
                 f"BDP, so the longer flow keeps {cwnd[1] / cwnd[0]:.1f}x the window. "
                 + window_bound(traced, (10, 50), lo, 0.40))
    else:
        rep.measured["l69.margin"] = Measured([])
    rep.measured["l79.favours-short"] = Measured(members=per_pair(BBR2_TUNED, NEAR_50MS))
    if 250 in highs:
        xs = high[(BBR2_TUNED.name, 250)]
        why = (f"the same pair at {RATE_MBPS} Mbit/s: "
               + (pct(share[(BBR2_TUNED.name, 50, 250)]) if (50, 250) in pairs(quick) else "not run")
               + f"; untuned BBRv2 at {HIGH_RATE_MBPS} Mbit/s {pct(high[(BBR2.name, 250)])}, tuned BBRv3 "
               + f"{pct(high[(BBR3_TUNED.name, 250)])}. "
               + window_bound(runs_of(outcomes, BBR2_TUNED.name, seeds, rtts=f"{HIGH_SHORT_MS}-250", rate="high"),
                              (HIGH_SHORT_MS, 250), _from(quick), 0.5))
        rep.measured["l83.biased-long"] = Measured(xs, note=why)
    else:
        rep.measured["l83.biased-long"] = Measured([])
    beyond = per_pair(BBR2_TUNED, [(s, lg) for s, lg in pairs(quick) if lg > 5 * s])
    rep.measured["l97.beyond-5x"] = Measured(members=beyond)
    rep.measured["l97.starvation"] = Measured(
        [min(xs) for xs in zip(*beyond.values())] if beyond else [],
        note="smallest at " + min(beyond, key=lambda k: mean(beyond[k])) + "." if beyond else "")
    for v in FAMILIES:
        if v is CUBIC:
            continue
        rep.comparisons.append(compare.ours_only(
            f"{v.label} vs CUBIC ({CUBIC_RTT_MS} ms): Jain over {', '.join(f'{b:g}' for b in buffers)} BDP",
            ", ".join(f"{mean(jain[(v.name, b)]):.2f}" for b in buffers),
            note="the blog did not test its tuning against CUBIC (L97); CUBIC's share "
                 + ", ".join(pct(cubic_share[(v.name, b)]) for b in buffers) + "."))

    # Short RTTs down, long RTTs across: the largest RTT is never the
    # short one, the smallest never the long one.
    shorts, longs_ = rtts[:-1], rtts[1:]
    grid = {v.name: np.full((len(shorts), len(longs_)), np.nan) for v in FAMILIES}
    for (name, s, lg), xs in share.items():
        grid[name][shorts.index(s), longs_.index(lg)] = 100 * mean(xs)
    rep.sections.append(("The shorter flow's share (mean over seeds), %", markdown_table(
        ["algorithm"] + [f"{s}/{lg}" for s, lg in pairs(quick)],
        [[v.label] + [f"{100 * mean(share[(v.name, s, lg)]):.1f}" for s, lg in pairs(quick)] for v in FAMILIES])))
    rep.sections.append((f"High rate ({HIGH_RATE_MBPS} Mbit/s): the {HIGH_SHORT_MS} ms flow's share, %", markdown_table(
        ["algorithm"] + [f"{HIGH_SHORT_MS}/{lg}" for lg in highs],
        [[v.label] + [f"{100 * mean(high[(v.name, lg)]):.1f}" for lg in highs] for v in FAMILIES])))
    rep.sections.append((f"Against CUBIC at {CUBIC_RTT_MS} ms: Jain's index", markdown_table(
        ["algorithm"] + [f"{b:g} BDP" for b in buffers],
        [[v.label] + [f"{mean(jain[(v.name, b)]):.3f}" for b in buffers] for v in FAMILIES if v is not CUBIC])))
    if fig_dir is not None:
        heatmaps(fig_dir / "fairness_map.png", f"The shorter flow's share, {RATE_MBPS} Mbit/s, {BUFFER_BDP:g}-BDP "
                 "buffer (50% = fair)", shorts, longs_, [(v.label, grid[v.name]) for v in FAMILIES],
                 row_label="short RTT (ms)", col_label="long RTT (ms)", value_label="short flow's share (%)",
                 vmin=0.0, vmax=100.0, center=50.0, cmap="RdBu", per_row=3)
        # One row per algorithm (top to bottom in FAMILIES' order), one column per long RTT.
        high_grid = np.array([[100 * mean(high[(v.name, lg)]) for lg in highs] for v in reversed(FAMILIES)])
        heatmaps(fig_dir / "fairness_high_rate.png", f"The {HIGH_SHORT_MS} ms flow's share at {HIGH_RATE_MBPS} "
                 "Mbit/s (50% = fair)", [v.label for v in reversed(FAMILIES)], list(highs),
                 [(f"{HIGH_SHORT_MS} ms against", high_grid)], row_label="algorithm",
                 col_label="long RTT (ms)", value_label="short flow's share (%)", vmin=0.0, vmax=100.0,
                 center=50.0, cmap="RdBu")
        sweep(fig_dir / "vs_cubic.png", f"Against CUBIC, both {CUBIC_RTT_MS} ms, {RATE_MBPS} Mbit/s", list(buffers),
              [Series(v.label, [mean(jain[(v.name, b)]) for b in buffers],
                      [min(jain[(v.name, b)]) for b in buffers], [max(jain[(v.name, b)]) for b in buffers])
               for v in FAMILIES if v is not CUBIC],
              xlabel="buffer (BDP)", ylabel="Jain's index", logx=True, ylim=(0.5, 1.0))
        rep.figures += [Figure("fairness_map.png", "the shorter flow's share over (short RTT, long RTT), one colour "
                               f"scale for all {len(FAMILIES)} algorithms; blue: the short flow gets more than half"),
                        Figure("fairness_high_rate.png", "the high-rate row"),
                        Figure("vs_cubic.png", "Jain's index against CUBIC over buffer sizes (seed range as bars)")]
    return finish(rep, quick)


EXPERIMENT = Experiment(
    name="blog-fairness-map",
    figure="Figure 2, L35-L83",
    summary="the shorter flow's share over (short RTT, long RTT) for BBRv2 and tuned BBRv2 (judged), BBR, tuned BBR, "
            "BBRv3, tuned BBRv3, BBQ, DA-BBR, CUBIC; a 500 Mbit/s row; each against CUBIC over 0.5-8 BDP",
    runs=runs,
    analyse=analyse,
)
