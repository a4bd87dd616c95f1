"""A sweep file: a scenario plus a ``[sweep]`` table, expanded to a grid.

    duration = "60s"
    [bottleneck]
    rate = "100Mbit"
    buffer = "2MB"
    [[flow]]
    cc = "bbr"
    rtt = "10ms"
    [[flow]]
    cc = "bbr"
    rtt = "50ms"

    [sweep]
    "bottleneck.rate" = ["10Mbit", "1Gbit"]   # dotted paths, as --set spells them
    "flow.1.rtt" = ["20ms", "50ms"]
    seeds = [1, 2, 3]                          # optional; the scenario's seed otherwise

The grid is the product of the axes in the order they are written, seeds
innermost: point 0 is every axis's first value with the first seed. Every
point is resolved (validated) before anything runs, so a bad value is one
line naming the axis, the point and the problem, and nothing is written.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario import ResolvedScenario, apply_overrides, read_source, resolve, source_dir

#: The table holding the axes.
TABLE = "sweep"
#: Its key for the seeds (every other key is a dotted scenario path).
SEEDS = "seeds"
#: Most points one sweep may have: a typo in an axis should not start a
#: million runs. A larger study is several sweeps.
MAX_POINTS = 100_000


@dataclass(frozen=True)
class Point:
    """One point of the grid: its position, the value of every axis (by
    dotted path, ``seed`` last) and its resolved scenario."""

    index: int
    values: Mapping[str, Any]
    scenario: ResolvedScenario

    def label(self) -> str:
        """``bottleneck.rate=10Mbit flow.1.rtt=20ms seed=1``."""
        return " ".join(f"{k}={v}" for k, v in self.values.items())


@dataclass(frozen=True)
class Sweep:
    """A parsed, expanded, validated sweep."""

    name: str
    #: The scenario document without the [sweep] table.
    base: Mapping[str, Any]
    #: Axis -> values, in file order; ``seed`` last if the file has seeds.
    axes: Mapping[str, Sequence[Any]]
    points: Sequence[Point]


def load_sweep(source: str | Path | Mapping[str, Any], *, known_ccs: Sequence[str] | None = None) -> Sweep:
    """Read (a path, TOML text or a dict, as :func:`ccarena.load_scenario`),
    expand and validate every point. Problems are :class:`ScenarioError`."""
    doc, name = read_source(source)
    table = doc.pop(TABLE, None)
    if table is None:
        raise ScenarioError(TABLE, "missing: add a [sweep] table mapping dotted scenario paths to lists of values")
    if not isinstance(table, Mapping) or not table:
        raise ScenarioError(TABLE, "expected a table of dotted paths to lists, e.g. \"bottleneck.rate\" = [\"10Mbit\", \"1Gbit\"]")
    axes = _axes(table)
    base_dir = source_dir(source)
    # A relative link trace is relative to the sweep file, wherever points run.
    doc = _absolute_trace(doc, base_dir)
    combos = list(itertools.product(*axes.values()))
    if len(combos) > MAX_POINTS:
        raise ScenarioError(TABLE, f"{len(combos)} points, more than {MAX_POINTS}: split the sweep")
    points = []
    for index, combo in enumerate(combos):
        values = dict(zip(axes, combo, strict=True))
        overrides = [(path, value) for path, value in values.items()]
        try:
            point_doc = apply_overrides(doc, overrides)
            scenario = resolve(point_doc, name=name, known_ccs=known_ccs, base_dir=base_dir)
        except ScenarioError as err:
            where = " ".join(f"{k}={v}" for k, v in values.items())
            raise ScenarioError(f"{err.path} (sweep point {index}: {where})", err.problem) from None
        points.append(Point(index, values, scenario))
    return Sweep(name=name, base=doc, axes=axes, points=points)


def _axes(table: Mapping[str, Any]) -> dict[str, list[Any]]:
    axes: dict[str, list[Any]] = {}
    seeds = None
    for key, values in table.items():
        where = f'{TABLE}."{key}"' if "." in key else f"{TABLE}.{key}"
        if not isinstance(values, list) or not values:
            raise ScenarioError(where, f"expected a non-empty list of values, got {values!r}")
        if len(set(map(repr, values))) != len(values):
            raise ScenarioError(where, "lists a value twice")
        if key == SEEDS:
            if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in values):
                raise ScenarioError(where, f"expected non-negative integers, got {values!r}")
            seeds = values
            continue
        if key == "seed":
            raise ScenarioError(where, f"give the seeds as {SEEDS} = [...]")
        if any(not part for part in key.split(".")):
            raise ScenarioError(where, "malformed dotted path")
        if any(isinstance(v, dict) for v in values):
            raise ScenarioError(where, "values must be plain values (strings, numbers, booleans), not tables")
        axes[key] = values
    if seeds is not None:
        axes["seed"] = seeds
    if not axes:
        raise ScenarioError(TABLE, "has no axis")
    return axes


def _absolute_trace(doc: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    trace = doc.get("bottleneck", {}).get("trace") if isinstance(doc.get("bottleneck"), dict) else None
    if base_dir is None or not isinstance(trace, str) or Path(trace).is_absolute():
        return doc
    return apply_overrides(doc, [("bottleneck.trace", str((base_dir / trace).resolve()))])
