"""Type stubs of the native module (crates/py/src/lib.rs)."""

from collections.abc import Callable

class EngineCrash(RuntimeError):
    """The simulator engine panicked: a bug in ccarena, not in the scenario.
    The message is the panic's, with its source location."""

Columns = list[tuple[str, str, bytes]]

def simulate(
    config_json: str, series: bool = True, progress: Callable[[int], object] | None = None
) -> tuple[str, Columns, Columns, Columns]:
    """Run one simulation.

    ``config_json`` is a ``sim::config::SimConfig`` as JSON; returns
    ``(counters, flow_series, link_series, workload_flows)``: the
    ``SimResult``'s counters (``flows``, ``link``, ``events``; with
    workloads ``workloads``) as JSON, and each table as ``(column, numpy
    type code, native-order bytes)`` triples (the telemetry's empty when
    ``series`` is false; the workloads' flow records, one row per flow,
    always). Releases the GIL while running, and
    runs Python's signal handlers every few milliseconds meanwhile.
    ``progress``, if given, is called with the simulated time in ns at
    every such check (for a progress bar); what it raises stops the run.
    Raises ``ValueError`` with a one-line message naming the field
    (``"<path>: <problem>"``) if the engine rejects the configuration,
    ``KeyboardInterrupt`` (or what another signal handler or ``progress``
    raised) if the run was stopped, and :class:`EngineCrash` if the engine
    panicked.
    """

def fcts_alone(config_json: str, workload: int, sizes: list[int]) -> list[int | None]:
    """The completion times alone on the empty path, ns (None: not complete
    by the run's end), of workload ``workload``'s flows of ``sizes`` bytes,
    in order (crates/sim/src/alone.rs). Raises as :func:`simulate` does."""
    ...

def workload_arrivals(config_json: str, workload: int) -> tuple[list[int], list[int]]:
    """Workload ``workload``'s arrivals before the run's end as the engine
    draws them: (times ns, sizes bytes) (crates/sim/src/workload.rs,
    ``arrivals``). Raises as :func:`simulate` does."""
    ...

def app_on_periods(config_json: str, flow: int) -> list[tuple[int, int]]:
    """Flow ``flow``'s application's ON periods, (start, end) ns from its
    start, up to the run's duration (crates/sim/src/app.rs, ``on_periods``);
    empty without an ``app``. Raises as :func:`simulate` does."""
    ...

def validate(config_json: str) -> None:
    """Check a configuration as :func:`simulate` would, without running it.

    Raises ``ValueError("<path>: <problem>")`` for the first problem, with
    the scenario's field paths (``duration``, ``output.interval``,
    ``bottleneck.rate``, ``bottleneck.buffer``, ``bottleneck.schedule[j].rate``,
    ``flow``, ``flow[i].rtt``, ``flow[i].rtt_schedule[k].rtt``, ...);
    ``"config: ..."`` if the JSON does not parse as a configuration.
    """

def capacity_bytes(config_json: str, from_ns: int, to_ns: int) -> int:
    """Wire bytes the bottleneck could carry in [from_ns, to_ns)."""

def base_rtt_ns(rtt_ns: int, delays_ns: list[int], path: list[int], reverse_path: list[int] | None = None) -> int:
    """A flow's base RTT, ns: ``rtt_ns`` (its hosts') plus the one-way
    ``delays_ns`` (by link index) of the links of ``path`` both ways, those
    of ``path`` again when ``reverse_path`` is None or empty. ValueError
    for a link index without a delay."""

def limits() -> dict[str, int]:
    """The engine's limits (crates/sim/src/limits.rs), by lower-case name:
    ``max_duration_ns``, ``max_rate_bps``, ``max_buffer_bytes``,
    ``max_rtt_ns``, ``max_flows`` (after ``count`` expansion),
    ``max_series_rows`` ((duration // interval) * (flows + links)),
    ``max_link_segments`` (max rate over the schedule * duration //
    (8e9 * (mss + wire_overhead)), with duration in ns), ``max_packet_bytes``
    (mss + wire_overhead), and the bounds of the queue disciplines, the
    policer and link traces (``max_aqm_time_ns``, ``min_quantum_bytes``,
    ``max_trace_opportunities``, ...). A name ends with its unit; ``max_``
    bounds from above, ``min_`` from below, and a value equal to a limit is
    allowed. scenario_limits.FIELD_LIMITS says which bounds which field."""

def _crash_for_test() -> None:
    """Test-only: panic inside the engine path as an engine bug would;
    always raises :class:`EngineCrash`."""

def cc_names() -> list[str]:
    """Names of the congestion controls compiled into the simulator."""

def cc_params(name: str) -> list[tuple[str, int]]:
    """Tunables of congestion control ``name`` in index order, as
    ``(C name, default)``; the C name's suffix gives the unit (``_us``
    microseconds, ``_ppm`` parts per million, none: a plain integer) and the
    scenario key is the name without it.
    Raises ``ValueError`` for an unknown name."""

def cc_description(name: str) -> str:
    """The one-line description of congestion control ``name``
    (``CCA_DESCRIPTION`` in ``cc/<name>.c``). Raises ``ValueError`` for an
    unknown name."""

def version() -> str:
    """Version of the native engine."""

def build_id() -> str:
    """Digest (16 hex digits) of the sources the module was built from:
    ``cc/``, ``tests/cc/``, the engine and the glue (crates/py/build.rs).
    Changes whenever any of them does; a sweep's cache key includes it."""
