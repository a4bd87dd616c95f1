"""The scenario's ``host``: what the hosts at both ends add to the timing
(crates/sim/src/host.rs; docs/host.md).

``host = "linux"`` (the default) is the model measured on Linux by
``ccarena live host --measure`` (python/ccarena/live/hostmodel.py) and
committed as ``python/ccarena/hosts/linux.toml``; ``"linux-busy"`` the same
host with every CPU busy; ``"linux-stalls"`` a machine whose path stalled
~18 times a second (the default until 2026-11-28; docs/host.md, "Two
machines, two testbeds"); ``"ideal"`` no host at all (exact timing, the
ablation); a path names a model file of the same form (relative to the
scenario file); a table gives one inline:

    [host]
    start_spread_ns = 1000000
    ack_delay_ns = [[0.0, 20000], [0.5, 90000], [1.0, 300000]]
    timer_lateness_ns = [[0.0, 5000], [1.0, 60000]]
    stalls_per_s = 4.0
    stall_length_ns = [[0.0, 300000], [1.0, 1500000]]
    hz = 250

A distribution is [cumulative probability, ns] points: probabilities rising
from 0 to 1, values never falling (an empirical inverse CDF). ``hz`` is the
sender kernel's tick rate (CONFIG_HZ; 1000 if not given): a divisor of
1000, since the congestion controls count jiffies in whole ms. The live
engine ignores ``host``: its hosts are real.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, StrictFloat, StrictInt, ValidationError

from .errors import ScenarioError
from .scenario_limits import check
from .scenario_types import Strict, read_small_file, scenario_file

#: The directory of the named models.
MODELS = Path(__file__).parent / "hosts"
#: The model a scenario gets when it names none.
DEFAULT = "linux"
#: No host model: exact timing.
IDEAL = "ideal"
#: The distributions of a model, by key (scenario and engine alike).
DISTRIBUTIONS = ("ack_delay_ns", "timer_lateness_ns", "stall_length_ns")

#: A cumulative probability (NaN, infinities and integers too large for a
#: float fail here, naming the point).
Probability = Annotated[StrictFloat | StrictInt, Field(ge=0, le=1)]
#: A distribution's point: (cumulative probability, ns).
Point = tuple[Probability, StrictInt]


class HostTable(Strict):
    """A host model, as a model file or a scenario's [host] table has it."""

    start_spread_ns: StrictInt = Field(default=0, ge=0)
    ack_delay_ns: list[Point] = Field(default_factory=list)
    timer_lateness_ns: list[Point] = Field(default_factory=list)
    stalls_per_s: StrictFloat | StrictInt = Field(default=0, ge=0)
    stall_length_ns: list[Point] = Field(default_factory=list)
    hz: StrictInt = 1000


def whole_ms_tick(hz: int, limits: Mapping[str, int]) -> bool:
    """Whether a tick rate gives whole-ms ticks, as the engine takes them:
    ``hz`` divides the largest rate (1000; the algorithms count jiffies in
    ms)."""
    return 0 < hz and limits["max_host_hz"] % hz == 0


def names() -> list[str]:
    """The named models: the files in hosts/, and "ideal"."""
    return sorted([p.stem for p in MODELS.glob("*.toml")] + [IDEAL])


def _table(doc: Any, path: str) -> HostTable:
    try:
        return HostTable.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"] if p not in ("float", "int"))
        raise ScenarioError(f"{path}.{where}" if where else path, first["msg"].lower()) from None


#: A host model file is a few lines of TOML; anything larger is not one.
MAX_MODEL_FILE_BYTES = 1 << 20


def is_model_file(value: str) -> bool:
    """Whether a scenario's ``host`` string names a model file (a path or
    a ``.toml`` name) rather than a named model."""
    return "/" in value or value.endswith(".toml")


def _read_file(file: Path, path: str) -> HostTable:
    data = read_small_file(file, str(file), path, MAX_MODEL_FILE_BYTES, "a host model")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ScenarioError(path, f"{str(file)!r} is not a host model (TOML): {err}") from None
    return _table(doc, path)


def resolve_host(value: str | HostTable | None, base_dir: Path | None,
                 limits: Mapping[str, int]) -> tuple[dict[str, Any] | None, Any]:
    """The engine's host config (None: ideal) and what summary.json
    records: the model's name, the file or the table given."""
    path = "host"
    if value is None:
        value = DEFAULT
    if isinstance(value, HostTable):
        table, shown = value, value.model_dump()
    elif value == IDEAL:
        return None, IDEAL
    elif not is_model_file(value):
        if value not in names():
            raise ScenarioError(path, f"unknown host model {value!r} (known: {', '.join(names())}; "
                                      "or a model file, or a [host] table)")
        table, shown = _read_file(MODELS / f"{value}.toml", path), value
    else:
        file = scenario_file(value, base_dir)
        table, shown = _read_file(file, path), str(file)
    check(f"{path}.start_spread_ns", table.start_spread_ns, table.start_spread_ns, "ns", limits,
          shown=f"{table.start_spread_ns} ns")
    check(f"{path}.stalls_per_s", table.stalls_per_s, table.stalls_per_s, "hz", limits,
          shown=f"{_number(table.stalls_per_s)} per second")
    for key in DISTRIBUTIONS:
        _check_distribution(f"{path}.{key}", getattr(table, key), limits)
    if table.stalls_per_s and not table.stall_length_ns:
        raise ScenarioError(f"{path}.stall_length_ns", "stalls need their lengths")
    check(f"{path}.hz", table.hz, table.hz, "hz", limits, shown=f"{table.hz} Hz")
    if not whole_ms_tick(table.hz, limits):
        raise ScenarioError(f"{path}.hz", f"{table.hz} Hz is not a whole number of ms per tick "
                                          f"(it must divide {limits['max_host_hz']}: 100, 250, 1000, ...)")
    config = {
        "start_spread_ns": table.start_spread_ns,
        **{key: [[float(p), v] for p, v in getattr(table, key)] for key in DISTRIBUTIONS},
        "stalls_per_s": float(table.stalls_per_s),
        "hz": table.hz,
    }
    return config, shown


def _number(x: float | int) -> str:
    # An integer as written (TOML's can be too large for a float's :g).
    return str(x) if isinstance(x, int) else f"{x:g}"


def _check_distribution(path: str, points: list[tuple[float, int]], limits: Mapping[str, int]) -> None:
    """An inverse CDF within the engine's limits (as validate.rs checks it)."""
    if not points:
        return
    check(path, points, len(points), "points", limits, shown=f"{len(points)} points")
    probs = [float(p) for p, _ in points]
    if probs[0] != 0.0 or probs[-1] != 1.0 or any(b <= a for a, b in zip(probs, probs[1:])):
        raise ScenarioError(path, "cumulative probabilities must rise from 0.0 to 1.0")
    values = [v for _, v in points]
    if values[0] < 0 or any(b < a for a, b in zip(values, values[1:])):
        raise ScenarioError(path, "values (ns) must be non-negative and never fall")
    check(path, points, values[-1], "ns", limits, shown=f"{values[-1]} ns")
