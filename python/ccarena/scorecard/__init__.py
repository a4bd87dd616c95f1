"""``ccarena scorecard``: every algorithm through one standard battery
(battery.py), repeated over seeds, scored per criterion with 95%
confidence intervals, ranked per criterion and overall.

The runs go through ``ccarena sweep`` (one sweep per family under
``DIR/sweeps/``), so they are cached — a rerun or a resumed scorecard
computes only what is missing, and adding an algorithm runs only its
points — and they run on local cores or a Ray cluster.

``DIR/scorecard.json`` is the record (criteria, per algorithm and
criterion the per-seed values, mean, the 95% interval's half-width
``ci95`` (what ranking uses), that ``interval`` cut to the values the
criterion can take (what the figure draws), and rank; the overall
ranking); ``scorecard.md`` and ``scorecard.png`` (small multiples, one
panel per criterion) are renderings of it, as is the scorecard section
of ``ccarena report``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..progress import Progress
from ..scenario import SEED_LIMIT
from ..stats import clipped_interval, mean_ci95
from . import battery

DEFAULT_SEEDS = (1, 2, 3, 4, 5)


@dataclass
class ScorecardDone:
    out: Path
    record: dict[str, Any]
    points: int
    cached: int
    computed: int
    wall_s: float


def open_dir(out: Path) -> None:
    """Create ``out`` for a scorecard, or check it is one (to resume)."""
    from ..rundir import open_container

    open_container(out, "scorecard")


def check_args(ccs: Sequence[str], seeds: Sequence[int]) -> None:
    from .. import _core

    known = _core.cc_names()
    for cc in ccs:
        if cc.replace("-", "_") not in known:
            raise ScenarioError("--ccs", f"unknown congestion control {cc!r} (known: {', '.join(sorted(known))})")
    if len(ccs) < 2:
        raise ScenarioError("--ccs", "a scorecard ranks at least two algorithms")
    if len(set(ccs)) != len(ccs):
        raise ScenarioError("--ccs", "lists an algorithm twice")
    if not seeds or len(set(seeds)) != len(seeds) or any(not 0 <= s < SEED_LIMIT for s in seeds):
        raise ScenarioError("--seeds", f"expected distinct seeds from 0 to 2^64 - 1, got {list(seeds)}")


def run_scorecard(
    out: str | Path,
    *,
    ccs: Sequence[str] | None = None,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    executor: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    progress: bool = True,
) -> ScorecardDone:
    """Run (or resume) the battery for ``ccs`` (default: every algorithm
    compiled in) and write the scorecard; bad input raises ScenarioError
    before anything is written."""
    from .. import _core
    from ..sweep import load_sweep, run_sweep
    from ..sweep.executors import check_executor
    from .render import write_outputs

    ccs = list(ccs) if ccs is not None else sorted(_core.cc_names())
    ccs = [cc.replace("-", "_") for cc in ccs]
    check_args(ccs, seeds)
    check_executor(executor)
    sweeps = {name: load_sweep(doc) for name, doc in battery.family_docs(ccs, seeds).items()}
    out = Path(out)
    open_dir(out)
    started = time.perf_counter()
    rows: dict[str, list[dict[str, Any]]] = {}
    points = cached = computed = 0
    # One bar over every family's runs, named by the family running.
    total = sum(len(sweep.points) for sweep in sweeps.values())
    bar = Progress(total, what="scorecard", unit="run", log=True) if progress else None
    try:
        for name, sweep in sweeps.items():
            import pyarrow.parquet as pq

            if bar is not None:
                bar.set_what(f"scorecard {name}")
            done = run_sweep(sweep, out / "sweeps" / name, executor=executor, jobs=jobs, address=address,
                             progress=bar if bar is not None else False)
            rows[name] = pq.read_table(done.table).to_pylist()
            points += done.points
            cached += done.cached
            computed += done.computed
    finally:
        if bar is not None:
            bar.close()
    record = score(rows, ccs, list(seeds))
    write_outputs(out, record)
    return ScorecardDone(out, record, points, cached, computed, time.perf_counter() - started)


def score(rows: dict[str, list[dict[str, Any]]], ccs: Sequence[str], seeds: Sequence[int]) -> dict[str, Any]:
    """The scorecard record from the families' points."""
    criteria = []
    ranks: dict[str, list[int]] = {cc: [] for cc in ccs}
    for crit in battery.CRITERIA:
        entries = {}
        for cc in ccs:
            per_seed = [float(crit.value(battery.rows_of(rows[crit.family], cc, s))) for s in seeds]
            mean, ci = mean_ci95(per_seed)
            interval = clipped_interval(mean, ci, crit.bounds)
            entries[cc] = {"values": [_clean(v) for v in per_seed], "mean": _clean(mean), "ci95": _clean(ci),
                           "interval": None if interval is None else [_clean(x) for x in interval]}
        order = sorted(ccs, key=lambda c: (entries[c]["mean"] is None, -crit.better * (entries[c]["mean"] or 0.0), c))
        for cc, r in rank(order, entries, crit.resolution).items():
            entries[cc]["rank"] = r
            ranks[cc].append(r)
        criteria.append({"key": crit.key, "label": crit.label, "better": "higher" if crit.better > 0 else "lower",
                         "unit": crit.unit, "meaning": crit.meaning, "ranking": order, "scores": entries})
    mean_rank = {cc: sum(r) / len(r) for cc, r in ranks.items()}
    overall = sorted(ccs, key=lambda c: (mean_rank[c], c))
    return {
        "algorithms": list(ccs),
        "seeds": list(seeds),
        "setup": {"duration": battery.DURATION, "measure_from": battery.MEASURE_FROM, "rate": battery.RATE,
                  "rtt_pairs_ms": [list(p) for p in battery.RTT_PAIRS], "cubic_buffers": list(battery.CUBIC_BUFFERS)},
        "criteria": criteria,
        "overall": [{"cc": cc, "mean_rank": round(mean_rank[cc], 6), "rank": i} for i, cc in enumerate(overall, 1)],
    }


def rank(order: Sequence[str], entries: dict[str, dict[str, Any]], resolution: float) -> dict[str, float]:
    """Ranks (1 best) of the algorithms in ``order`` (best mean first),
    with ties: walking down the order, an algorithm joins the group of the
    one before it when its mean is within the larger of the two 95%
    intervals, or within ``resolution`` (practically equal), of the group's
    first mean; a group's members share the mean of their positions
    (fractional ranks, so a criterion that cannot tell algorithms apart
    does not move the overall ranking). An undefined mean ranks last."""
    ranks: dict[str, float] = {}
    groups: list[list[str]] = []
    for cc in order:
        e = entries[cc]
        if groups and e["mean"] is not None:
            head = entries[groups[-1][0]]
            if head["mean"] is not None:
                margin = max(resolution, head["ci95"] or 0.0, e["ci95"] or 0.0)
                if abs(e["mean"] - head["mean"]) <= margin:
                    groups[-1].append(cc)
                    continue
        groups.append([cc])
    position = 1
    for group in groups:
        shared = position + (len(group) - 1) / 2
        for cc in group:
            ranks[cc] = shared
        position += len(group)
    return ranks


def _clean(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 6)
