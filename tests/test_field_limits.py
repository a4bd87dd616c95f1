"""The front end is the only gate: at every limit of every numeric field,
Python and the engine agree (docs/scenario-format.md, "Checks").

The cases are generated from the scenario schema: every field of every
table whose type holds numbers (a time, rate or size string, an integer or
a number, the step marker's threshold, a trace file, an algorithm's
parameters) must be bounded, by scenario_limits.FIELD_LIMITS (the
engine's limits, defined once in crates/sim/src/limits.rs, or the run's
duration) or by the schema itself (pydantic's le/lt); a field added
without a limit fails here. For each bound:

- one step beyond, Python refuses the value naming the field, and so does
  the engine (`_core.validate`, the same path) for an engine limit;
  `ccarena run` exits 2 with that one line and writes nothing;
- at the bound, the value passes Python and the engine, runs, and the
  live engine's delay line takes it (`delayline --check`).

The limits of a run's size (telemetry rows, flows, packets through the
link), which bound combinations of fields, are tried at the end.
"""

from __future__ import annotations

import base64
import json
import math
import subprocess
import types
import typing
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import annotated_types
import numpy as np
import pytest
import tomli_w
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ccarena import _core, cli
from ccarena.api import simulate
from ccarena.errors import ScenarioError
from ccarena.host import DISTRIBUTIONS
from ccarena.link_trace import _leb128
from ccarena.live.engine import check_supported, delay_line_args, delayline_binary
from ccarena.scenario import ResolvedScenario, Scenario, apply_overrides, engine_limits, load_scenario, param_specs
from ccarena.scenario_limits import AT_MOST_DURATION, BEFORE_END, FIELD_LIMITS, U64
from ccarena.scenario_types import Quantity
from ccarena.units import PACKET_WIRE_BYTES

LIMITS = engine_limits()
U64_MAX = (1 << 64) - 1


# --------------------------------------------------------------------------
# The schema's numeric fields.


def _leaves(tp: Any, metadata: tuple = (), in_list: bool = False) -> Iterator[tuple[Any, tuple, bool]]:
    """Each type an annotation allows, through Annotated, unions and lists,
    with the Annotated metadata around it and whether it is a list's item."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(tp)
        yield from _leaves(base, (*metadata, *meta), in_list)
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            yield from _leaves(arg, metadata, in_list)
    elif origin is list:
        yield from _leaves(typing.get_args(tp)[0], metadata, True)
    elif origin is tuple:  # a host distribution's (probability, ns) point
        for arg in typing.get_args(tp):
            yield from _leaves(arg, metadata, in_list)
    else:
        yield tp, metadata, in_list


def numeric_fields(model: type[BaseModel] = Scenario, prefix: str = "") -> dict[str, FieldInfo]:
    """Every numeric field of the schema by its path (``[]``: a list's item)."""
    found: dict[str, FieldInfo] = {}
    for name, info in model.model_fields.items():
        path = prefix + (info.alias or name)
        for tp, meta, in_list in _leaves(info.annotation, tuple(info.metadata)):
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                found |= numeric_fields(tp, path + ("[]." if in_list else "."))
            elif tp in (int, float) or any(isinstance(m, Quantity) for m in meta):
                found[path] = info
    return found


FIELDS = numeric_fields()


#: A host model's distributions: lists of (cumulative probability, ns).
HOST_DISTRIBUTIONS = tuple(f"host.{key}" for key in DISTRIBUTIONS)


def _kind(field: str) -> str:
    """"time", "rate", "size", "trace", "params", "int", "float", "mark" or "points"."""
    if field in ("bottleneck.mark_threshold", "link[].mark_threshold"):
        return "mark"  # "20pkt", "30KB" or "1ms" (or an int, refused)
    if field in HOST_DISTRIBUTIONS:
        return "points"
    kinds = {m.kind for tp, meta, _ in _leaves(FIELDS[field].annotation, tuple(FIELDS[field].metadata))
             for m in meta if isinstance(m, Quantity)}
    if kinds:
        (kind,) = kinds
        return kind
    types_ = {tp for tp, _, _ in _leaves(FIELDS[field].annotation)}
    return "float" if float in types_ else "int"


def _schema_bound(field: str) -> tuple[str, Any] | None:
    for m in FIELDS[field].metadata:
        if isinstance(m, annotated_types.Le):
            return "le", m.le
        if isinstance(m, annotated_types.Lt):
            return "lt", m.lt
    return None


def test_the_walk_finds_the_fields_it_should():
    # A check of the walker itself: quantities, integers, numbers, nested
    # tables and lists of tables; not booleans, names or choices.
    for field in ("duration", "seed", "bottleneck.loss", "bottleneck.pie.alpha", "bottleneck.codel.limit",
                  "bottleneck.schedule[].rate", "flow[].rtt_schedule[].rtt", "flow[].count", "bottleneck.trace",
                  "bottleneck.mark_threshold", "flow[].params", "measure.from"):
        assert field in FIELDS, field
    for field in ("bottleneck.aqm", "flow[].cc", "flow[].ecn", "bottleneck.red.byte_mode"):
        assert field not in FIELDS, field


def test_every_numeric_field_has_a_limit():
    unbounded = [f for f in FIELDS if f not in FIELD_LIMITS and _schema_bound(f) is None]
    assert not unbounded, (
        f"numeric fields without a limit: {unbounded}; give each one in crates/sim/src/limits.rs (if the "
        "engine's), in scenario_limits.FIELD_LIMITS, and check it in resolve() and validate.rs"
    )
    assert not set(FIELD_LIMITS) - set(FIELDS), "FIELD_LIMITS names a field the schema does not have"
    for field, names in FIELD_LIMITS.items():
        for name in names:
            assert name in LIMITS or name in (BEFORE_END, AT_MOST_DURATION, U64), (field, name)


# --------------------------------------------------------------------------
# A scenario around each field, and its value at a bound and beyond.

DURATION_NS = 100_000_000
BASE: dict[str, Any] = {
    "duration": "100ms",
    "seed": 1,
    "output": {"interval": "10ms"},
    "bottleneck": {"rate": "10Mbit", "buffer": "100pkt"},
    "flow": [{"cc": "cubic", "rtt": "20ms"}],
}

#: What a field needs around it (by its table, or itself): overrides.
CONTEXT: dict[str, dict[str, Any]] = {
    "bottleneck.red": {"bottleneck.aqm": "red", "bottleneck.red": {"min": "5pkt", "max": "30pkt", "max_p": 0.1}},
    "bottleneck.fq": {"bottleneck.aqm": "fq"},
    "bottleneck.codel": {"bottleneck.aqm": "codel"},
    "bottleneck.fq_codel": {"bottleneck.aqm": "fq_codel"},
    "bottleneck.pie": {"bottleneck.aqm": "pie"},
    "bottleneck.policer": {"bottleneck.policer": {"rate": "5Mbit", "burst": "10pkt"}},
    "bottleneck.schedule[]": {"bottleneck.schedule": [{"at": "50ms", "rate": "5Mbit"}]},
    "flow[].rtt_schedule[]": {"flow.0.rtt_schedule": [{"at": "50ms", "rtt": "30ms"}]},
    # A day is cheap to simulate at 10 kbit/s, sampled hourly.
    "duration": {"bottleneck.rate": "10kbit", "output.interval": "3600s"},
    "host.stalls_per_s": {"host.stall_length_ns": [[0.0, 1], [1.0, 1]]},
    # An application writing in ON/OFF periods (both lengths given).
    "flow[].app": {"flow.0.app": {"on": "10ms", "off": "10ms"}},
    # A workload of 10 KB flows at 100 a second; with a load instead of
    # the rate; at the largest rate, for 1 us (100 arrivals expected).
    "workload[]": {"workload": [{"cc": "cubic", "rtt": "20ms", "size": "10KB", "arrival_rate": 100}]},
    "workload[].load": {"workload": [{"cc": "cubic", "rtt": "20ms", "size": "10KB"}]},
    "workload[].arrival_rate": {"workload": [{"cc": "cubic", "rtt": "20ms", "size": "10KB", "stop": "1us"}]},
}


def _unit(bound: str) -> str:
    return bound.rsplit("_", 1)[1] if bound in LIMITS else "ns"


def _text(field: str, value: int | float, unit: str) -> Any:
    """``value`` (in the engine's unit) as the field is written."""
    kind = _kind(field)
    if kind == "mark":
        return {"packets": f"{value}pkt", "bytes": f"{value}B", "ns": f"{value}ns"}[unit]
    if kind == "points":
        return _points(value, unit)
    if unit == "16ths":
        return value / 16
    return {"time": f"{value}ns", "rate": f"{value}bit", "size": f"{value}B"}.get(kind, value)


def _points(value: int, unit: str) -> list[list[float | int]]:
    """A distribution of ``value`` points, or one whose largest value is ``value`` ns."""
    if unit == "points":
        return [[k / (value - 1), 0] for k in range(value)]
    return [[0.0, 0], [1.0, value]]


def _values(field: str, bound: str) -> tuple[int | float, int | float]:
    """The value at the bound (the largest or smallest allowed) and one
    step beyond, in the engine's unit."""
    if bound in LIMITS:
        limit = LIMITS[bound]
        return (limit, limit - 1) if bound.startswith("min_") else (limit, limit + 1)
    if bound == BEFORE_END:
        return DURATION_NS - 1, DURATION_NS
    if bound == AT_MOST_DURATION:
        return DURATION_NS, DURATION_NS + 1
    how, limit = _schema_bound(field)
    if _kind(field) == "float":
        if how == "le":
            return limit, math.nextafter(limit, math.inf)
        return math.nextafter(limit, -math.inf), limit
    return (limit, limit + 1) if how == "le" else (limit - 1, limit)


#: A topology of one link, where a [[link]]'s fields are tried: each takes
#: the keys of [bottleneck] with their context.
LINK_BASE: dict[str, Any] = {**{k: v for k, v in BASE.items() if k != "bottleneck"},
                             "link": [{"name": "a", **BASE["bottleneck"]}]}


def _as_link(key: str) -> str:
    """A [bottleneck] field's path as the [[link]]'s (``link.0.rate``)."""
    return key.replace("bottleneck.", "link.0.", 1) if key.startswith("bottleneck.") else key


def _doc(field: str, value: Any, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    base = BASE
    if field.startswith("link[]."):
        base, field = LINK_BASE, field.replace("link[].", "bottleneck.", 1)
    table = field.rpartition(".")[0]
    overrides = {**CONTEXT.get(table, {}), **CONTEXT.get(field, {}), **(extra or {})}
    if base is LINK_BASE:
        overrides = {_as_link(key): value for key, value in overrides.items()}
        field = _as_link(field)
    return apply_overrides(apply_overrides(base, overrides), {field.replace("[]", ".0"): value})


def _bounds(field: str) -> list[str]:
    if field in FIELD_LIMITS:
        return list(FIELD_LIMITS[field])
    schema = _schema_bound(field)
    return [schema[0]] if schema else []  # none: test_every_numeric_field_has_a_limit fails


CASES = [(f, b) for f in FIELDS for b in _bounds(f)
         if f not in ("bottleneck.trace", "link[].trace", "flow[].params", "workload[].params", "workload[].sizes")]


def _case_docs(field: str, bound: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario at the bound and the one beyond it."""
    at, beyond = _values(field, bound)
    unit = _unit(bound)
    extra = None
    if field in ("bottleneck.red.min", "link[].red.min"):
        # Below red.max, itself at most the limit.
        at, extra = at - 1, {"bottleneck.red.max": f"{at}B"}
    return _doc(field, _text(field, at, unit), extra), _doc(field, _text(field, beyond, unit), extra)


def _engine_beyond(config: dict[str, Any], field: str, bound: str) -> dict[str, Any]:
    """``config`` with the field's engine value one step past ``bound``."""
    config = json.loads(json.dumps(config))
    node: Any = config
    # A topology's link 0 is the engine's `bottleneck`.
    field = field.replace("link[].", "bottleneck.", 1)
    *tables, name = field.replace("[]", ".[]").replace("flow.", "flows.").replace("workload.", "workloads.").split(".")
    for part in tables:
        node = node[0] if part == "[]" else node[part]
    _, beyond = _values(field, bound)
    if name == "mark_threshold":
        node[name] = {_unit(bound): beyond}
        return config
    if field in HOST_DISTRIBUTIONS:
        node[name] = _points(beyond, _unit(bound))
        return config
    key = name if name in node else f"{name}_{_unit(bound)}"  # "flows", "target_ns", "limit_packets"
    node[key] = beyond
    return config


# --------------------------------------------------------------------------
# The checks.


def _passes_everywhere(doc: dict[str, Any], tmp_path: Path) -> ResolvedScenario:
    """Python and the engine accept it, it runs, and the delay line takes
    it whenever the live engine would run it."""
    scenario = load_scenario(doc)
    _core.validate(json.dumps(scenario.config))
    raw = simulate(scenario, series=False)
    assert raw["events"] > 0
    try:
        check_supported(scenario, "userspace")
    except ScenarioError:
        return scenario  # not a live scenario (e.g. 10,000 flows)
    binary = delayline_binary()
    assert binary.exists(), f"{binary} is missing: run `make build`"
    args = delay_line_args(scenario.config, "userspace", tmp_path / "bottleneck.json")
    proc = subprocess.run([binary, "--tun", "check", *args, "--check"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr
    return scenario


def _refused_by_the_cli(doc: dict[str, Any], path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`ccarena run` of it: exit 2, one line naming the field, nothing written."""
    scenario = tmp_path / "beyond.toml"
    scenario.write_text(tomli_w.dumps(doc))
    before = sorted(tmp_path.iterdir())
    capsys.readouterr()
    assert cli.main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"ccarena: error: {path}: "), err
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.parametrize(("field", "bound"), CASES, ids=[f"{f}:{b}" for f, b in CASES])
def test_at_a_fields_limit_both_agree(field, bound, tmp_path, capsys):
    at, beyond = _case_docs(field, bound)
    path = field.replace("[]", "[0]")
    with pytest.raises(ScenarioError) as python:
        load_scenario(beyond)
    assert python.value.path == path, str(python.value)
    _refused_by_the_cli(beyond, path, tmp_path, capsys)
    config = _passes_everywhere(at, tmp_path).config
    if bound in LIMITS:
        with pytest.raises(ValueError) as engine:
            _core.validate(json.dumps(_engine_beyond(config, field, bound)))
        assert str(engine.value).startswith(f"{path}: "), str(engine.value)


def test_at_every_algorithms_parameter_limit_both_agree(tmp_path):
    # A parameter is a u64 in its table's unit: us, ppm or plain.
    def text(kind: str, raw: int) -> Any:
        return {"time": f"{raw}us", "fraction": f"{Decimal(raw) / 10_000}%"}.get(kind, raw)

    checked = 0
    for cc in _core.cc_names():
        for spec in param_specs(cc):
            doc = apply_overrides(BASE, {"flow.0.cc": cc})
            with pytest.raises(ScenarioError) as python:
                load_scenario(apply_overrides(doc, {f"flow.0.params.{spec.key}": text(spec.kind, U64_MAX + 1)}))
            assert python.value.path == f"flow[0].params.{spec.key}", str(python.value)
            _passes_everywhere(apply_overrides(doc, {f"flow.0.params.{spec.key}": text(spec.kind, U64_MAX)}), tmp_path)
            checked += 1
    assert checked >= 10


# --------------------------------------------------------------------------
# Trace files: their lines, their period and their mean rate.


def _trace_file(path: Path, counts: list[tuple[int, int]]) -> str:
    """A trace of ``count`` lines at each ``ms``, in order."""
    path.write_bytes(b"".join(b"%d\n" % ms * count for ms, count in counts))
    return str(path)


def _trace_config(counts: list[tuple[int, int]]) -> dict[str, Any]:
    ms = np.repeat([m for m, _ in counts], [c for _, c in counts]).astype(np.uint32)
    return {"opportunities": int(ms.size), "gaps_ms": base64.b64encode(_leb128(np.diff(ms, prepend=0))).decode(),
            "period_ns": int(ms[-1]) * 1_000_000, "opportunity_bytes": PACKET_WIRE_BYTES,
            "opportunities_sha256": ""}


def _trace_cases() -> list[tuple[str, list[tuple[int, int]], list[tuple[int, int]]]]:
    """(limit, the trace at it, the trace beyond it), as (ms, lines) runs."""
    lines = LIMITS["max_trace_opportunities"]
    per_ms = 80  # ~1 Gbit/s, a period of 125 s at the limit
    last_ms = LIMITS["max_trace_period_ns"] // 1_000_000
    # Every line at 1 ms: the mean rate is lines x 1514 B x 8 per ms.
    fastest = LIMITS["max_rate_bps"] // (PACKET_WIRE_BYTES * 8 * 1000)
    return [
        ("max_trace_opportunities", [(ms, per_ms) for ms in range(1, lines // per_ms + 1)],
         [(ms, per_ms) for ms in range(1, lines // per_ms + 1)] + [(lines // per_ms, 1)]),
        # Eight lines: a day's period still averages above 1 bit/s.
        ("max_trace_period_ns", [(1, 7), (last_ms, 1)], [(1, 7), (last_ms + 1, 1)]),
        ("max_rate_bps", [(1, fastest)], [(1, fastest + 1)]),
    ]


@pytest.mark.parametrize("case", _trace_cases(), ids=lambda case: case[0])
def test_at_a_traces_limits_both_agree(case, tmp_path, capsys):
    bound, at, beyond = case
    assert bound in FIELD_LIMITS["bottleneck.trace"]
    doc = apply_overrides(BASE, {"bottleneck": {"buffer": "100pkt"}})
    beyond_doc = apply_overrides(doc, {"bottleneck.trace": _trace_file(tmp_path / "beyond.trace", beyond)})
    with pytest.raises(ScenarioError) as python:
        load_scenario(beyond_doc)
    assert python.value.path == "bottleneck.trace" and "limit" in str(python.value), str(python.value)
    _refused_by_the_cli(beyond_doc, "bottleneck.trace", tmp_path, capsys)
    (tmp_path / "beyond.trace").unlink()
    at_doc = apply_overrides(doc, {"bottleneck.trace": _trace_file(tmp_path / "at.trace", at)})
    config = _passes_everywhere(at_doc, tmp_path).config
    config["bottleneck"]["trace"] = _trace_config(beyond)
    with pytest.raises(ValueError) as engine:
        _core.validate(json.dumps(config))
    assert str(engine.value).startswith("bottleneck.trace: "), str(engine.value)


# --------------------------------------------------------------------------
# A workload's size distribution file: its points and its largest size.


def _sizes_file(path: Path, points: list[tuple[int, float]]) -> str:
    path.write_text("".join(f"{size} {prob!r}\n" for size, prob in points))
    return str(path)


@pytest.mark.parametrize("bound", ["max_size_points", "max_flow_bytes"])
def test_at_a_size_files_limits_both_agree(bound, tmp_path, capsys):
    assert bound in FIELD_LIMITS["workload[].sizes"]
    n, big = LIMITS["max_size_points"], LIMITS["max_flow_bytes"]
    at, beyond = {
        "max_size_points": ([(k, k / (n - 1)) for k in range(n)], [(k, k / n) for k in range(n + 1)]),
        "max_flow_bytes": ([(0, 0.0), (big, 1.0)], [(0, 0.0), (big + 1, 1.0)]),
    }[bound]
    workload = {"cc": "cubic", "rtt": "20ms", "arrival_rate": 100}
    beyond_doc = {**BASE, "workload": [{**workload, "sizes": _sizes_file(tmp_path / "beyond.cdf", beyond)}]}
    with pytest.raises(ScenarioError) as python:
        load_scenario(beyond_doc)
    assert python.value.path == "workload[0].sizes" and "limit" in str(python.value), str(python.value)
    _refused_by_the_cli(beyond_doc, "workload[0].sizes", tmp_path, capsys)
    (tmp_path / "beyond.cdf").unlink()
    at_doc = {**BASE, "workload": [{**workload, "sizes": _sizes_file(tmp_path / "at.cdf", at)}]}
    config = _passes_everywhere(at_doc, tmp_path).config
    config["workloads"][0]["sizes"] = [[prob, size] for size, prob in beyond]
    with pytest.raises(ValueError) as engine:
        _core.validate(json.dumps(config))
    assert str(engine.value).startswith("workload[0].sizes: "), str(engine.value)


def test_a_workloads_parameters_are_read_as_a_flows(tmp_path):
    # A plain integer parameter (its limit is the u64's, in its own unit).
    cc, spec = next((cc, spec) for cc in _core.cc_names() for spec in param_specs(cc) if spec.kind == "integer")
    doc = {**BASE, "workload": [{"cc": cc, "rtt": "20ms", "size": "10KB", "arrival_rate": 100,
                                 "params": {spec.key: U64_MAX + 1}}]}
    with pytest.raises(ScenarioError) as python:
        load_scenario(doc)
    assert python.value.path == f"workload[0].params.{spec.key}", str(python.value)
    doc["workload"][0]["params"] = {spec.key: U64_MAX}
    _passes_everywhere(doc, tmp_path)


# --------------------------------------------------------------------------
# The run's size: telemetry rows, flows, packets through the link, the
# workloads' flows in progress at once and their expected arrivals.

RUN = {
    "duration": "1s",
    "bottleneck": {"rate": "10Mbit", "buffer": "100pkt"},
    "flow": [{"cc": "cubic", "rtt": "20ms"}],
}


#: Two workloads (their sums bound the run): at half each limit.
WORKLOADS = [{"cc": "cubic", "rtt": "20ms", "size": "10KB", "arrival_rate": LIMITS["max_workload_arrivals"] // 2,
              "max_active": LIMITS["max_active_flows"] // 2}] * 2


def _config_beyond(limit: str) -> tuple[dict[str, Any], str]:
    """A resolved config one step past a run-size limit (built from a good
    one, as the engine would receive it), and the field the error names."""
    if limit in ("active", "arrivals"):
        config = load_scenario({**RUN, "workload": WORKLOADS}).config
        key = {"active": "max_active", "arrivals": "arrival_rate_hz"}[limit]
        config["workloads"][1][key] += 1
        return config, f"workload[1].{key.removesuffix('_hz')}"
    config = load_scenario(RUN).config
    if limit == "cycles":  # 1 s of 998-ns cycles: 1,002,004 > 10^6
        config["flows"][0]["app"] = {"on_off": {"on_ns": 499, "off_ns": 499, "exponential": True}}
        return config, "flow[0].app.on"
    if limit == "rows":
        config["interval_ns"] = 1
        return config, "output.interval"
    if limit == "flows":
        config["flows"] = config["flows"] * (LIMITS["max_flows"] + 1)
        return config, "flow"
    config["bottleneck"]["rate_bps"] = LIMITS["max_rate_bps"]
    config["duration_ns"] = config["measure_to_ns"] = 60 * 1_000_000_000
    return config, "duration"


def _doc_beyond(limit: str) -> dict[str, Any]:
    if limit in ("active", "arrivals"):
        key = {"active": "max_active", "arrivals": "arrival_rate"}[limit]
        return {**RUN, "workload": [WORKLOADS[0], {**WORKLOADS[1], key: WORKLOADS[1][key] + 1}]}
    if limit == "cycles":
        return apply_overrides(RUN, {"flow.0.app": {"on": "499ns", "off": "499ns"}})
    if limit == "rows":
        return apply_overrides(RUN, {"output": {"interval": "1ns"}})
    if limit == "flows":
        return apply_overrides(RUN, {"flow": [dict(RUN["flow"][0], count=10_000)] * (LIMITS["max_flows"] // 10_000 + 1)})
    # 60 s at the largest rate: more packets than segment numbers hold.
    return apply_overrides(RUN, {"bottleneck.rate": f"{LIMITS['max_rate_bps']}bit", "duration": "60s"})


@pytest.mark.parametrize("limit", ["rows", "flows", "segments", "active", "arrivals", "cycles"])
def test_python_and_the_engine_refuse_the_same_field_past_a_run_size_limit(limit):
    with pytest.raises(ScenarioError) as python:
        load_scenario(_doc_beyond(limit))
    config, path = _config_beyond(limit)
    with pytest.raises(ValueError) as engine:
        _core.validate(json.dumps(config))
    assert python.value.path == path
    assert str(engine.value).startswith(f"{path}: "), str(engine.value)
