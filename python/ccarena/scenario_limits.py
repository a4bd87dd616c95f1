"""Which limits bound each numeric field of a scenario.

The engine's limits are defined once, in crates/sim/src/limits.rs, and
read here through ``_core.limits()`` (:func:`engine_limits`); each name ends
with its unit (``max_rtt_ns``, ``max_buffer_bytes``) and starts with
``max_`` or ``min_``. :data:`FIELD_LIMITS` says which of them bound which
field, and :func:`check` enforces them with the field's name before the
engine sees the value (the engine checks the same, with the same path:
crates/sim/src/validate.rs).

Every numeric field of the schema (a time, rate or size string, an
integer or a number, the step marker's threshold, a trace file's lines) is
either here or bounded in the schema itself (pydantic's ``le``/``lt``:
``seed``, ``loss``, RED's ``max_p`` and ``wq``, a flow's ``count``, a
workload's ``load``);
tests/test_fuzz.py walks the schema, fails on a field that is neither, and
tries every bound: the value at it passes the front end and the engine,
one step beyond is an error naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from . import units
from .errors import ScenarioError

#: Bounds by the run itself rather than by the engine: an instant inside
#: the run (``"< duration"``) or a time at most as long (``"<= duration"``).
BEFORE_END = "< duration"
AT_MOST_DURATION = "<= duration"

#: A per-algorithm parameter is a u64 in the algorithm's unit (us, ppm or
#: plain; the C code clamps what it cannot use).
U64 = "< 2^64"

#: For each numeric field (``[]``: any index of a list), what bounds it:
#: names of ``_core.limits()``, or one of the bounds above.
FIELD_LIMITS: dict[str, tuple[str, ...]] = {
    "duration": ("max_duration_ns",),
    "measure.from": (BEFORE_END,),
    "measure.to": (AT_MOST_DURATION,),
    "output.interval": (AT_MOST_DURATION,),
    "bottleneck.rate": ("max_rate_bps",),
    "bottleneck.buffer": ("max_buffer_bytes",),
    "bottleneck.red.min": ("max_buffer_bytes",),
    "bottleneck.red.max": ("max_buffer_bytes",),
    "bottleneck.fq.quantum": ("min_quantum_bytes", "max_quantum_bytes"),
    "bottleneck.codel.target": ("max_aqm_time_ns",),
    "bottleneck.codel.interval": ("max_aqm_time_ns",),
    "bottleneck.codel.limit": ("max_queue_packets",),
    "bottleneck.fq_codel.target": ("max_aqm_time_ns",),
    "bottleneck.fq_codel.interval": ("max_aqm_time_ns",),
    "bottleneck.fq_codel.limit": ("max_queue_packets",),
    "bottleneck.fq_codel.flows": ("max_fq_codel_flows",),
    "bottleneck.fq_codel.quantum": ("min_quantum_bytes", "max_quantum_bytes"),
    "bottleneck.pie.target": ("max_aqm_time_ns",),
    "bottleneck.pie.tupdate": ("min_pie_tupdate_ns", "max_aqm_time_ns"),
    "bottleneck.pie.alpha": ("max_pie_gain_16ths",),
    "bottleneck.pie.beta": ("max_pie_gain_16ths",),
    "bottleneck.pie.burst": ("max_aqm_time_ns",),
    "bottleneck.pie.limit": ("max_queue_packets",),
    # One bound per form: "20pkt", "30KB" (or "0.2bdp"), "1ms".
    "bottleneck.mark_threshold": ("max_queue_packets", "max_buffer_bytes", "max_aqm_time_ns"),
    "bottleneck.policer.rate": ("max_rate_bps",),
    "bottleneck.policer.burst": ("max_buffer_bytes",),
    "bottleneck.schedule[].at": (BEFORE_END,),
    "bottleneck.schedule[].rate": ("max_rate_bps",),
    # The file's lines, its period (last line) and its mean rate.
    "bottleneck.trace": ("max_trace_opportunities", "max_trace_period_ns", "max_rate_bps"),
    # An aggregating link's release period: at most a flow's longest RTT.
    "bottleneck.aggregate": ("max_rtt_ns",),
    "flow[].rtt": ("max_rtt_ns",),
    "flow[].start": (BEFORE_END,),
    "flow[].stop": (AT_MOST_DURATION,),
    "flow[].size": ("max_flow_bytes",),
    "flow[].params": (U64,),
    "flow[].rtt_schedule[].at": (BEFORE_END,),
    "flow[].rtt_schedule[].rtt": ("max_rtt_ns",),
    "flow[].jitter": ("max_rtt_ns",),
    "host.start_spread_ns": ("max_host_delay_ns",),
    "host.stalls_per_s": ("max_host_stall_rate_hz",),
    # A tick rate, CONFIG_HZ (and a divisor of the largest: whole-ms ticks).
    "host.hz": ("min_host_hz", "max_host_hz"),
    # A distribution: its points, and its largest value.
    "host.ack_delay_ns": ("max_host_points", "max_host_delay_ns"),
    "host.timer_lateness_ns": ("max_host_points", "max_host_delay_ns"),
    "host.stall_length_ns": ("max_host_points", "max_host_delay_ns"),
    # A topology's link delay (how many links it has is a run-size limit,
    # max_links, checked where they are read).
    "link[].delay": ("max_rtt_ns",),
    # An application-limited sender.
    "flow[].app.rate": ("max_rate_bps",),
    "flow[].app.on": (AT_MOST_DURATION,),
    "flow[].app.off": (AT_MOST_DURATION,),
    # A workload's flows, as a [[flow]]'s; its arrivals (the sums of
    # max_active and of expected arrivals over the workloads are run-size
    # limits, max_active_flows and max_workload_arrivals); its size file's
    # points and largest size.
    "workload[].rtt": ("max_rtt_ns",),
    "workload[].jitter": ("max_rtt_ns",),
    "workload[].params": (U64,),
    "workload[].arrival_rate": ("max_arrival_rate_hz",),
    "workload[].size": ("max_flow_bytes",),
    "workload[].sizes": ("max_size_points", "max_flow_bytes"),
    "workload[].start": (BEFORE_END,),
    "workload[].stop": (AT_MOST_DURATION,),
    "workload[].max_active": ("max_active_flows",),
}
# A [[link]] takes every key of [bottleneck], with the same bounds.
FIELD_LIMITS.update({f"link[].{key.removeprefix('bottleneck.')}": bounds
                     for key, bounds in list(FIELD_LIMITS.items()) if key.startswith("bottleneck.")})


def engine_limits() -> dict[str, int]:
    """The simulator's limits (crates/sim/src/limits.rs, one definition)."""
    from . import _core

    return dict(_core.limits())


