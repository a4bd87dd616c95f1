"""``[[workload]]``: sized flows that arrive by a Poisson process, at a
load (a fraction of a link's rate) or an explicit arrival rate, with sizes
from a distribution file or one fixed size. The engine's side is
crates/sim/src/workload.rs; what a run reports of them,
workload_results.py; docs/scenario-format.md ("Workloads") is the reference.

A size distribution file has one point of the CDF per line, ``bytes
cumulative-probability`` (``#`` starts a comment), both never falling,
the last probability 1: examples/workloads/websearch.cdf and
datamining.cdf are the two the datacenter literature uses most. Sizes
between two points are interpolated linearly (as HPCC's and pFabric's
traffic generators and ns-3's EmpiricalRandomVariable do), and the mean
that turns a load into an arrival rate is that of the interpolated
distribution (:func:`mean_size`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StrictInt

from . import units
from .errors import ScenarioError
from .scenario_limits import check as check_limits
from .scenario_types import Instant, Number, Quantity, SizeText, Strict, Time, TimeOrZero, read_small_file, scenario_file

#: A size file is a few dozen lines; this stops a wrong file (a trace, a
#: device) from being read whole.
MAX_SIZES_FILE_BYTES = 1 << 20
#: Flows of a workload in progress at once by default: far above what a
#: link carries at a load below 1, low enough to bound memory in overload.
DEFAULT_MAX_ACTIVE = 1000


class Workload(Strict):
    """A stream of sized flows of one kind."""

    cc: str = Field(min_length=1)
    rtt: Time
    #: With [[link]]s: the links the flows' data crosses, and their ACKs'.
    path: list[str] | None = None
    reverse: list[str] | None = None
    params: Annotated[dict[str, Any], Quantity("params")] = Field(default_factory=dict)
    ecn: StrictBool | Literal["off", "classic", "accecn"] | None = None
    jitter: TimeOrZero | None = None
    #: Offered load: the flows' mean payload rate as a fraction of
    #: ``link``'s rate (or give ``arrival_rate``).
    load: Number | None = Field(default=None, gt=0, le=1)
    #: The link whose rate ``load`` is a fraction of (a topology's; default
    #: the slowest on the path; the dumbbell's bottleneck).
    link: str | None = Field(default=None, min_length=1)
    #: Mean arrivals per second (instead of ``load``).
    arrival_rate: Number | None = Field(default=None, gt=0)
    #: A size distribution file, or one size for every flow.
    sizes: Annotated[str, Quantity("sizes")] | None = Field(default=None, min_length=1)
    size: SizeText | None = None
    #: Arrivals happen from ``start`` until ``stop`` (default: the end).
    start: Instant = "0s"
    stop: Time | None = None
    #: Flows in progress at once at most; an arrival beyond is refused.
    max_active: StrictInt = Field(default=DEFAULT_MAX_ACTIVE, ge=1)


def read_sizes(text: str, field: str, base_dir: Path | None, limits: Mapping[str, int]) -> list[list[float | int]]:
    """The engine's size points ``[[probability, bytes], ...]`` of a size
    file: from probability 0 (the first size carries any probability its
    line gives, as ns-3 reads such files) to 1, neither column falling;
    problems name the file and the line."""
    data = read_small_file(scenario_file(text, base_dir), text, field, MAX_SIZES_FILE_BYTES, "a size file")
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise ScenarioError(field, f"{text!r} is not UTF-8 text") from None
    points: list[list[float | int]] = []
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{text!r} line {number}"
        if len(words) != 2:
            raise ScenarioError(field, f"{where}: expected 'bytes probability', got {line.strip()!r}")
        size, prob = _number(words[0]), _number(words[1])
        if size is None or size < 0 or size != int(size):
            raise ScenarioError(field, f"{where}: {words[0]!r} is not a whole number of bytes")
        if prob is None or not 0 <= prob <= 1:
            raise ScenarioError(field, f"{where}: {words[1]!r} is not a cumulative probability in [0, 1]")
        if points and (prob < points[-1][0] or size < points[-1][1]):
            raise ScenarioError(field, f"{where}: sizes and probabilities must never fall")
        if not points and prob > 0:
            points.append([0.0, int(size)])
        points.append([float(prob), int(size)])
        if len(points) > limits["max_size_points"]:
            raise ScenarioError(field, f"{text!r} has more than the engine's limit of {limits['max_size_points']} "
                                       "points")
    if len(points) < 2 or points[-1][0] != 1.0:
        raise ScenarioError(field, f"{text!r}: the last cumulative probability must be 1")
    largest = int(points[-1][1])
    if largest < 1:
        raise ScenarioError(field, f"{text!r}: every size is 0 bytes")
    check_limits(field, text, largest, "bytes", limits, shown=f"{text!r}'s largest size, {largest} bytes,")
    return points


def _number(word: str) -> float | None:
    try:
        value = float(word)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def mean_size(points: list[list[float | int]]) -> float:
    """Mean bytes of the interpolated distribution: each segment between
    two points weighs its sizes' midpoint by its probability (HPCC's
    traffic_gen ``getAvg``; what the engine's draws average, tested)."""
    return sum((p1 - p0) * (s0 + s1) / 2 for (p0, s0), (p1, s1) in zip(points, points[1:], strict=False))


