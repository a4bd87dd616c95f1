"""The scenario format (TOML) and its resolution into the simulator's
integer configuration (``sim::config::SimConfig``, crates/sim/src/config.rs).

Three steps, each of which reports problems as :class:`ScenarioError`
(``<field.path>: <problem>``):

1. :func:`read_toml` / a dict — the raw document;
2. :func:`apply_overrides` — ``--set key=value`` with dotted paths;
3. :func:`resolve` — schema validation (pydantic, unknown keys rejected),
   unit parsing, defaults and cross-field checks.

The reference is docs/scenario-format.md.
"""

from __future__ import annotations

import copy
import stat
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import Field, StrictBool, StrictInt, ValidationError

from . import topology, units
from .errors import ScenarioError
from .host import HostTable, is_model_file, resolve_host
from .scenario_app import App, resolve_app
from .scenario_aqm import Codel, FqCodel, Pie, mark_threshold_warnings, resolve_mark_threshold, resolve_tables
from .scenario_limits import check as check_limits
from .scenario_limits import engine_limits
from .scenario_types import (Instant, Number, Quantity, Rate, SizeText, Strict, Time, TimeOrZero, parse_time_or_zero,
                             read_small_file, scenario_file)
from .scenario_workload import ResolvedWorkload, Workload, app_bytes, check_totals, resolve_workload

#: Seeds are u64 (the engine's): below this.
SEED_LIMIT = 1 << 64

# --------------------------------------------------------------------------
# Schema. Quantities stay strings here (so that summary.json can show them
# as written); their validators only check that they parse.

class Measure(Strict):
    """Measurement window; default [duration/3, duration)."""

    from_: Instant | None = Field(default=None, alias="from")
    to: Instant | None = None


class Output(Strict):
    """Telemetry sampling interval."""

    interval: Time = "100ms"


class Red(Strict):
    """RED parameters (Floyd & Jacobson; Linux sch_red)."""

    min: SizeText
    max: SizeText
    max_p: Number = Field(gt=0, le=1)
    #: EWMA weight of the average queue; Linux's default 2^-9 ~ 0.002.
    wq: Number = Field(default=0.002, gt=0, le=1)
    byte_mode: StrictBool = False
    #: Mark ECN-capable packets CE instead of dropping them early (default
    #: off; None keeps older scenarios' recorded input as it was).
    ecn: StrictBool | None = None


class Fq(Strict):
    """Per-flow fair queueing (Deficit Round Robin)."""

    #: Wire bytes a flow may send per round; default one full packet.
    quantum: SizeText = f"{units.PACKET_WIRE_BYTES}B"


class Policer(Strict):
    """Token-bucket policer in front of the queue."""

    rate: Rate
    burst: SizeText


class RateChange(Strict):
    at: Instant
    rate: Rate


class Bottleneck(Strict):
    #: Required unless ``trace`` gives the rate over time.
    rate: Rate | None = None
    buffer: SizeText
    aqm: Literal["droptail", "red", "fq", "codel", "fq_codel", "pie"] = "droptail"
    loss: Number = Field(default=0.0, ge=0, lt=1)
    red: Red | None = None
    fq: Fq | None = None
    codel: Codel | None = None
    fq_codel: FqCodel | None = None
    pie: Pie | None = None
    #: A DCTCP-style step marker on the droptail FIFO ("20pkt", "30KB", "1ms").
    mark_threshold: str | int | None = None
    policer: Policer | None = None
    schedule: list[RateChange] = Field(default_factory=list)
    #: A mahimahi link trace file (link_trace.py) instead of ``rate``.
    trace: Annotated[str, Quantity("trace")] | None = Field(default=None, min_length=1)
    #: An aggregating link: what it carried leaves together at each
    #: multiple of this period ("40ms"), as Wi-Fi, cellular and cable
    #: links release ACKs; absent or "0ms": none.
    aggregate: TimeOrZero | None = None


class Link(Bottleneck):
    """One direction of a link in a topology: a [bottleneck]'s keys, a
    name the flows' paths use, and a propagation delay after it."""

    name: str = Field(min_length=1)
    #: One-way propagation delay after the link.
    delay: TimeOrZero = "0ms"


class RttChange(Strict):
    at: Instant
    rtt: Time


class Flow(Strict):
    cc: str = Field(min_length=1)
    rtt: Time
    start: Instant = "0s"
    stop: Time | None = None
    #: Bytes the application sends, then the flow is complete ("100KB",
    #: "10MB"); absent: a bulk flow for the whole run.
    size: SizeText | None = None
    count: StrictInt = Field(default=1, ge=1, le=10_000)
    #: Per-algorithm parameters (below), numbers in each one's unit.
    params: Annotated[dict[str, Any], Quantity("params")] = Field(default_factory=dict)
    rtt_schedule: list[RttChange] = Field(default_factory=list)
    #: ECN: true (classic RFC 3168, Linux tcp_ecn = 1), "accecn" (Accurate
    #: ECN, tcp_ecn = 3), false / "off" (not ECN-capable).
    ecn: StrictBool | Literal["off", "classic", "accecn"] | None = None
    #: Largest extra delay of each ACK (uniform, in order): a host's
    #: processing time; breaks ACK-clocked senders' phase lock
    #: (crates/sim/src/jitter.rs).
    jitter: TimeOrZero | None = None
    #: With [[link]]s: the links the flow's data crosses, in order, by name
    #: (default: the only link), and those its ACKs cross (default: none,
    #: an unqueued return path as long as the data path).
    path: list[str] | None = None
    reverse: list[str] | None = None
    #: An application-limited sender: what its application writes (a rate
    #: cap, ON/OFF periods; scenario_app.py).
    app: App | None = None


