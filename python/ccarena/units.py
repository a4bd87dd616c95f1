"""Units of the scenario format: parsing "2.5ms", "100Mbit", "2MB", "5bdp"
into the integers the simulator runs on (ns, bit/s, bytes), and formatting
them back for people.

Sizes are SI (KB = 1000 B) unless binary (KiB = 1024 B). ``pkt`` is one
full-sized packet on the wire (1448 B payload + 66 B headers = 1514 B).
``bdp`` multiples cannot be resolved here: they depend on the bottleneck
rate and the flows' RTTs, so :func:`parse_size` returns a :class:`Size`
that :mod:`ccarena.scenario` resolves.

Fractions (dimensionless ratios such as a gain or a slack) are a number
(``0.01``, ``2.5``) or a percentage string (``"1%"``); per-algorithm
parameters carry them as integer parts per million.

Every parser raises :class:`UnitError` with a message meant for a person;
the caller adds the field path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

#: TCP payload of a full segment (Linux with timestamps over Ethernet).
MSS_BYTES = 1448
#: Headers of a full segment on the wire: TCP 20 + timestamps 12 + IPv4 20
#: + Ethernet 14 = 66, so a full packet occupies 1514 bytes of buffer/wire.
WIRE_OVERHEAD_BYTES = 66
PACKET_WIRE_BYTES = MSS_BYTES + WIRE_OVERHEAD_BYTES

TIME_UNITS_NS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
}

RATE_UNITS_BPS: dict[str, int] = {
    "bit": 1,
    "Kbit": 1_000,
    "kbit": 1_000,
    "Mbit": 1_000_000,
    "Gbit": 1_000_000_000,
    "bps": 1,
    "Kbps": 1_000,
    "kbps": 1_000,
    "Mbps": 1_000_000,
    "Gbps": 1_000_000_000,
}

SIZE_UNITS_BYTES: dict[str, int] = {
    "B": 1,
    "KB": 1_000,
    "kB": 1_000,
    "MB": 1_000_000,
    "GB": 1_000_000_000,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
    "pkt": PACKET_WIRE_BYTES,
    "pkts": PACKET_WIRE_BYTES,
}
BDP_UNITS = ("bdp", "BDP")

# ASCII digits and spaces only: "١٠Mbit" or a no-break space is a typo to
# refuse, not a number to read.
_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*([A-Za-zµ]+)\s*$", re.ASCII)
_PERCENT = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*%\s*$", re.ASCII)

#: A fraction of 1.0 in parts per million (the unit of ``_ppm`` parameters).
PPM = 1_000_000


class UnitError(ValueError):
    """A value that is not a well-formed quantity in the expected unit."""


@dataclass(frozen=True)
class Size:
    """A buffer/threshold size: either bytes, or a multiple of the BDP."""

    value: Decimal
    bdp: bool

    def resolve(self, bdp_bytes: int) -> int:
        """Bytes, given the bottleneck's BDP in bytes."""
        scale = Decimal(bdp_bytes) if self.bdp else Decimal(1)
        return _to_int(self.value * scale)


def _split(text: object, kind: str, units: tuple[str, ...], example: str) -> tuple[Decimal, str]:
    if not isinstance(text, str):
        raise UnitError(f"expected a {kind} string with a unit like {example!r}, got {text!r}")
    match = _QUANTITY.match(text)
    if match is None:
        raise UnitError(f"malformed {kind} {text!r} (expected a number and a unit, e.g. {example!r})")
    number, unit = match.groups()
    if unit not in units:
        raise UnitError(f"unknown {kind} unit {unit!r} in {text!r} (known: {', '.join(units)})")
    try:
        value = Decimal(number)
    except InvalidOperation:  # pragma: no cover - the regex admits only decimals
        raise UnitError(f"malformed number in {text!r}") from None
    return value, unit


def _to_int(value: Decimal) -> int:
    # to_integral_value, not quantize: quantize fails (InvalidOperation)
    # past the context's 28 digits, and the range checks come later.
    return int(value.to_integral_value(rounding=ROUND_HALF_EVEN))


