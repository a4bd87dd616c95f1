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
    derive = ["convergence"]                   # optional: metrics from the telemetry (derive.py)

A key naming several paths, comma-separated, is one axis whose values
set them together (a list per value), e.g. RTT pairs rather than every
combination:

    "flow.0.rtt,flow.1.rtt" = [["10ms", "20ms"], ["10ms", "50ms"], ["50ms", "250ms"]]

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
from ..scenario import ResolvedScenario, absolute_paths, apply_overrides, read_source, resolve, source_dir

#: The table holding the axes.
TABLE = "sweep"
#: Its key for the seeds, and for derived metrics (every other key is a
#: dotted scenario path).
SEEDS = "seeds"
DERIVE = "derive"
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
    #: The scenario document it was resolved from, the files it names
    #: made absolute: what a worker resolves again, wherever it runs.
    doc: Mapping[str, Any]

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
    #: Derived metrics every point computes (sweep/derive.py).
    derive: tuple[str, ...] = ()
    #: What the sweep file's relative paths (traces, size files, a host
    #: model file) are relative to, in the base and in axis values alike.
    base_dir: Path | None = None


def load_sweep(source: str | Path | Mapping[str, Any], *, known_ccs: Sequence[str] | None = None) -> Sweep:
    """Read (a path, TOML text or a dict, as :func:`ccarena.load_scenario`),
    expand and validate every point. Problems are :class:`ScenarioError`."""
    doc, name = read_source(source)
    table = doc.pop(TABLE, None)
    if table is None:
        raise ScenarioError(TABLE, "missing: add a [sweep] table mapping dotted scenario paths to lists of values")
    if not isinstance(table, Mapping) or not table:
        raise ScenarioError(TABLE, "expected a table of dotted paths to lists, e.g. \"bottleneck.rate\" = [\"10Mbit\", \"1Gbit\"]")
    table = dict(table)
    derive = _derive(table.pop(DERIVE, []))
    axes = _axes(table)
    base_dir = source_dir(source)
    combos = list(itertools.product(*axes.values()))
    if len(combos) > MAX_POINTS:
        raise ScenarioError(TABLE, f"{len(combos)} points, more than {MAX_POINTS}: split the sweep")
    points = []
    for index, combo in enumerate(combos):
        values: dict[str, Any] = {}
        for axis, value in zip(axes, combo, strict=True):
            paths = axis.split(",")
            values.update(zip(paths, value if len(paths) > 1 else [value], strict=True))
        overrides = list(values.items())
        try:
            # Its files as the sweep file names them, wherever the point runs.
            point_doc = absolute_paths(apply_overrides(doc, overrides), base_dir)
            scenario = resolve(point_doc, name=name, known_ccs=known_ccs, base_dir=base_dir)
        except ScenarioError as err:
            where = " ".join(f"{k}={v}" for k, v in values.items())
            raise ScenarioError(f"{err.path} (sweep point {index}: {where})", err.problem) from None
        points.append(Point(index, values, scenario, point_doc))
    return Sweep(name=name, base=doc, axes=axes, points=points, derive=derive, base_dir=base_dir)


def _derive(names: Any) -> tuple[str, ...]:
    from .derive import DERIVED

    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ScenarioError(f"{TABLE}.{DERIVE}", f"expected a list of names ({', '.join(DERIVED)}), got {names!r}")
    for n in names:
        if n not in DERIVED:
            raise ScenarioError(f"{TABLE}.{DERIVE}", f"unknown derived metric {n!r} (known: {', '.join(DERIVED)})")
    return tuple(dict.fromkeys(names))


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
        paths = key.split(",")
        if any(not part for path in paths for part in path.split(".")):
            raise ScenarioError(where, "malformed dotted path")
        if len(paths) > 1:
            if len(set(paths)) != len(paths):
                raise ScenarioError(where, "names a path twice")
            if not all(isinstance(v, list) and len(v) == len(paths) for v in values):
                raise ScenarioError(where, f"each value must be a list of {len(paths)} values, one per path")
            flat = [x for v in values for x in v]
        else:
            flat = values
        if any(isinstance(v, dict | list) for v in flat):
            raise ScenarioError(where, "values must be plain values (strings, numbers, booleans), not tables or lists")
        axes[key] = [tuple(v) for v in values] if len(paths) > 1 else values
    if seeds is not None:
        axes["seed"] = seeds
    if not axes:
        raise ScenarioError(TABLE, "has no axis")
    return axes