class Scenario(Strict):
    duration: Time
    seed: StrictInt = Field(default=1, ge=0, lt=SEED_LIMIT)
    measure: Measure | None = None
    output: Output | None = None
    #: The dumbbell's one bottleneck, or a topology's links (one of them).
    bottleneck: Bottleneck | None = None
    link: list[Link] | None = Field(default=None, min_length=1)
    #: At least one [[flow]] or [[workload]].
    flow: list[Flow] | None = Field(default=None, min_length=1)
    #: Sized flows arriving by a Poisson process (scenario_workload.py).
    workload: list[Workload] | None = Field(default=None, min_length=1)
    #: The hosts' timing (host.py): a named model ("linux", the default;
    #: "ideal"), a model file, or a table.
    host: HostTable | str | None = Field(default=None, union_mode="left_to_right")


# --------------------------------------------------------------------------
# Per-algorithm parameters. Each algorithm in cc/ declares a table of
# tunables (CCA_PARAMS: name and default, as u64). The name's suffix gives
# the unit, and the scenario key is the name without it:
#     alpha_us   a time in us          alpha = "3ms"
#     beta_ppm   a ratio in ppm        beta = 0.01  or  beta = "1%"
#     first_cut  a plain integer       first_cut = 1
# SimConfig carries a flow's values as a u64 vector indexed like the table.

ParamKind = Literal["time", "fraction", "integer"]

#: Unit suffixes of parameter names.
PARAM_SUFFIXES: dict[str, Literal["time", "fraction"]] = {"_us": "time", "_ppm": "fraction"}
#: A parameter's value is a u64 in its table's unit (us, ppm or plain).
PARAM_BITS = 64
#: How a scenario gives each kind of parameter (`ccarena ccs`).
PARAM_UNITS: dict[ParamKind, str] = {
    "time": 'time (us resolution), e.g. "3ms"',
    "fraction": 'fraction (ppm resolution), e.g. 0.01 or "1%"',
    "integer": "integer",
}


@dataclass(frozen=True)
class ParamSpec:
    """One tunable of an algorithm, as the scenario sees it."""

    key: str  #: scenario key, e.g. "alpha"
    name: str  #: name in the C table, e.g. "alpha_us"
    kind: ParamKind
    default: int  #: in the C table's unit (us, ppm, or plain)

    def parse(self, value: object) -> int:
        """The C table's integer for a scenario value; UnitError if bad."""
        if self.kind == "time":
            ns = units.parse_time(value, allow_zero=True)
            if ns % 1000:
                raise units.UnitError(f"{value!r} is not a whole number of microseconds (the parameter's resolution)")
            raw = ns // 1000
        elif self.kind == "fraction":
            raw = units.fraction_to_ppm(units.parse_fraction(value), value)
        else:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise units.UnitError(f"expected a non-negative integer, got {value!r}")
            raw = value
        if raw >= 1 << PARAM_BITS:
            raise units.UnitError(f"{value!r} is too large (the parameter is a u{PARAM_BITS})")
        return raw

    def limits(self) -> str:
        """What :meth:`parse` accepts, in words."""
        top = f"2^{PARAM_BITS}-1"
        if self.kind == "time":
            return f"0 to {top} us, whole us"
        if self.kind == "fraction":
            return f"0 to {top} ppm, rounded to the ppm (0.000001)"
        return f"0 to {top}"

    def human(self, raw: int) -> str | float | int:
        """The C table's integer in the scenario's units ("3ms", 0.01, 1)."""
        if self.kind == "time":
            return units.format_time(raw * 1000)
        if self.kind == "fraction":
            return units.format_fraction(raw)
        return raw


def param_specs(cc: str) -> list[ParamSpec]:
    """The tunables of ``cc`` in index order, with their units."""
    from . import _core

    specs = []
    for name, default in _core.cc_params(cc):
        key, kind = str(name), cast(ParamKind, "integer")
        for suffix, suffix_kind in PARAM_SUFFIXES.items():
            if key.endswith(suffix):
                key, kind = key[: -len(suffix)], suffix_kind
                break
        specs.append(ParamSpec(key=key, name=str(name), kind=kind, default=int(default)))
    return specs


def resolve_params(cc: str, params: Mapping[str, Any], field_prefix: str) -> tuple[list[int], dict[str, Any]]:
    """The flow's parameter vector — [] when none is set (all defaults),
    else every entry of the table, defaults overridden by ``params`` — and
    the given parameters in human units for summary.json.

    The one reader of parameters by name: a scenario's ``params`` table and
    ``ccarena kernel load --param`` both come here. A problem is a
    ScenarioError for the field ``field_prefix + key`` (e.g.
    ``flow[0].params.alpha``, ``--param alpha``)."""
    if not params:
        return [], {}
    specs = param_specs(cc)
    by_key = {spec.key: spec for spec in specs}
    values = [spec.default for spec in specs]
    human: dict[str, Any] = {}
    for key, value in params.items():
        spec = by_key.get(key)
        if spec is None:
            known = ", ".join(by_key) if by_key else "none: this algorithm takes no parameters"
            hint = next((f"; did you mean '{s.key}'? keys have no unit suffix" for s in specs if s.name == key), "")
            raise ScenarioError(f"{field_prefix}{key}", f"unknown parameter for cc '{cc}' (known: {known}){hint}")
        try:
            raw = spec.parse(value)
        except units.UnitError as err:
            raise ScenarioError(f"{field_prefix}{key}", str(err)) from None
        values[specs.index(spec)] = raw
        human[key] = spec.human(raw)
    return values, human


