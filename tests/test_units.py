"""Unit parsing and formatting (python/ccarena/units.py)."""

from decimal import Decimal

import pytest

from ccarena import units
from ccarena.units import UnitError


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("7ns", 7),
        ("250us", 250_000),
        ("250µs", 250_000),
        ("10ms", 10_000_000),
        ("2.5ms", 2_500_000),
        ("120s", 120_000_000_000),
        ("0.5s", 500_000_000),
        (".25s", 250_000_000),
        (" 3 s ", 3_000_000_000),
        ("1.0000000004s", 1_000_000_000),  # rounds to the 1 ns resolution
    ],
)
def test_parse_time(text, ns):
    assert units.parse_time(text) == ns


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("1bit", 1),
        ("64Kbit", 64_000),
        ("64kbit", 64_000),
        ("100Mbit", 100_000_000),
        ("2.5Gbit", 2_500_000_000),
        ("9600bps", 9_600),
        ("56Kbps", 56_000),
        ("10Mbps", 10_000_000),
        ("1Gbps", 1_000_000_000),
    ],
)
def test_parse_rate(text, bps):
    assert units.parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        ("100B", 100),
        ("30KB", 30_000),
        ("2MB", 2_000_000),
        ("0.5MB", 500_000),
        ("1GB", 1_000_000_000),
        ("64KiB", 65_536),
        ("1.5MiB", 1_572_864),
        ("1GiB", 1 << 30),
        ("1000pkt", 1_514_000),
        ("1pkt", 1514),
    ],
)
def test_parse_size_absolute(text, nbytes):
    size = units.parse_size(text)
    assert not size.bdp
    assert size.resolve(bdp_bytes=999) == nbytes  # the BDP does not matter


def test_parse_size_bdp_scales_with_the_bdp():
    size = units.parse_size("0.5bdp")
    assert size.bdp and size.value == Decimal("0.5")
    assert size.resolve(bdp_bytes=125_000) == 62_500
    assert units.parse_size("5BDP").resolve(bdp_bytes=125_000) == 625_000


def test_packet_is_mss_plus_headers_on_the_wire():
    assert units.PACKET_WIRE_BYTES == 1514 == units.MSS_BYTES + units.WIRE_OVERHEAD_BYTES


def test_bdp_bytes_is_rate_times_rtt():
    assert units.bdp_bytes(100_000_000, 10_000_000) == 125_000  # 100 Mbit/s x 10 ms
    assert units.bdp_bytes(100_000_000, 50_000_000) == 625_000


@pytest.mark.parametrize(
    ("parser", "text", "fragment"),
    [
        (units.parse_time, "12 parsecs", "unknown time unit 'parsecs'"),
        (units.parse_time, "12", "expected a number and a unit"),
        (units.parse_time, 12, "expected a time string"),
        (units.parse_time, "ms", "malformed time"),
        (units.parse_time, "-5ms", "must be > 0"),
        (units.parse_time, "0s", "must be > 0"),
        (units.parse_time, "0.1ns", "below the simulator's 1 ns resolution"),
        (units.parse_rate, "100 furlongs", "unknown rate unit"),
        (units.parse_rate, "100MB", "unknown rate unit 'MB'"),
        (units.parse_rate, "0Mbit", "must be > 0"),
        (units.parse_rate, "1.2.3Mbit", "malformed rate"),
        (units.parse_size, "-2MB", "must be > 0"),
        (units.parse_size, "2Mbit", "unknown size unit 'Mbit'"),
        (units.parse_size, "lots", "malformed size"),
        (units.parse_rate, "\u0661\u0660Mbit", "malformed rate"),  # Arabic-Indic digits
        (units.parse_rate, "\uff11\uff10Mbit", "malformed rate"),  # full-width digits
        (units.parse_time, "10\u00a0ms", "malformed time"),  # a no-break space
    ],
)
def test_bad_quantities_explain_themselves(parser, text, fragment):
    with pytest.raises(UnitError) as info:
        parser(text)
    assert fragment in str(info.value)


def test_zero_time_allowed_where_asked():
    assert units.parse_time("0s", allow_zero=True) == 0
    with pytest.raises(UnitError):
        units.parse_time("-1s", allow_zero=True)


@pytest.mark.parametrize(
    ("formatter", "value", "text"),
    [
        (units.format_time, 20_000_000_000, "20s"),
        (units.format_time, 2_500_000, "2500us"),
        (units.format_time, 10_000_000, "10ms"),
        (units.format_time, 7, "7ns"),
        (units.format_rate, 100_000_000, "100Mbit"),
        (units.format_rate, 1_500, "1500bit"),
        (units.format_size, 2_000_000, "2MB"),
        (units.format_size, 65_536, "65536B"),
    ],
)
def test_format_round_trips(formatter, value, text):
    assert formatter(value) == text
    parse = {units.format_time: units.parse_time, units.format_rate: units.parse_rate}.get(formatter)
    if parse is not None:
        assert parse(text) == value


@pytest.mark.parametrize(
    ("value", "ppm"),
    [
        (0.01, 10_000),  # through str(): not the binary float's 0.01000000000000000020816...
        (0.005, 5_000),
        (2, 2_000_000),
        (2.885, 2_885_000),
        (0, 0),
        ("1%", 10_000),
        ("0.5%", 5_000),
        (" 125 % ", 1_250_000),
        (".5%", 5_000),
        (0.0000015, 2),  # rounds half-even to the 1 ppm resolution
    ],
)
def test_fractions_in_parts_per_million(value, ppm):
    assert units.fraction_to_ppm(units.parse_fraction(value), value) == ppm


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("1", "malformed fraction"),
        ("1 pct", "malformed fraction"),
        (-0.5, "must be >= 0"),
        ("-1%", "must be >= 0"),
        (True, "expected a number"),
        ([1], "expected a number"),
        (float("inf"), "finite"),
    ],
)
def test_bad_fractions_explain_themselves(value, fragment):
    with pytest.raises(UnitError) as info:
        units.parse_fraction(value)
    assert fragment in str(info.value)


def test_fraction_below_resolution_is_an_error_not_zero():
    with pytest.raises(UnitError, match="1 ppm"):
        units.fraction_to_ppm(units.parse_fraction(4e-7), 4e-7)
    assert units.format_fraction(10_000) == 0.01
    assert units.format_fraction(2_886_719) == 2.886719
