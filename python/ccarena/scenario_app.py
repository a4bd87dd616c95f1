"""A flow's ``app`` table: an application-limited sender, whose
application writes at most a rate, or in ON/OFF periods, or both
(crates/sim/src/app.rs; the sender's side, Linux's app-limited marking
and idle restart, crates/sim/src/tcp/app_limited.rs).
docs/scenario-format.md ("Application-limited senders") is the reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from . import units
from .errors import ScenarioError
from .scenario_limits import check as check_limits
from .scenario_types import Rate, Strict, Time


class App(Strict):
    """What the flow's application writes."""

    #: Payload rate it writes at most while ON ("10Mbit"); absent: as fast
    #: as the sender takes it.
    rate: Rate | None = None
    #: ON/OFF: it writes during ON periods and not at all during OFF ones
    #: (starting ON); both or neither.
    on: Time | None = None
    off: Time | None = None
    #: "exponential" (default): period lengths drawn with these means (a
    #: Markov ON/OFF source); "fixed": exactly these.
    periods: Literal["exponential", "fixed"] | None = None


def resolve_app(app: App, path: str, duration_ns: int, limits: Mapping[str, int]) -> dict[str, Any]:
    """The engine's ``AppConfig`` of a flow's ``app`` table at ``path``."""
    if app.rate is None and app.on is None and app.off is None:
        raise ScenarioError(path, "give a rate, or on and off periods (or both)")
    config: dict[str, Any] = {}
    if app.rate is not None:
        rate_bps = units.parse_rate(app.rate)
        check_limits(f"{path}.rate", app.rate, rate_bps, "bps", limits)
        config["rate_bps"] = rate_bps
    if (app.on is None) != (app.off is None):
        missing = "off" if app.off is None else "on"
        raise ScenarioError(f"{path}.{missing}", "required with the other: ON/OFF periods need both lengths")
    if app.on is None:
        if app.periods is not None:
            raise ScenarioError(f"{path}.periods", "given without on and off periods")
        return config
    lengths = {}
    for key, text in (("on", app.on), ("off", app.off)):
        ns = units.parse_time(text)
        if ns > duration_ns:
            raise ScenarioError(f"{path}.{key}", f"{text!r} is longer than the run ({units.format_time(duration_ns)})")
        lengths[key] = ns
    # The engine's limits::app_cycles, the same quotient.
    cycles = duration_ns // (lengths["on"] + lengths["off"])
    if cycles > limits["max_app_cycles"]:
        raise ScenarioError(f"{path}.on", f"{cycles:,} ON/OFF cycles over the run, above the engine's limit of "
                                          f"{limits['max_app_cycles']:,} (lengthen on or off, or shorten the run)")
    config["on_off"] = {"on_ns": lengths["on"], "off_ns": lengths["off"],
                        "exponential": (app.periods or "exponential") == "exponential"}
    return config