# --------------------------------------------------------------------------
# Reading and overriding.


#: Largest scenario file read (a scenario is a few KB; this stops a device
#: or a wrong file, e.g. /dev/zero or a trace, from being read whole).
MAX_SCENARIO_BYTES = 1 << 20


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a scenario file; problems (missing, not a regular file, too
    large, syntax) name the file."""
    path = Path(path)
    where = str(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ScenarioError(where, "no such scenario file") from None
    except NotADirectoryError:
        raise ScenarioError(where, "no such scenario file (a part of the path is not a directory)") from None
    except OSError as err:
        raise ScenarioError(where, f"cannot read: {err.strerror or err}") from None
    except ValueError as err:  # e.g. an embedded NUL byte
        raise ScenarioError(where, f"not a usable path: {err}") from None
    if stat.S_ISDIR(mode):
        raise ScenarioError(where, "is a directory, not a scenario file")
    if not stat.S_ISREG(mode):
        # A device or a pipe (/dev/zero, /dev/stdin) could be read forever.
        raise ScenarioError(where, "is not a regular file")
    data = read_small_file(path, where, where, MAX_SCENARIO_BYTES, "a scenario file")
    try:
        # utf-8-sig: a byte-order mark (as some editors write) is not text.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ScenarioError(where, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    return parse_toml(text, origin=where)


def absolute_paths(doc: Mapping[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """A copy of the scenario document ``doc`` with every file it names
    made absolute against ``base_dir`` (what its relative paths are
    relative to; None: the working directory): the bottleneck's and the
    links' traces, the workloads' size files and a host model file. A
    sweep's points run elsewhere and a run directory's scenario.toml is
    read from elsewhere; both must name the files the scenario named.
    Values of the wrong type are left for validation to refuse."""
    doc = copy.deepcopy(dict(doc))

    def absolute(text: str) -> str:
        return str(scenario_file(text, base_dir).resolve())

    links = [doc.get("bottleneck")] + (doc["link"] if isinstance(doc.get("link"), list) else [])
    for link in links:
        if isinstance(link, dict) and isinstance(link.get("trace"), str):
            link["trace"] = absolute(link["trace"])
    for workload in doc["workload"] if isinstance(doc.get("workload"), list) else []:
        if isinstance(workload, dict) and isinstance(workload.get("sizes"), str):
            workload["sizes"] = absolute(workload["sizes"])
    if isinstance(doc.get("host"), str) and is_model_file(doc["host"]):
        doc["host"] = absolute(doc["host"])
    return doc


def parse_toml(text: str, origin: str = "scenario") -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(origin, f"TOML syntax error: {err}") from None


def parse_override(item: str, option: str = "--set") -> tuple[str, Any]:
    """``"flow.1.rtt=30ms"`` -> ``("flow.1.rtt", "30ms")``.

    The value is read as a TOML value when it is one (``3``, ``0.01``,
    ``true``, ``"x"``), otherwise taken as a bare string (``50Mbit``).
    ``option`` is the command-line option that gave it, for the error.
    """
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(option, f"expected key=value, got {item!r}")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key, value


def apply_overrides(doc: dict[str, Any], overrides: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A copy of ``doc`` with each dotted ``key`` set to its value.

    Path segments index tables by key and arrays by position
    (``flow.1.rtt``); missing tables are created.
    """
    doc = copy.deepcopy(doc)
    if isinstance(overrides, Mapping):
        items: Iterable[Any] = overrides.items()
    elif isinstance(overrides, Iterable) and not isinstance(overrides, str | bytes):
        items = overrides
    else:
        raise ScenarioError("overrides", f"expected a mapping of dotted paths to values, got {type(overrides).__name__}")
    for item in items:
        if not (isinstance(item, tuple | list) and len(item) == 2):
            raise ScenarioError("overrides", f"expected (dotted path, value) pairs, got {item!r}")
        key, value = item
        if not isinstance(key, str):
            raise ScenarioError("overrides", f"a dotted path must be a string, got {key!r}")
        parts = key.split(".")
        if any(not p for p in parts):
            raise ScenarioError(key, "malformed override path")
        node: Any = doc
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            here = ".".join(parts[: depth + 1])
            if isinstance(node, list):
                if not (part.isascii() and part.isdigit()):
                    raise ScenarioError(here, f"expected an index (0, 1, ...) into a list of {len(node)}")
                index = int(part)
                if index >= len(node):
                    raise ScenarioError(here, f"index out of range (the list has {len(node)} entries)")
                if last:
                    node[index] = value
                else:
                    node = node[index]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    node = node.setdefault(part, {})
            else:
                raise ScenarioError(here, "cannot set a key inside a value")
    return doc


# --------------------------------------------------------------------------
# Resolution.


