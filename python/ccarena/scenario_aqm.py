"""The scenario keys of the delay-based AQMs and of ECN marking:
``aqm = "codel" | "fq_codel" | "pie"`` with their optional tables, and
``bottleneck.mark_threshold`` (a DCTCP-style step marker). Defaults are
Linux's (``tc qdisc add dev X codel`` etc.); crates/sim/src/qdisc/ holds
the control laws. docs/scenario-format.md is the reference.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pydantic import Field, StrictBool, StrictInt

from . import units
from .errors import ScenarioError
from .scenario_limits import check as check_limits
from .scenario_types import Number, SizeText, Strict, Time, TimeOrZero


class Codel(Strict):
    """CoDel (Linux sch_codel defaults)."""

    target: Time = "5ms"
    interval: Time = "100ms"
    #: Packets.
    limit: StrictInt = Field(default=1000, ge=1)
    ecn: StrictBool = False


class FqCodel(Strict):
    """FQ-CoDel (Linux sch_fq_codel defaults)."""

    target: Time = "5ms"
    interval: Time = "100ms"
    #: Packets, over all flows.
    limit: StrictInt = Field(default=10240, ge=1)
    flows: StrictInt = Field(default=1024, ge=1)
    quantum: SizeText = f"{units.PACKET_WIRE_BYTES}B"
    ecn: StrictBool = True


class Pie(Strict):
    """PIE (Linux sch_pie defaults)."""

    target: Time = "15ms"
    tupdate: Time = "15ms"
    #: Gains; Linux keeps them in sixteenths (tc's ``alpha 2 beta 20``).
    alpha: Number = Field(default=0.125, ge=0)
    beta: Number = Field(default=1.25, ge=0)
    burst: TimeOrZero = "150ms"
    #: Packets.
    limit: StrictInt = Field(default=1000, ge=1)
    ecn: StrictBool = False


#: Which table belongs to which ``aqm``.
TABLES = {"codel": Codel, "fq_codel": FqCodel, "pie": Pie}
#: Each table's numeric keys and the engine's unit of each (its config key
#: is the key with that suffix: ``target_ns``; ``flows`` as it is).
UNITS = {
    "codel": {"target": "ns", "interval": "ns", "limit": "packets"},
    "fq_codel": {"target": "ns", "interval": "ns", "limit": "packets", "flows": "flows", "quantum": "bytes"},
    "pie": {"target": "ns", "tupdate": "ns", "alpha": "16ths", "beta": "16ths", "burst": "ns", "limit": "packets"},
}

_PACKETS = re.compile(r"^\s*(\d+)\s*(pkt|pkts|packets?)\s*$")


def _sixteenths(path: str, value: float | int) -> int:
    n = Decimal(str(value)) * 16
    if not n.is_finite():
        raise ScenarioError(path, f"{value} is not a finite number")
    if n != n.to_integral_value():
        raise ScenarioError(path, f"{value} is not a multiple of 1/16 (Linux keeps it in sixteenths)")
    return int(n)


def resolve_tables(
    bn: Any, size: Any, limits: Mapping[str, int], at: str = "bottleneck"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The engine config entries (``{"codel": {...}}``) and their human
    form for summary.json, for the AQM chosen in ``bn`` (the link at field
    path ``at``); ``size`` resolves a size string to bytes; every value
    within the engine's ``limits``. A table given for another AQM is an
    error."""
    config: dict[str, Any] = {}
    human: dict[str, Any] = {}

    def value(table: Any, key: str, field: str, unit: str) -> int:
        """The field in the engine's unit, checked against its limits."""
        path, text = f"{at}.{key}.{field}", getattr(table, field)
        if unit == "ns":
            resolved = units.parse_time(text, allow_zero=True)
        elif unit == "bytes":
            resolved = size(path, text)
        elif unit == "16ths":
            resolved = _sixteenths(path, text)
        else:
            resolved = text
        check_limits(path, text, resolved, unit, limits)
        return resolved

    for key, model in TABLES.items():
        given = getattr(bn, key)
        if bn.aqm != key:
            if given is not None:
                raise ScenarioError(f"{at}.{key}", f"given, but aqm is \"{bn.aqm}\" (set aqm = \"{key}\")")
            continue
        t = given or model()
        human[key] = t.model_dump()
        config[key] = {(field if unit == "flows" else f"{field}_{unit}"): value(t, key, field, unit)
                       for field, unit in UNITS[key].items()} | {"ecn": t.ecn}
    return config, human


def resolve_mark_threshold(text: str | None, aqm: str, size: Any, limits: Mapping[str, int],
                           at: str = "bottleneck") -> dict[str, int] | None:
    """``mark_threshold = "20pkt" | "30KB" | "1ms"`` as the engine's
    ``{"packets": n}`` / ``{"bytes": n}`` / ``{"ns": n}``, within its limits
    (``at``: the link's field path, ``bottleneck`` or ``link[k]``)."""
    path = f"{at}.mark_threshold"
    if text is None:
        return None
    if aqm != "droptail":
        raise ScenarioError(path, f"a step marker runs on the droptail FIFO, not aqm = \"{aqm}\"")
    if not isinstance(text, str):
        raise ScenarioError(path, f"{text!r} needs a unit: packets (\"20pkt\"), bytes (\"30KB\") or time (\"1ms\")")
    if m := _PACKETS.match(text):
        n = int(m.group(1))
        if n < 1:
            raise ScenarioError(path, "must be at least 1 packet")
        check_limits(path, text, n, "packets", limits)
        return {"packets": n}
    try:
        ns = units.parse_time(text)
    except units.UnitError:
        pass
    else:
        check_limits(path, text, ns, "ns", limits)
        return {"ns": ns}
    try:
        units.parse_size(text)
    except units.UnitError:
        raise ScenarioError(
            path, f"{text!r} is not packets (\"20pkt\"), a size (\"30KB\", \"0.5BDP\") or a time (\"1ms\")"
        ) from None
    nbytes = size(path, text)
    check_limits(path, text, nbytes, "bytes", limits)
    return {"bytes": nbytes}


def mark_threshold_warnings(config: Mapping[str, Any]) -> list[str]:
    """A step marker only marks: where no ECN-capable flow (a [[flow]]'s
    or a workload's) sends through it, it does nothing and the link is a
    plain droptail FIFO. Not an error (a sweep may turn ECN on and off),
    but worth a line per such link: the scenario asked for something it
    does not get."""
    from .topology import is_topology, link_configs

    senders = [*config["flows"], *config.get("workloads", [])]
    crossed = {k for s in senders if s.get("ecn", "off") != "off" for k in s.get("path", [0])}
    topology = is_topology(config)
    return [f"{f'link[{k}]' if topology else 'bottleneck'}.mark_threshold: no ECN-capable flow sends through "
            "this link, so the step marker marks nothing and the link is a plain droptail FIFO (set ecn = true "
            "on a [[flow]] or [[workload]] that crosses it)"
            for k, link in enumerate(link_configs(config)) if "mark_threshold" in link and k not in crossed]