class ResolvedWorkload:
    """A workload's engine config, and what the arrival rate still needs:
    its load and the rate of the link that load is a fraction of."""

    def __init__(self, config: dict[str, Any], human: dict[str, Any], path: str, load: float | None,
                 link: int | None):
        self.config, self.human, self.path, self.load, self.link = config, human, path, load, link

    def set_rate(self, link_rates_bps: list[int], link_names: list[str], limits: Mapping[str, int]) -> None:
        """The arrival rate (from ``load`` and the link's rate when given
        so) within the engine's limit; the offered load for summary.json."""
        mean = mean_size(self.config["sizes"]) if self.config.get("sizes") else self.config["size_bytes"]
        k = self.link if self.link is not None else _slowest(self.config.get("path", [0]), link_rates_bps)
        rate_bps = link_rates_bps[k]
        if self.load is not None:
            self.config["arrival_rate_hz"] = self.load * rate_bps / (8 * mean)
        rate_hz = self.config["arrival_rate_hz"]
        field = f"{self.path}.{'load' if self.load is not None else 'arrival_rate'}"
        if rate_hz > limits["max_arrival_rate_hz"]:
            raise ScenarioError(field, f"{rate_hz:,.0f} arrivals per second is above the engine's limit of "
                                       f"{limits['max_arrival_rate_hz']:,} per second")
        if not rate_hz > 0:  # a load so small that the rate underflows
            raise ScenarioError(field, f"gives {rate_hz:g} arrivals per second: no flow would ever arrive")
        self.human.update(arrival_rate=rate_hz, mean_size_bytes=mean, load_link=link_names[k],
                          offered_load=rate_hz * 8 * mean / rate_bps)


def _slowest(path: list[int], rates_bps: list[int]) -> int:
    """The slowest link of a path (the first of equals)."""
    return min(path, key=lambda k: rates_bps[k])