@dataclass(frozen=True)
class ResolvedScenario:
    """A validated scenario: as written (``model``), readable with defaults
    filled in (``human``), and as the simulator's integer ``config``
    (a ``SimConfig`` as a plain dict, ready for JSON)."""

    name: str
    model: Scenario
    human: dict[str, Any]
    config: dict[str, Any]
    #: What a relative ``bottleneck.trace`` is relative to (None: the cwd).
    base_dir: Path | None = None

    def as_written(self) -> dict[str, Any]:
        """The scenario as a TOML file would say it (the keys given, with
        any overrides applied; the files it names made absolute,
        :func:`absolute_paths`), for a run directory's scenario.toml."""
        # An explicit None (the API's dicts; TOML has none) is the key left out.
        doc = self.model.model_dump(exclude_unset=True, exclude_none=True, by_alias=True, mode="json")
        return absolute_paths(doc, self.base_dir)

    def warnings(self) -> list[str]:
        """What the scenario asks for and does not get, as
        ``field: problem`` lines; the CLI prints them, nothing fails."""
        return mark_threshold_warnings(self.config)

    @property
    def flow_labels(self) -> list[str]:
        """``"flow i: cc, rtt"`` per simulated (count-expanded) flow."""
        if not topology.is_topology(self.config):
            return [f"flow {i}: {f['cc']}, {units.format_time(f['rtt_ns'])}" for i, f in enumerate(self.config["flows"])]
        # A topology's: the base RTT (links' delays included) and the path.
        names = [link["name"] for link in self.human["link"]]
        delays = [link.get("delay_ns", 0) for link in topology.link_configs(self.config)]
        return [
            f"flow {i}: {f['cc']}, {units.format_time(topology.base_rtt_ns(delays, f))}"
            + (f", {'>'.join(names[k] for k in f['path'])}" if len(names) > 1 else "")
            for i, f in enumerate(self.config["flows"])
        ]


def _error_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += ("." if path else "") + str(part)
    return path or "scenario"


