"""``ccarena compare``: one scenario on both engines, the two result tables
side by side with the differences (simulator minus live)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import workload_results
from ..results import Result
from ..scenario import ResolvedScenario, apply_overrides, param_specs, read_toml, resolve
from .ccs import sim_name
from .engine import load_live_scenario, run_live

#: The agreement the project aims at, per flow's share (percentage points).
TOLERANCE_PP = 7.0
#: ...and on the median queueing delay, relative to the live one (the
#: target every AQM's example is held to).
QUEUE_TOLERANCE = 0.30


#: Where the simulator's algorithms take their loss signals from
#: (``--sim-signals``): "exact", the per-skb tx_in_flight and lost counts
#: Linux's kernel code reads (the default, as Google's kernels run BBRv2/v3),
#: or "bpf", the estimates our BPF build must make because struct_ops cannot
#: read them (``estimate_tx_signals = 1`` on every flow whose algorithm has
#: it): the same C as the live run, like for like.
SIM_SIGNALS = ("exact", "bpf")
#: The parameter "bpf" sets (cc/include/bbr3_core.h).
ESTIMATE_PARAM = "estimate_tx_signals"


def load_both(path: str | Path, overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
              bottleneck: str = "auto", sim_signals: str = "exact") -> tuple[ResolvedScenario, ResolvedScenario]:
    """The scenario for the simulator (``NAME@ccarena`` read as ``NAME``;
    with ``sim_signals="bpf"`` the BPF build's loss-signal estimates) and
    for the live engine."""
    path = Path(path)
    doc = read_toml(path)
    if overrides:
        doc = apply_overrides(doc, overrides)
    live = load_live_scenario(doc, bottleneck=bottleneck, base_dir=path.parent)
    sim_doc = apply_overrides(doc, [(f"{table}.{i}.cc", sim_name(f["cc"])) for table in ("flow", "workload")
                                    for i, f in enumerate(doc.get(table) or [])])
    if sim_signals == "bpf":
        sim_doc = apply_overrides(sim_doc, [(f"flow.{i}.params.{ESTIMATE_PARAM}", 1)
                                            for i, f in enumerate(sim_doc.get("flow") or [])
                                            if any(spec.key == ESTIMATE_PARAM for spec in param_specs(f["cc"]))])
    sim = resolve(sim_doc, name=path.stem, base_dir=path.parent)
    live = ResolvedScenario(name=path.stem, model=live.model, human=live.human, config=live.config)
    return sim, live


def compare(path: str | Path, overrides=None, out: str | Path | None = None,
            announce: str | None = None, bottleneck: str = "auto", wait: float | None = None,
            sim_signals: str = "exact") -> tuple[Result, Result]:
    """Run both engines (live first: it is the one that can be refused);
    with ``out``, write one comparison directory holding the run
    directories ``out/sim`` and ``out/live`` (all or nothing). ``wait``: as
    for :func:`~ccarena.live.engine.run_live`; ``sim_signals``: one of
    :data:`SIM_SIGNALS`."""
    from ..api import run as run_sim
    from ..rundir import atomic_dir, check_target, write_run_dir

    sim_scenario, live_scenario = load_both(path, overrides, bottleneck, sim_signals)
    if out is not None:
        check_target(Path(out), "compare")
    live = run_live(live_scenario, announce=announce, bottleneck=bottleneck, wait=wait)
    sim = run_sim(sim_scenario)
    if out is not None:
        with atomic_dir(Path(out), "compare") as tmp:
            write_run_dir(tmp / "sim", sim.write_files)
            write_run_dir(tmp / "live", live.write_files)
        sim.out, live.out = Path(out) / "sim", Path(out) / "live"
    return sim, live


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "n/a" if x is None else format(x, fmt)


def _diff(a: float | None, b: float | None, scale: float = 1.0, fmt: str = "+.1f") -> str:
    return "n/a" if a is None or b is None else format(scale * (a - b), fmt)


def max_share_gap_pp(sim: Result, live: Result) -> float:
    return max((abs(100 * (s["share"] - v["share"])) for s, v in zip(sim.flows, live.flows, strict=True)), default=0.0)


def table(sim: Result, live: Result) -> str:
    # A topology's flows: their base RTT (links' delays included) and
    # their goodput over their max-min share on each engine.
    routed = any("of_maxmin" in f for f in sim.flows)
    rows = [("flow", "cc", "rtt", "share sim", "share live", "Δ pp", "Mbit/s sim", "Mbit/s live", "Δ Mbit/s",
             "retx sim", "retx live") + (("of max-min sim", "of max-min live") if routed else ())]
    for s, v in zip(sim.flows, live.flows, strict=True):
        rows.append((str(s["index"]), v["cc"], f"{s.get('base_rtt_ms', s['rtt_ms']):g} ms", _pct(s["share"]),
                     _pct(v["share"]), _diff(s["share"], v["share"], 100), _num(s["goodput_mbps"]),
                     _num(v["goodput_mbps"]), _diff(s["goodput_mbps"], v["goodput_mbps"], 1, "+.2f"),
                     str(s["retransmits"]), str(v["retransmits"]))
                    + ((_pct(s["of_maxmin"]), _pct(v["of_maxmin"])) if routed else ()))
    a, b = sim.summary, live.summary
    qa, qb = a["queue_delay_ms"], b["queue_delay_ms"]
    totals = [
        ("total goodput Mbit/s", _num(a["goodput_total_mbps"]), _num(b["goodput_total_mbps"]),
         _diff(a["goodput_total_mbps"], b["goodput_total_mbps"], 1, "+.2f")),
        ("utilisation", _pct(a["utilization"]), _pct(b["utilization"]),
         _diff(a["utilization"], b["utilization"], 100) + " pp"),
        ("Jain", _num(a["jain"], ".4f"), _num(b["jain"], ".4f"), _diff(a["jain"], b["jain"], 1, "+.4f")),
        ("queue delay mean ms", _num(qa["mean"]), _num(qb["mean"]), _diff(qa["mean"], qb["mean"], 1, "+.2f")),
        ("queue delay p50 ms", _num(qa["p50"]), _num(qb["p50"]), _diff(qa["p50"], qb["p50"], 1, "+.2f")),
        ("queue delay p95 ms", _num(qa["p95"]), _num(qb["p95"]), _diff(qa["p95"], qb["p95"], 1, "+.2f")),
        ("drops", str(a["drops"]), str(b["drops"]), f"{a['drops'] - b['drops']:+d}"),
    ]
    if a.get("marks") is not None and b.get("marks") is not None:
        totals.append(("ECN marks", str(a["marks"]), str(b["marks"]), f"{a['marks'] - b['marks']:+d}"))
    lines = _align(rows, right_from=3)
    lines.append("")
    lines += _align([("", "sim", "live", "Δ (sim - live)"), *totals], right_from=1)
    if a.get("workloads"):
        lines += ["", "sim:", *workload_results.lines(a), "live:", *workload_results.lines(b)]
    gap = max_share_gap_pp(sim, live)
    verdict = "within" if gap <= TOLERANCE_PP else "OUTSIDE"
    lines += ["", f"largest share difference {gap:.1f} pp ({verdict} ±{TOLERANCE_PP:g} pp)"]
    rel = median_delay_gap(sim, live)
    if rel is not None:
        verdict = "within" if abs(rel) <= QUEUE_TOLERANCE else "OUTSIDE"
        lines.append(f"median queueing delay differs by {100 * rel:+.0f}% of live ({verdict} ±{100 * QUEUE_TOLERANCE:.0f}%)")
    return "\n".join(lines)


def median_delay_gap(sim: Result, live: Result) -> float | None:
    """(sim - live) / live of the median queueing delay; None if either has
    none or the live one is 0."""
    a, b = sim.summary["queue_delay_ms"]["p50"], live.summary["queue_delay_ms"]["p50"]
    return None if a is None or not b else (a - b) / b


def _align(rows: list[tuple[str, ...]], right_from: int) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.rjust(w) if c >= right_from else cell.ljust(w)
                       for c, (cell, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines
