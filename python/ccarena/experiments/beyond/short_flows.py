"""beyond-short-flows: web-search flows (CUBIC, arriving as a Poisson
process at half of a 1 Gbit/s link) next to one long flow of each
algorithm: how much longer do the short flows take than alone?

Flow sizes follow DCTCP's web-search measurements (Alizadeh et al.,
SIGCOMM 2010; examples/workloads/websearch.cdf); slowdown is a flow's
completion time over its completion time alone on the empty path, the
measure of pFabric (Alizadeh et al., SIGCOMM 2013) and HPCC (Li et al.,
SIGCOMM 2019). A long flow that keeps the buffer full delays every short
flow by that queue; one that takes more than its share leaves them less.
No paper of ours states a number: shown, not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..common import key, markdown_table, mean, runs_of, values
from ..figures import Series, grouped_bars
from ..framework import Experiment, Figure, Outcome, Report, RunSpec
from ..variants import flow
from .common import ALGORITHMS, finish, seeds

#: The web-search sizes shipped with the examples.
SIZES = Path(__file__).resolve().parents[4] / "examples" / "workloads" / "websearch.cdf"
RATE = "1Gbit"
RTT_MS = 10
BUFFER = "1bdp"
LOAD = 0.5
#: The long flow's cases: each algorithm, and none (the workload alone).
NONE = "none"
DURATION_S = 30.0
QUICK_DURATION_S = 10.0
WINDOW_FROM_S = 5.0
#: The size bin of the short flows (pFabric's and the workload summary's).
SMALL_BIN = "<=100KB"


def _duration(quick: bool) -> float:
    return QUICK_DURATION_S if quick else DURATION_S


def _cases() -> list[str]:
    return [v.name for v in ALGORITHMS] + [NONE]


def scenario(long_flow: str, *, seed: int, duration: float) -> dict:
    """The workload next to one bulk flow of ``long_flow`` (or alone)."""
    variant = {v.name: v for v in ALGORITHMS}.get(long_flow)
    return {
        "duration": f"{duration:g}s",
        "seed": seed,
        "measure": {"from": f"{min(WINDOW_FROM_S, duration / 2):g}s"},
        "bottleneck": {"rate": RATE, "buffer": BUFFER},
        **({"flow": [flow(variant, RTT_MS)]} if variant is not None else {}),
        "workload": [{"cc": "cubic", "rtt": f"{RTT_MS}ms", "sizes": str(SIZES), "load": LOAD}],
    }


def runs(quick: bool) -> list[RunSpec]:
    dur = _duration(quick)
    return [RunSpec(key(case, seed), scenario(case, seed=seed, duration=dur))
            for case in _cases() for seed in seeds(quick)]


def _window(run: Outcome) -> dict:
    return run.summary["workloads"][0]["window"]


def _small(run: Outcome) -> dict:
    return next(b for b in run.summary["workloads"][0]["bins"] if b["bin"] == SMALL_BIN)


def analyse(outcomes: Mapping[str, Outcome], fig_dir: Path | None, quick: bool) -> Report:
    dur = _duration(quick)
    label = {v.name: v.label for v in ALGORITHMS} | {NONE: "none (workload alone)"}
    per = {c: runs_of(outcomes, c, seeds(quick)) for c in _cases()}
    small_p50 = {c: values(r, lambda o: _small(o)["slowdown"]["p50"]) for c, r in per.items()}
    small_p99 = {c: values(r, lambda o: _small(o)["slowdown"]["p99"]) for c, r in per.items()}
    all_p50 = {c: values(r, lambda o: _window(o)["slowdown"]["p50"]) for c, r in per.items()}
    unfinished = {c: values(r, lambda o: _window(o)["unfinished"] / _window(o)["flows"]) for c, r in per.items()}
    long_share = {c: values(r, lambda o: o.goodput(0) / 1000 if c != NONE else 0.0) for c, r in per.items()}
    rep = Report(setup=[
        f"One {RATE}it/s bottleneck, droptail, {BUFFER.replace('bdp', ' BDP')} ({RTT_MS} ms). CUBIC flows arrive as a "
        f"Poisson process offering {LOAD:g} of the link, sizes from DCTCP's web-search CDF "
        "(examples/workloads/websearch.cdf, Alizadeh et al. SIGCOMM 2010); next to one bulk flow of each algorithm, "
        f"or none. {dur:g} s, flows arriving in {min(WINDOW_FROM_S, dur / 2):g}-{dur:g} s counted; seeds "
        f"{', '.join(map(str, seeds(quick)))}.",
        "Slowdown: a flow's completion time over its completion time alone on the empty path (pFabric, HPCC); "
        f"short flows are those of at most 100 KB. Unfinished: flows still running when the run ends.",
        "No paper of ours states a number for short flows: every row is shown, not judged.",
    ])
    rows = []
    for c in _cases():
        rep.numbers[f"{c}.small.slowdown_p50"] = mean(small_p50[c])
        rep.numbers[f"{c}.small.slowdown_p99"] = mean(small_p99[c])
        rep.numbers[f"{c}.unfinished"] = mean(unfinished[c])
        rows.append([label[c], f"{mean(small_p50[c]):.2f}", f"{mean(small_p99[c]):.1f}", f"{mean(all_p50[c]):.2f}",
                     f"{100 * mean(unfinished[c]):.1f}%", "-" if c == NONE else f"{100 * mean(long_share[c]):.0f}%"])
    rep.sections.append(("Short flows next to one long flow (mean over seeds)", markdown_table(
        ["long flow", "short-flow slowdown p50", "short-flow slowdown p99", "all flows' slowdown p50",
         "unfinished", "long flow's goodput / link"], rows)))
    if fig_dir is not None:
        cases = _cases()
        grouped_bars(fig_dir / "short_flows.png", f"Web-search flows at {LOAD:g} load next to one long flow: median "
                     "slowdown (mean and range over seeds)", [label[c].split(" (")[0] for c in cases],
                     [Series(f"flows <= 100 KB", [mean(small_p50[c]) for c in cases],
                             [min(small_p50[c]) for c in cases], [max(small_p50[c]) for c in cases]),
                      Series("all flows", [mean(all_p50[c]) for c in cases], [min(all_p50[c]) for c in cases],
                             [max(all_p50[c]) for c in cases])],
                     ylabel="median slowdown (FCT / FCT alone)", hline=(1.0, "as fast as alone"), ylim=None)
        rep.figures.append(Figure("short_flows.png", "The short flows' median slowdown next to each long flow"))
    return finish(rep, quick)


EXPERIMENT = Experiment(
    name="beyond-short-flows",
    figure="beyond the papers (short flows)",
    summary="web-search CUBIC flows at half of 1 Gbit/s next to one long BBR, BBRv3, BBQ, BBR-CWS or CUBIC flow "
            "(or none): the short flows' slowdown",
    runs=runs,
    analyse=analyse,
)