def _validation_problem(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind in ("model_type", "dict_type"):
        return f"expected a table, got {err.get('input')!r}"
    if kind == "list_type":
        return f"expected an array, got {err.get('input')!r}"
    msg = str(err["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if kind.endswith("_type") or kind in ("literal_error",):
        msg += f" (got {err.get('input')!r})"
    return msg.replace("Input should be", "should be")


def _validate(doc: Mapping[str, Any]) -> Scenario:
    try:
        return Scenario.model_validate(doc)
    except ValidationError as exc:
        # One line for the user: the first problem, in document order.
        errors = exc.errors(include_url=False)
        first = errors[0]
        loc = tuple(first["loc"])
        if len(errors) > 1 and loc[-1] == "bool" and str(errors[1]["loc"][-1]).startswith("literal["):
            # A flow's or workload's ecn (a bool or a mode): say both.
            raise ScenarioError(_error_path(loc[:-1]), f"expected true, false or one of \"off\", \"classic\", "
                                                       f"\"accecn\", got {first.get('input')!r}") from None
        # pydantic reports unions (int | float) per member; drop the member.
        loc = tuple(p for p in loc if p not in ("float", "int", "str", "bool", "HostTable"))
        if loc == ("host",) and first["type"] in ("model_type", "string_type"):
            # Neither member of the union took it: say both.
            raise ScenarioError("host", f"expected a model's name, a model file or a [host] table, "
                                        f"got {first.get('input')!r}") from None
        raise ScenarioError(_error_path(loc), _validation_problem(first)) from None


def _unit(path: str, parse, value):
    try:
        return parse(value)
    except units.UnitError as err:  # pragma: no cover - schema checked it
        raise ScenarioError(path, str(err)) from None


def _check_run_size(limits: Mapping[str, int], duration_ns: int, interval_ns: int, n_flows: int, n_links: int,
                    max_rate_bps: int) -> None:
    """The run's telemetry and segment counts fit what the engine holds
    (the same arithmetic as limits::series_rows / link_segments)."""
    rows = duration_ns // interval_ns * (n_flows + n_links)
    if rows > limits["max_series_rows"]:
        shortest = -(-duration_ns * (n_flows + n_links) // limits["max_series_rows"])
        raise ScenarioError(
            "output.interval",
            f"{units.format_time(interval_ns)} gives {rows:,} telemetry rows (duration / interval x (flows + "
            f"{'links' if n_links > 1 else '1'})), "
            f"above the limit of {limits['max_series_rows']:,}: use an interval of at least "
            f"{units.format_time(shortest)}",
        )
    segments = max_rate_bps * duration_ns // (8 * 1_000_000_000 * units.PACKET_WIRE_BYTES)
    if segments > limits["max_link_segments"]:
        longest = limits["max_link_segments"] * 8 * 1_000_000_000 * units.PACKET_WIRE_BYTES // max_rate_bps
        raise ScenarioError(
            "duration",
            f"at {units.format_rate(max_rate_bps)} the link carries {segments:,} packets in "
            f"{units.format_time(duration_ns)}, above the engine's limit of {limits['max_link_segments']:,}: "
            f"run at most {units.format_time(longest)}",
        )


def _resolve_schedule(
    changes: list[Any], path: str, duration_ns: int, *, what: str, key: str, field: str, parse: Callable[[Any], int]
) -> list[dict[str, int]]:
    """Timed changes (``at`` plus one value ``field``) as SimConfig entries
    ``{"at_ns", key}``: each inside the run, in increasing time order."""
    out: list[dict[str, int]] = []
    for j, change in enumerate(changes):
        here = f"{path}[{j}]"
        at_ns = _unit(f"{here}.at", parse_time_or_zero, change.at)
        if at_ns >= duration_ns:
            raise ScenarioError(f"{here}.at", "at or after the end of the run")
        if out and at_ns <= out[-1]["at_ns"]:
            raise ScenarioError(f"{here}.at", f"{what} changes must be in increasing time order")
        out.append({"at_ns": at_ns, key: _unit(f"{here}.{field}", parse, getattr(change, field))})
    return out


@dataclass(frozen=True)
class _ResolvedLink:
    """One link as the engine's ``BottleneckConfig`` (``config``), with
    what summary.json adds to its human form."""

    config: dict[str, Any]
    human: dict[str, Any]
    max_rate_bps: int

    def add_human(self, table: dict[str, Any]) -> None:
        for key, value in self.human.items():
            if isinstance(value, dict) and isinstance(table.get(key), dict):
                table[key].update(value)
            else:
                table[key] = value


def _resolve_link(
    bn: Bottleneck, at: str, rtt_ns: int, *, duration_ns: int, limits: Mapping[str, int], base_dir: Path | None
) -> _ResolvedLink:
    """A [bottleneck] or a [[link]] (field path ``at``) in the engine's
    units; ``rtt_ns`` is the round trip its BDP unit uses (the longest
    base RTT of the flows that cross it)."""
    trace = None
    if bn.trace is not None:
        from .link_trace import read_trace

        if bn.rate is not None:
            raise ScenarioError(f"{at}.rate", "give a rate or a trace, not both (the trace sets the rate)")
        if bn.schedule:
            raise ScenarioError(f"{at}.schedule", "a trace sets the rate over time; give no schedule with it")
        trace = read_trace(str(scenario_file(bn.trace, base_dir)), limits, f"{at}.trace")
        # The trace's mean rate: what BDP-sized buffers and limits use.
        rate_bps = trace["opportunities"] * trace["opportunity_bytes"] * 8 * 1_000_000_000 // trace["period_ns"]
        if rate_bps == 0:
            raise ScenarioError(f"{at}.trace", f"{bn.trace!r} averages below 1 bit/s")
        check_limits(f"{at}.trace", bn.trace, rate_bps, "bps", limits,
                     shown=f"{bn.trace!r} averages {units.format_rate(rate_bps)}, which")
    elif bn.rate is None:
        raise ScenarioError(f"{at}.rate", f"required key is missing (or a link trace: {at}.trace = \"FILE\")")
    else:
        rate_bps = _unit(f"{at}.rate", units.parse_rate, bn.rate)
        check_limits(f"{at}.rate", bn.rate, rate_bps, "bps", limits)
    bdp = units.bdp_bytes(rate_bps, rtt_ns)

    def size(path: str, text: str) -> int:
        nbytes = _unit(path, units.parse_size, text).resolve(bdp)
        if nbytes <= 0:
            raise ScenarioError(path, f"{text!r} resolves to {nbytes} bytes")
        return nbytes

    buffer_bytes = size(f"{at}.buffer", bn.buffer)
    check_limits(f"{at}.buffer", bn.buffer, buffer_bytes, "bytes", limits)
    if buffer_bytes < units.PACKET_WIRE_BYTES:
        raise ScenarioError(
            f"{at}.buffer",
            f"{bn.buffer!r} is {buffer_bytes} bytes, less than one packet ({units.PACKET_WIRE_BYTES} B)",
        )

    red = None
    if bn.aqm == "red":
        if bn.red is None:
            raise ScenarioError(f"{at}.red", f"aqm = \"red\" needs a [{at}.red] table (min, max, max_p)")
        red_min = size(f"{at}.red.min", bn.red.min)
        check_limits(f"{at}.red.min", bn.red.min, red_min, "bytes", limits)
        red_max = size(f"{at}.red.max", bn.red.max)
        check_limits(f"{at}.red.max", bn.red.max, red_max, "bytes", limits)
        if red_min >= red_max:
            raise ScenarioError(f"{at}.red.max", f"must be above red.min ({red_max} <= {red_min} bytes)")
        red = {
            "min_bytes": red_min,
            "max_bytes": red_max,
            "max_p": float(bn.red.max_p),
            "wq": float(bn.red.wq),
            "byte_mode": bn.red.byte_mode,
            **({"ecn": True} if bn.red.ecn else {}),
        }
    elif bn.red is not None:
        raise ScenarioError(f"{at}.red", f"given, but aqm is \"{bn.aqm}\" (set aqm = \"red\")")

    fq = None
    if bn.aqm == "fq":
        quantum_text = (bn.fq or Fq()).quantum
        quantum = size(f"{at}.fq.quantum", quantum_text)
        check_limits(f"{at}.fq.quantum", quantum_text, quantum, "bytes", limits)
        fq = {"quantum_bytes": quantum}
    elif bn.fq is not None:
        raise ScenarioError(f"{at}.fq", f"given, but aqm is \"{bn.aqm}\" (set aqm = \"fq\")")

    aqm_tables, aqm_human = resolve_tables(bn, size, limits, at)
    mark_threshold = resolve_mark_threshold(bn.mark_threshold, bn.aqm, size, limits, at)

    policer = None
    if bn.policer is not None:
        policer_rate = _unit(f"{at}.policer.rate", units.parse_rate, bn.policer.rate)
        check_limits(f"{at}.policer.rate", bn.policer.rate, policer_rate, "bps", limits)
        burst = size(f"{at}.policer.burst", bn.policer.burst)
        check_limits(f"{at}.policer.burst", bn.policer.burst, burst, "bytes", limits)
        if burst < units.PACKET_WIRE_BYTES:
            raise ScenarioError(
                f"{at}.policer.burst",
                f"{bn.policer.burst!r} is {burst} bytes, less than one packet ({units.PACKET_WIRE_BYTES} B): "
                "nothing would pass",
            )
        policer = {"rate_bps": policer_rate, "burst_bytes": burst}

    schedule = _resolve_schedule(
        bn.schedule, f"{at}.schedule", duration_ns,
        what="rate", key="rate_bps", field="rate", parse=units.parse_rate,
    )

    for j, change in enumerate(schedule):
        check_limits(f"{at}.schedule[{j}].rate", bn.schedule[j].rate, change["rate_bps"], "bps", limits)
    delay_ns = _unit(f"{at}.delay", parse_time_or_zero, bn.delay) if isinstance(bn, Link) else 0
    aggregate_ns = 0
    if bn.aggregate is not None:
        aggregate_ns = _unit(f"{at}.aggregate", parse_time_or_zero, bn.aggregate)
        check_limits(f"{at}.aggregate", bn.aggregate, aggregate_ns, "ns", limits)
    config = {
        "rate_bps": rate_bps,
        "buffer_bytes": buffer_bytes,
        "aqm": bn.aqm,
        "red": red,
        "loss": float(bn.loss),
        "schedule": schedule,
        # Only when used, so that other scenarios' configs (and their
        # summary.json) stay as they were.
        **({"fq": fq} if fq is not None else {}),
        **aqm_tables,
        **({"mark_threshold": mark_threshold} if mark_threshold is not None else {}),
        **({"policer": policer} if policer is not None else {}),
        **({"trace": trace} if trace is not None else {}),
        **({"delay_ns": delay_ns} if delay_ns else {}),
        **({"aggregate_ns": aggregate_ns} if aggregate_ns else {}),
    }
    human: dict[str, Any] = {"buffer_bytes": buffer_bytes}
    if fq is not None:
        human["fq"] = {"quantum": (bn.fq or Fq()).quantum, "quantum_bytes": fq["quantum_bytes"]}
    human.update(aqm_human)
    if policer is not None:
        human["policer"] = {"burst_bytes": policer["burst_bytes"]}
    human["bdp_bytes"] = bdp
    if trace is not None:
        human["trace_opportunities"] = trace["opportunities"]
        human["trace_period"] = units.format_time(trace["period_ns"])
        human["trace_mean_rate"] = units.format_rate(rate_bps)
    return _ResolvedLink(config, human, max([rate_bps] + [c["rate_bps"] for c in schedule]))


def _resolve_sender(spec: Flow | Workload, path: str, known: list[str], limits: Mapping[str, int],
                    routes: _Topology | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a [[flow]] and a [[workload]]'s flows (at ``path``) have in
    common, as the engine's fields: the algorithm and its parameters, the
    RTT, ECN, jitter and routes; and the parameters as summary.json shows
    them."""
    # C identifiers name the algorithms; "bbr3-tuned" is read as "bbr3_tuned".
    cc = spec.cc.replace("-", "_")
    if cc not in known:
        raise ScenarioError(f"{path}.cc", f"unknown congestion control '{spec.cc}' (known: {', '.join(known)})")
    rtt_ns = _unit(f"{path}.rtt", units.parse_time, spec.rtt)
    check_limits(f"{path}.rtt", spec.rtt, rtt_ns, "ns", limits)
    # The live engine's NAME@ccarena is cc/NAME.c: its parameters are NAME's.
    params, params_human = resolve_params(cc.partition("@")[0], spec.params, f"{path}.params.")
    entry: dict[str, Any] = {"cc": cc, "rtt_ns": rtt_ns, "params": params}
    # The keys below only when used, so that other configs stay as they were.
    if spec.jitter is not None:
        jitter_ns = _unit(f"{path}.jitter", parse_time_or_zero, spec.jitter)
        check_limits(f"{path}.jitter", spec.jitter, jitter_ns, "ns", limits)
        if jitter_ns:
            entry["jitter_ns"] = jitter_ns
    ecn = {True: "classic", False: "off", None: "off"}.get(spec.ecn, spec.ecn)
    if ecn != "off":
        entry["ecn"] = ecn
    if routes is None:
        for key in ("path", "reverse"):
            if getattr(spec, key) is not None:
                raise ScenarioError(f"{path}.{key}", "routes need [[link]] tables: with [bottleneck] every flow "
                                                     "crosses it")
    else:
        entry["path"] = routes.route(f"{path}.path", spec.path, required=True)
        if spec.reverse:
            entry["reverse_path"] = routes.route(f"{path}.reverse", spec.reverse, required=False)
    return entry, params_human


class _Topology:
    """A scenario's [[link]] tables: their names, delays, and the flows'
    routes through them by index."""

    def __init__(self, links: list[Link], limits: Mapping[str, int]):
        if len(links) > limits["max_links"]:
            raise ScenarioError("link", f"{len(links)} [[link]] tables are above the engine's limit of "
                                        f"{limits['max_links']}")
        self.links = links
        self.index: dict[str, int] = {}
        self.delay_ns: list[int] = []
        for k, link in enumerate(links):
            if link.name in self.index:
                raise ScenarioError(f"link[{k}].name", f"{link.name!r} names link[{self.index[link.name]}] already")
            self.index[link.name] = k
            delay_ns = _unit(f"link[{k}].delay", parse_time_or_zero, link.delay)
            check_limits(f"link[{k}].delay", link.delay, delay_ns, "ns", limits)
            self.delay_ns.append(delay_ns)

    def route(self, path: str, names: list[str] | None, *, required: bool) -> list[int]:
        """Link indices of a flow's ``path`` or ``reverse`` (names, in order)."""
        if names is None:
            if len(self.links) == 1:
                return [0]
            raise ScenarioError(path, f"required with several [[link]]s: the links the flow's data crosses, in "
                                      f"order (of {', '.join(self.index)})")
        if required and not names:
            raise ScenarioError(path, "a flow's data crosses at least one link")
        route: list[int] = []
        for j, name in enumerate(names):
            if name not in self.index:
                raise ScenarioError(f"{path}[{j}]", f"no link named {name!r} (links: {', '.join(self.index)})")
            if self.index[name] in route:
                raise ScenarioError(f"{path}[{j}]", f"{name!r} is already on the path")
            route.append(self.index[name])
        return route

    def bdp_rtt_ns(self, k: int, flows: list[dict[str, Any]]) -> int:
        """The RTT of link ``k``'s BDP unit: the longest base RTT of the
        flows that cross it either way (of all flows if none does)."""
        crossing = [f for f in flows if k in f["path"] or k in f.get("reverse_path", ())] or flows
        return max(topology.base_rtt_ns(self.delay_ns, f) for f in crossing)


def resolve(
    doc: Mapping[str, Any],
    *,
    name: str = "scenario",
    known_ccs: Iterable[str] | None = None,
    base_dir: Path | None = None,
) -> ResolvedScenario:
    """Validate a scenario document and convert it to the simulator's config.

    ``known_ccs`` defaults to the algorithms compiled into the simulator;
    ``base_dir`` is what a relative ``bottleneck.trace`` is relative to
    (the scenario file's directory; None: the working directory).
    """
    if "sweep" in doc:
        raise ScenarioError(
            "sweep", "this is a sweep file: run it with `ccarena sweep`, or one point with `ccarena run FILE --point N`"
        )
    model = _validate(doc)
    if known_ccs is None:
        from . import _core

        known_ccs = _core.cc_names()
    known = sorted(known_ccs)

    limits = engine_limits()
    duration_ns = _unit("duration", units.parse_time, model.duration)
    check_limits("duration", model.duration, duration_ns, "ns", limits)
    interval_ns = _unit("output.interval", units.parse_time, (model.output or Output()).interval)
    if interval_ns > duration_ns:
        given = model.output is not None and "interval" in model.output.model_fields_set
        raise ScenarioError("output.interval", f"{units.format_time(interval_ns)}{'' if given else ' (the default)'} "
                                               f"is longer than the run's duration ({units.format_time(duration_ns)}): "
                                               "set [output] interval to at most the duration")

    if model.bottleneck is not None and model.link is not None:
        raise ScenarioError("link", "give [bottleneck] (the dumbbell) or [[link]] tables (a topology), not both")
    if model.bottleneck is None and model.link is None:
        raise ScenarioError("bottleneck", "required key is missing (or [[link]] tables for a topology)")
    routes = _Topology(model.link, limits) if model.link is not None else None

    if model.flow is None and model.workload is None:
        raise ScenarioError("flow", "required key is missing (or [[workload]] tables)")
    # Flows first: the BDP unit depends on their RTTs.
    flows: list[dict[str, Any]] = []
    params_human: dict[str, dict[int, dict[str, Any]]] = {"flow": {}, "workload": {}}
    for i, flow in enumerate(model.flow or []):
        path = f"flow[{i}]"
        sender, params_human["flow"][i] = _resolve_sender(flow, path, known, limits, routes)
        start_ns = _unit(f"{path}.start", parse_time_or_zero, flow.start)
        if start_ns >= duration_ns:
            raise ScenarioError(f"{path}.start", "the flow starts at or after the end of the run")
        stop_ns = None
        if flow.stop is not None:
            stop_ns = _unit(f"{path}.stop", units.parse_time, flow.stop)
            if stop_ns > duration_ns:
                raise ScenarioError(f"{path}.stop", "after the end of the run (leave stop out to send to the end)")
            if stop_ns <= start_ns:
                raise ScenarioError(f"{path}.stop", "the flow stops before it starts")
        rtt_schedule = _resolve_schedule(
            flow.rtt_schedule, f"{path}.rtt_schedule", duration_ns,
            what="RTT", key="rtt_ns", field="rtt", parse=units.parse_time,
        )
        for j, change in enumerate(rtt_schedule):
            check_limits(f"{path}.rtt_schedule[{j}].rtt", flow.rtt_schedule[j].rtt, change["rtt_ns"], "ns", limits)
        entry = {**sender, "start_ns": start_ns, "stop_ns": stop_ns, "rtt_schedule": rtt_schedule}
        if flow.size is not None:
            # Only when used: other configs stay as they were (so are the keys below).
            entry["size_bytes"] = app_bytes(f"{path}.size", flow.size, limits)
        if flow.app is not None:
            entry["app"] = resolve_app(flow.app, f"{path}.app", duration_ns, limits)
        flows.extend(copy.deepcopy(entry) for _ in range(flow.count))

    if len(flows) > limits["max_flows"]:
        raise ScenarioError("flow", f"{len(flows)} flows (counts included) are above the engine's limit of "
                                    f"{limits['max_flows']}")
    workloads: list[ResolvedWorkload] = []
    for w, spec in enumerate(model.workload or []):
        path = f"workload[{w}]"
        sender, params_human["workload"][w] = _resolve_sender(spec, path, known, limits, routes)
        workloads.append(resolve_workload(spec, path, sender, None if routes is None else routes.index,
                                          duration_ns=duration_ns, base_dir=base_dir, limits=limits))
    # The BDP unit counts the workloads' flows' RTTs too.
    senders = flows + [w.config for w in workloads]
    if routes is None:
        assert model.bottleneck is not None
        # The dumbbell: the flows' RTTs are their whole base RTTs.
        resolved = [_resolve_link(model.bottleneck, "bottleneck", max(f["rtt_ns"] for f in senders),
                                  duration_ns=duration_ns, limits=limits, base_dir=base_dir)]
    else:
        resolved = [_resolve_link(link, f"link[{k}]", routes.bdp_rtt_ns(k, senders),
                                  duration_ns=duration_ns, limits=limits, base_dir=base_dir)
                    for k, link in enumerate(routes.links)]
    _check_run_size(limits, duration_ns, interval_ns, len(flows), len(resolved),
                    max(link.max_rate_bps for link in resolved))
    link_names = ["bottleneck"] if routes is None else list(routes.index)
    for workload in workloads:
        workload.set_rate([link.config["rate_bps"] for link in resolved], link_names, limits)
    check_totals(workloads, limits)

    measure = model.measure or Measure()
    from_ns = duration_ns // 3
    to_ns = duration_ns
    if measure.from_ is not None:
        from_ns = _unit("measure.from", parse_time_or_zero, measure.from_)
    if measure.to is not None:
        to_ns = _unit("measure.to", units.parse_time, measure.to)
    if to_ns > duration_ns:
        raise ScenarioError("measure.to", f"after the end of the run ({model.duration})")
    if from_ns >= to_ns:
        path = "measure.from" if measure.from_ is not None else "measure.to"
        raise ScenarioError(path, "the measurement window is empty (from >= to)")

    config = {
        "duration_ns": duration_ns,
        "seed": model.seed,
        "measure_from_ns": from_ns,
        "measure_to_ns": to_ns,
        "interval_ns": interval_ns,
        "mss": units.MSS_BYTES,
        "wire_overhead": units.WIRE_OVERHEAD_BYTES,
        "bottleneck": resolved[0].config,
        # Only for a topology, so that other configs stay as they were.
        **({"links": [link.config for link in resolved[1:]]} if len(resolved) > 1 else {}),
        "flows": flows,
        # Only with workloads, likewise.
        **({"workloads": [w.config for w in workloads]} if workloads else {}),
    }
    host_config, host_human = resolve_host(model.host, base_dir, limits)
    if host_config is not None:
        config["host"] = host_config

    human = model.model_dump(by_alias=True, exclude_none=True)
    human["host"] = host_human
    human["measure"] = {"from": units.format_time(from_ns), "to": units.format_time(to_ns)}
    human["output"] = {"interval": units.format_time(interval_ns)}
    for link, link_human in zip(resolved, human["link"] if routes is not None else [human["bottleneck"]],
                                strict=True):
        link.add_human(link_human)
    for table, given in params_human.items():
        for i, table_params in given.items():
            human[table][i]["params"] = table_params
    for w, workload in enumerate(workloads):
        human["workload"][w].update(workload.human)
    return ResolvedScenario(name=name, model=model, human=human, config=config, base_dir=base_dir)


def load_scenario(
    source: str | Path | Mapping[str, Any],
    overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
    *,
    known_ccs: Iterable[str] | None = None,
) -> ResolvedScenario:
    """Read (a path, TOML text, or a dict; see :func:`read_source`),
    override, validate, resolve. Any problem is a :class:`ScenarioError`."""
    doc, name = read_source(source)
    if overrides:
        doc = apply_overrides(doc, overrides)
    return resolve(doc, name=name, known_ccs=known_ccs, base_dir=source_dir(source))


def source_dir(source: str | Path | Mapping[str, Any]) -> Path | None:
    """The directory of a scenario given as a file (what its relative
    paths are relative to), or None for a table or TOML text."""
    if isinstance(source, Path):
        return source.parent
    if isinstance(source, str) and "\n" not in source and (source.endswith(".toml") or _is_file(source)):
        return Path(source).parent
    return None


def read_source(source: str | Path | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The scenario document and its name, from a path, TOML text or a dict.

    A :class:`~pathlib.Path` is always a path. A ``str`` is TOML text if it
    has a newline; otherwise it is a path if it ends in ``.toml`` or names
    an existing file (so ``runs/seed=1/s.toml`` is a path), and TOML text
    if it contains ``=`` (``'duration = "3s"'`` alone is not a scenario,
    but its error then says what is missing).
    """
    if isinstance(source, Mapping):
        if not all(isinstance(key, str) for key in source):
            bad = next(key for key in source if not isinstance(key, str))
            raise ScenarioError("scenario", f"keys must be strings, got {bad!r}")
        return dict(source), "scenario"
    if isinstance(source, Path):
        return read_toml(source), source.stem
    if not isinstance(source, str):
        raise ScenarioError(
            "scenario", f"expected a path, TOML text or a table (dict), got {type(source).__name__}"
        )
    if "\n" not in source and (source.endswith(".toml") or "=" not in source or _is_file(source)):
        return read_toml(source), Path(source).stem
    return parse_toml(source), "scenario"


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False