def resolve_workload(w: Workload, path: str, sender: dict[str, Any], link_index: Mapping[str, int] | None, *,
                     duration_ns: int, base_dir: Path | None, limits: Mapping[str, int]) -> ResolvedWorkload:
    """Workload ``w`` (at ``path``) with its flows' ``sender`` fields
    resolved (cc, RTT, parameters, ECN, jitter, routes), in the engine's
    units but for the arrival rate of a ``load`` (:meth:`ResolvedWorkload.set_rate`).
    ``link_index`` names a topology's links (None: the dumbbell)."""
    start_ns = units.parse_time(w.start, allow_zero=True)
    if start_ns >= duration_ns:
        raise ScenarioError(f"{path}.start", "arrivals start at or after the end of the run")
    stop_ns = duration_ns
    if w.stop is not None:
        stop_ns = units.parse_time(w.stop)
        if stop_ns > duration_ns:
            raise ScenarioError(f"{path}.stop", "after the end of the run (leave stop out: arrivals until the end)")
        if stop_ns <= start_ns:
            raise ScenarioError(f"{path}.stop", "arrivals stop before they start")
    config: dict[str, Any] = {**sender, "start_ns": start_ns, "stop_ns": stop_ns}
    human: dict[str, Any] = {}
    if w.size is not None and w.sizes is not None:
        raise ScenarioError(f"{path}.size", "give size (every flow's) or sizes (a distribution file), not both")
    if w.size is not None:
        config["size_bytes"] = app_bytes(f"{path}.size", w.size, limits)
    elif w.sizes is not None:
        config["sizes"] = read_sizes(w.sizes, f"{path}.sizes", base_dir, limits)
        human["size_points"] = len(config["sizes"])
    else:
        raise ScenarioError(f"{path}.sizes", "required key is missing (a size distribution file; or size)")
    if w.load is not None and w.arrival_rate is not None:
        raise ScenarioError(f"{path}.load", "give load (a fraction of a link's rate) or arrival_rate (per second), "
                                            "not both")
    if w.load is None and w.arrival_rate is None:
        raise ScenarioError(f"{path}.load", "required key is missing (a fraction of a link's rate; or arrival_rate)")
    if w.arrival_rate is not None:
        # Checked before float(): TOML's integers can be too large for one.
        check_limits(f"{path}.arrival_rate", w.arrival_rate, w.arrival_rate, "hz", limits)
        config["arrival_rate_hz"] = float(w.arrival_rate)
    link = None
    if w.link is not None:
        if w.load is None:
            raise ScenarioError(f"{path}.link", "only with load (the link whose rate it is a fraction of)")
        if link_index is None:
            raise ScenarioError(f"{path}.link", "names a [[link]]; with [bottleneck] the load is the bottleneck's")
        if w.link not in link_index:
            raise ScenarioError(f"{path}.link", f"no link named {w.link!r} (links: {', '.join(link_index)})")
        link = link_index[w.link]
        if link not in config["path"]:
            raise ScenarioError(f"{path}.link", f"{w.link!r} is not on the workload's path")
    config["max_active"] = w.max_active
    check_limits(f"{path}.max_active", w.max_active, w.max_active, "flows", limits)
    return ResolvedWorkload(config, human, path, None if w.load is None else float(w.load), link)


def app_bytes(path: str, text: str, limits: Mapping[str, int]) -> int:
    """The bytes of a sized flow's ``size`` (a [[flow]]'s or every one of
    a workload's): the application's bytes, not packets or BDPs."""
    size = units.parse_size(text)
    if size.bdp or str(text).strip().rstrip("s").endswith("pkt"):
        raise ScenarioError(path, f"{text!r}: give the application's bytes (e.g. \"100KB\", \"10MB\"), not packets "
                                  "or BDPs")
    nbytes = size.resolve(0)
    if nbytes == 0:
        raise ScenarioError(path, f"{text!r} rounds to 0 bytes")
    check_limits(path, text, nbytes, "bytes", limits)
    return nbytes


def check_totals(workloads: list[ResolvedWorkload], limits: Mapping[str, int]) -> None:
    """The workloads' ``max_active`` and expected arrivals, added up,
    within the engine's limits (the same sums as crates/sim/src/validate.rs)."""
    active, expected = 0, 0.0
    for w in workloads:
        active += w.config["max_active"]
        if active > limits["max_active_flows"]:
            raise ScenarioError(f"{w.path}.max_active", f"the workloads' max_active add up to {active:,}, above the "
                                                        f"engine's limit of {limits['max_active_flows']:,}")
        c = w.config
        # The engine's limits::expected_arrivals, in the same order.
        expected += c["arrival_rate_hz"] * ((c["stop_ns"] - c["start_ns"]) / 1e9)
        if expected > limits["max_workload_arrivals"]:
            field = f"{w.path}.{'load' if w.load is not None else 'arrival_rate'}"
            raise ScenarioError(field, f"the workloads expect {expected:,.0f} arrivals (arrival rate x arrival window, "
                                       f"added up), above the engine's limit of {limits['max_workload_arrivals']:,}; "
                                       "lower the rate or shorten the window")
