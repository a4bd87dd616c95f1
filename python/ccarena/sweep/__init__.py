"""``ccarena sweep``: a scenario over a grid of values and seeds, cached
point by point, on local cores or a Ray cluster, into one Parquet table.

    from ccarena.sweep import run_sweep
    done = run_sweep("sweep.toml", "runs/my-sweep")
    import pandas; df = pandas.read_parquet(done.table)

The files of ``DIR``:

- ``points.parquet`` — one row per point (table.py), in grid order;
- ``sweep.json`` — the axes, and per point its values, cache key and
  the command that re-runs it alone (``ccarena run SWEEP.toml --point N``);
- ``points/<key>.json`` — each finished point's summary (cache.py);
- ``runs/<point>/`` — with ``save_runs``, each point's run directory
  (summary.json, timeseries.parquet, link.parquet, goodput.png).
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..experiments.framework import Outcome, RunSpec
from ..progress import Progress
from . import cache, executors, table
from .spec import Point, Sweep, load_sweep

__all__ = ["SweepDone", "load_sweep", "point_scenario", "run_sweep"]

TABLE = "points.parquet"
INDEX = "sweep.json"
RUNS = "runs"


@dataclass
class SweepDone:
    """What :func:`run_sweep` did: the table it wrote, how many points
    were cached and computed, and the time spent (wall, and inside the
    engine summed over the points computed)."""

    out: Path
    table: Path
    points: int
    cached: int
    computed: int
    wall_s: float
    engine_s: float
    summaries: list[dict[str, Any]]


def run_sweep(
    source: str | Path | Mapping[str, Any] | Sweep,
    out: str | Path,
    *,
    executor: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    save_runs: bool = False,
    sweep_file: str | None = None,
    progress: bool | Progress = True,
) -> SweepDone:
    """Run every point not yet in ``out``'s cache and write the table.
    Bad input raises :class:`ScenarioError` before anything is written.
    ``progress``: True for a bar of its own (ccarena.progress), False for
    none, or a bar to advance that the caller owns (the scorecard's one
    over all its sweeps)."""
    sweep = source if isinstance(source, Sweep) else load_sweep(source)
    out = Path(out)
    executors.check_executor(executor)
    cache.open_sweep_dir(out)
    started = time.perf_counter()

    keys = [cache.point_key(p.scenario, sweep.derive) for p in sweep.points]
    summaries: dict[int, dict[str, Any]] = {}
    for point, key in zip(sweep.points, keys, strict=True):
        if (found := cache.load_point(out, key)) is not None:
            summaries[point.index] = found
    todo = [p for p in sweep.points if p.index not in summaries]
    if save_runs:
        # A cached point whose run directory is missing runs again to write it.
        todo += [p for p in sweep.points if p.index in summaries and not (out / RUNS / _run_name(p)).is_dir()]
        todo.sort(key=lambda p: p.index)
    cached = len(sweep.points) - len(todo)
    if isinstance(progress, Progress):
        bar, own_bar = progress, False
        bar.skip(cached)
    else:
        own_bar = bool(progress)
        bar = Progress(len(sweep.points), what=f"sweep {sweep.name}", unit="pt", initial=cached, log=True) if own_bar else None
    engine_s = 0.0
    by_key = {str(p.index): p for p in todo}

    def finished(outcome: Outcome) -> None:
        nonlocal engine_s
        point = by_key[outcome.key]
        engine_s += outcome.engine_s
        summaries[point.index] = outcome.summary
        cache.store_point(out, keys[point.index], _values(point), outcome.summary)
        if bar is not None:
            bar.advance(point.label())

    specs = [
        RunSpec(
            key=str(p.index),
            scenario=dict(p.doc),
            name=sweep.name,
            derive=sweep.derive,
            out=str(out / RUNS / _run_name(p)) if save_runs else None,
        )
        for p in todo
    ]
    try:
        if specs:
            executors.run(specs, finished, executor=executor, jobs=jobs, address=address)
    finally:
        if own_bar and bar is not None:
            bar.close()

    rows = []
    for point, key in zip(sweep.points, keys, strict=True):
        summary = summaries[point.index]
        rows.append(
            {
                "point": point.index,
                "key": key,
                **_values(point),
                **table.setup_columns(point.scenario.config, point.scenario.human),
                **table.flatten_summary(summary),
            }
        )
    table.write_points(out / TABLE, rows)
    _write_index(out, sweep, keys, sweep_file)
    return SweepDone(
        out=out,
        table=out / TABLE,
        points=len(sweep.points),
        cached=cached,
        computed=len(todo),
        wall_s=time.perf_counter() - started,
        engine_s=engine_s,
        summaries=[summaries[p.index] for p in sweep.points],
    )


def _values(point: Point) -> dict[str, Any]:
    return dict(point.values)


def _run_name(point: Point) -> str:
    return f"{point.index:05d}"


def _write_index(out: Path, sweep: Sweep, keys: list[str], sweep_file: str | None) -> None:
    from ..rundir import write_file_atomic

    def rerun(point: Point) -> str | None:
        return None if sweep_file is None else f"ccarena run {shlex.quote(sweep_file)} --point {point.index}"

    doc = {
        "name": sweep.name,
        "sweep_file": sweep_file,
        "axes": {k: list(v) for k, v in sweep.axes.items()},
        "derive": list(sweep.derive),
        "points": [
            {"point": p.index, "key": key, "values": _values(p), "command": rerun(p)}
            for p, key in zip(sweep.points, keys, strict=True)
        ],
    }
    write_file_atomic(out / INDEX, json.dumps(doc, indent=1) + "\n")


def point_scenario(source: str | Path | Mapping[str, Any], index: int, overrides: Any = None) -> Any:
    """Point ``index`` of a sweep as a scenario (``ccarena run SWEEP.toml
    --point N``), with ``overrides`` applied on top: the scenario the
    sweep ran for that point, named as the sweep."""
    from ..errors import ScenarioError
    from ..scenario import apply_overrides, resolve

    sweep = load_sweep(source)
    if not 0 <= index < len(sweep.points):
        raise ScenarioError("--point", f"the sweep has points 0-{len(sweep.points) - 1}, got {index}")
    return resolve(apply_overrides(dict(sweep.points[index].doc), overrides or []), name=sweep.name,
                   base_dir=sweep.base_dir)
