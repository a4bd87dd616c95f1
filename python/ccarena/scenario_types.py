"""Building blocks of the scenario schema shared by its modules
(scenario.py, scenario_aqm.py): strict models and quantity strings."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, StrictFloat, StrictInt

from . import units
from .errors import ScenarioError

# --------------------------------------------------------------------------
# Schema. Quantities stay strings here (so that summary.json can show them
# as written); their validators only check that they parse.


def _check(parser):
    # Before the str check, so that `duration = 120` gets the unit hint.
    def validate(value: object) -> object:
        try:
            parser(value)
        except units.UnitError as err:
            raise ValueError(str(err)) from None
        return value

    return BeforeValidator(validate)


def parse_time_or_zero(value: object) -> int:
    """ns of a time string that may be zero (an instant, or "0ms": none)."""
    return units.parse_time(value, allow_zero=True)


@dataclass(frozen=True)
class Quantity:
    """Marks a field whose text stands for numbers (a time, a rate, a size;
    a trace file's lines; an algorithm's parameters), for what walks the
    schema to find every numeric field (scenario_limits.py, its test)."""

    kind: str


Time = Annotated[str, _check(units.parse_time), Quantity("time")]
Instant = Annotated[str, _check(parse_time_or_zero), Quantity("time")]
#: A length of time that may be zero ("0ms": none); the same check as Instant.
TimeOrZero = Instant
Rate = Annotated[str, _check(units.parse_rate), Quantity("rate")]
SizeText = Annotated[str, _check(units.parse_size), Quantity("size")]
Number = StrictFloat | StrictInt


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def check_regular_file(path: Path, shown: str, field: str) -> None:
    """A file a scenario names (a trace, a size distribution) exists and is
    a regular file (not a device to read forever); else a ScenarioError for
    ``field`` quoting the path as written (``shown``)."""
    try:
        mode = path.stat().st_mode
    except OSError as err:
        raise ScenarioError(field, f"cannot read {shown!r}: {err.strerror or err}") from None
    if not stat.S_ISREG(mode):
        raise ScenarioError(field, f"{shown!r} is not a regular file")


def scenario_file(text: str, base_dir: Path | None) -> Path:
    """Where a file a scenario names (a trace, a size file, a host model)
    is: relative to the scenario's directory ``base_dir`` (None: the
    working directory, for a table or TOML text), unless absolute."""
    path = Path(text)
    return path if base_dir is None or path.is_absolute() else base_dir / path


def read_small_file(path: Path, shown: str, field: str, max_bytes: int, what: str) -> bytes:
    """The bytes of a regular file a scenario names, of at most
    ``max_bytes`` (a device, a pipe or a huge file is refused, not read
    forever); problems are ScenarioErrors for ``field`` quoting ``shown``,
    ``what`` naming the kind of file expected ("a size file")."""
    check_regular_file(path, shown, field)
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as err:
        raise ScenarioError(field, f"cannot read {shown!r}: {err.strerror or err}") from None
    if len(data) > max_bytes:
        # (The field may be the path itself, a scenario file's: not twice.)
        subject = "" if shown == field else f"{shown!r} is "
        raise ScenarioError(field, f"{subject}larger than {max_bytes >> 20} MiB: not {what}")
    return data