def _positive(value: Decimal, text: str, kind: str, allow_zero: bool) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise UnitError(f"{kind} must be {bound}, got {text!r}")


def parse_time(text: object, *, allow_zero: bool = False) -> int:
    """A duration or instant, e.g. "120s", "2.5ms", "500us" -> ns."""
    value, unit = _split(text, "time", tuple(TIME_UNITS_NS), "2.5ms")
    _positive(value, str(text), "time", allow_zero)
    ns = _to_int(value * TIME_UNITS_NS[unit])
    if ns == 0 and not allow_zero:
        raise UnitError(f"time {text!r} is below the simulator's 1 ns resolution")
    return ns


def parse_rate(text: object) -> int:
    """A link rate, e.g. "100Mbit", "2.5Gbit", "10Mbps" -> bit/s."""
    value, unit = _split(text, "rate", tuple(RATE_UNITS_BPS), "100Mbit")
    _positive(value, str(text), "rate", allow_zero=False)
    bps = _to_int(value * RATE_UNITS_BPS[unit])
    if bps == 0:
        raise UnitError(f"rate {text!r} rounds to 0 bit/s")
    return bps


def parse_size(text: object) -> Size:
    """A size, e.g. "2MB", "64KiB", "1000pkt", "0.5bdp"."""
    value, unit = _split(text, "size", (*SIZE_UNITS_BYTES, *BDP_UNITS), "2MB")
    _positive(value, str(text), "size", allow_zero=False)
    if unit in BDP_UNITS:
        return Size(value, bdp=True)
    return Size(value * SIZE_UNITS_BYTES[unit], bdp=False)


def bdp_bytes(rate_bps: int, rtt_ns: int) -> int:
    """Bandwidth-delay product in bytes: rate x RTT, rounded to a byte."""
    return _to_int(Decimal(rate_bps) * Decimal(rtt_ns) / Decimal(8 * 1_000_000_000))


def format_time(ns: int) -> str:
    """ns -> the largest unit that shows it exactly ("20s", "2500us")."""
    for unit in ("s", "ms", "us"):
        scale = TIME_UNITS_NS[unit]
        if ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"


def format_rate(bps: int) -> str:
    """bit/s -> "100Mbit" (the largest exact SI unit)."""
    for unit in ("Gbit", "Mbit", "Kbit"):
        scale = RATE_UNITS_BPS[unit]
        if bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bit"


def format_size(nbytes: int) -> str:
    """bytes -> "2MB" (the largest exact SI unit) or "65536B"."""
    for unit in ("GB", "MB", "KB"):
        scale = SIZE_UNITS_BYTES[unit]
        if nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


def parse_fraction(value: object) -> Decimal:
    """A dimensionless ratio >= 0: a number (``0.01``, ``2.5``) or a
    percentage string (``"1%"``, ``"0.5 %"``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UnitError(f"expected a number like 0.01 or a percentage like '1%', got {value!r}")
    if isinstance(value, str):
        match = _PERCENT.match(value)
        if match is None:
            raise UnitError(f"malformed fraction {value!r} (expected a number like 0.01 or a percentage like '1%')")
        fraction = Decimal(match.group(1)) / 100
    else:
        # Through str(): 0.01 is Decimal("0.01"), not the binary float's digits.
        fraction = Decimal(str(value))
        if not fraction.is_finite():
            raise UnitError(f"expected a finite number, got {value!r}")
    if fraction < 0:
        raise UnitError(f"must be >= 0, got {value!r}")
    return fraction


def fraction_to_ppm(fraction: Decimal, text: object) -> int:
    """A ratio in integer parts per million (rounded); a positive ratio
    below the 1 ppm resolution is an error rather than a silent 0."""
    ppm = _to_int(fraction * PPM)
    if ppm == 0 and fraction > 0:
        raise UnitError(f"{text!r} is below the 1 ppm (0.0001%) resolution")
    return ppm


def format_fraction(ppm: int) -> float:
    """ppm -> the ratio as a number (10000 -> 0.01)."""
    return ppm / PPM


def plural(n: int, noun: str) -> str:
    """``"1 flow"``, ``"2 flows"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