def field_of(path: str) -> str:
    """The :data:`FIELD_LIMITS` key of a path: ``flow[2].rtt`` -> ``flow[].rtt``."""
    return re.sub(r"\[\d+\]", "[]", path)


def check(path: str, text: object, value: int, unit: str, limits: Mapping[str, int], *, shown: str = "") -> None:
    """``value`` (in ``unit``: ``"ns"``, ``"bps"``, ``"bytes"``, ...; what
    ``text`` says, or ``shown`` if given) within the engine's limits on the
    field at ``path`` in that unit; else a ScenarioError naming the field."""
    for name in FIELD_LIMITS[field_of(path)]:
        if not name.endswith(f"_{unit}"):
            continue
        limit = limits[name]
        shown = shown or repr(text)
        if name.startswith("max_") and value > limit:
            raise ScenarioError(path, f"{shown} is above the engine's limit of {human(limit, unit)}")
        if name.startswith("min_") and value < limit:
            raise ScenarioError(path, f"{shown} is below the engine's limit of {human(limit, unit)}")


def human(value: int, unit: str) -> str:
    """A limit as people read it: "86400s", "1000Gbit", "4GiB", "2" (a gain)."""
    if unit == "ns":
        return units.format_time(value)
    if unit == "bps":
        return units.format_rate(value)
    if unit == "bytes":
        for name in ("GiB", "MiB", "KiB"):
            scale = units.SIZE_UNITS_BYTES[name]
            if value % scale == 0:
                return f"{value // scale}{name}"
        return f"{value}B"
    if unit == "16ths":
        return f"{value / 16:g}"
    if unit == "hz":
        return f"{value:,} per second"
    return f"{value:,} {unit}"
