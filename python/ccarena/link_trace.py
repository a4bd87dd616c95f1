"""Link traces in mahimahi's format (`bottleneck.trace`): one line per
delivery opportunity, the millisecond at which the link may deliver one
MTU-sized packet; lines repeat for several in one millisecond, and the
trace repeats once its last millisecond has passed. The engine's side is
crates/sim/src/trace_link.rs.

A relative path in a scenario file is relative to that file
(``scenario.resolve``'s ``base_dir``); in a dict or TOML text to the
working directory.

A trace may have 10 million lines (the engine's ``max_trace_opportunities``),
so it is read in chunks with numpy and held compactly, never as a list of
Python ints: the engine's ``TraceConfig`` carries the instants as the gap
of each from the previous one in ms, unsigned LEB128 (mostly a byte each),
in base64 (crates/sim/src/trace_instants.rs); summary.json records the
trace by its size and a SHA-256 digest of its instants.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from . import units
from .errors import ScenarioError
from .scenario_types import check_regular_file

#: Bytes of text read at most (10^7 opportunities of up to ~10 characters).
MAX_TRACE_FILE_BYTES = 128 << 20
#: Bytes read at a time: a chunk's numbers and their text cost a few MB.
CHUNK_BYTES = 4 << 20

_LINE_BREAKS = b"\r\n"
_NUMBER_TEXT = b"0123456789 \t" + _LINE_BREAKS


def summary_of(trace: dict[str, Any]) -> dict[str, Any]:
    """The resolved trace as summary.json records it: its size and a
    digest of its instants instead of every one (which can be millions)."""
    return {key: value for key, value in trace.items() if key != "gaps_ms"}


def read_trace(path_text: str, limits: Mapping[str, int], field: str = "bottleneck.trace") -> dict[str, Any]:
    """The trace file as the engine's ``TraceConfig``, validated: lines of
    non-negative whole ms, never decreasing, the last (the period) after 0
    and within the engine's limits of lines and period; problems name
    ``field``, the key that names the file."""
    path = Path(path_text)
    check_regular_file(path, path_text, field)
    reader = _Reader(path_text, limits["max_trace_opportunities"], limits["max_trace_period_ns"] // 1_000_000, field)
    with open(path, "rb") as handle:
        for chunk, first_line in _chunks(handle, path_text, field):
            reader.add(chunk, first_line)
    return reader.config()


def _chunks(handle: IO[bytes], path_text: str, field: str) -> Iterator[tuple[bytes, int]]:
    """The file in chunks of whole lines, each with its first line's number."""
    rest, line, read = b"", 1, 0
    while True:
        data = handle.read(CHUNK_BYTES)
        read += len(data)
        if read > MAX_TRACE_FILE_BYTES:
            raise ScenarioError(field, f"{path_text!r} is larger than {MAX_TRACE_FILE_BYTES >> 20} MiB")
        text = rest + data
        # Cut after the last "\n" (a "\r\n" stays whole); at the end, all.
        cut = text.rfind(b"\n") + 1 if data else len(text)
        chunk, rest = text[:cut], text[cut:]
        if chunk:
            yield chunk, line
            line += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
        if not data:
            return


class _Reader:
    """Checks a trace's chunks in order and keeps what the engine needs."""

    def __init__(self, path_text: str, max_lines: int, max_ms: int, field: str) -> None:
        self.path_text, self.max_lines, self.max_ms, self.field = path_text, max_lines, max_ms, field
        self.count, self.last_ms = 0, 0
        self.digest = hashlib.sha256()
        self.gaps: list[bytes] = []

    def add(self, chunk: bytes, first_line: int) -> None:
        import numpy as np

        values = None
        if not (chunk.translate(None, _NUMBER_TEXT) or _two_on_a_line(chunk)):
            # int64 saturates (at 2^63 - 1) on a number too long: out of range below.
            values = np.fromstring(chunk, dtype=np.int64, sep=" ")
            if values.size and (values[0] < self.last_ms or values.max() > self.max_ms or (np.diff(values) < 0).any()):
                values = None  # the line-by-line reading names the line
        if values is None:
            values = self._lines(chunk, first_line)
        values = np.asarray(values, dtype=np.uint32)
        if self.count + values.size > self.max_lines:
            raise ScenarioError(self.field, f"{self.path_text!r} has more than the engine's limit of {self.max_lines} lines")
        if not values.size:
            return
        self.digest.update((b"," if self.count else b"") + _ns_text(chunk, values))
        self.gaps.append(_leb128(np.diff(values, prepend=np.uint32(self.last_ms))))
        self.count += values.size
        self.last_ms = int(values[-1])

    def _lines(self, chunk: bytes, first_line: int) -> list[int]:
        """The chunk's numbers, read line by line; a bad line is an error
        that names it."""
        out: list[int] = []
        prev = self.last_ms
        for number, line in enumerate(chunk.splitlines(), first_line):
            text = line.strip()
            if not text:
                continue
            if not text.isdigit():
                shown = text.decode("utf-8", errors="replace")[:20]
                raise ScenarioError(self.field, f"{self.path_text!r} line {number}: {shown!r} is not a whole number of ms")
            ms = int(text)
            if ms < prev:
                raise ScenarioError(self.field, f"{self.path_text!r} line {number}: {ms} ms is before the line above "
                                           f"({prev} ms)")
            if ms > self.max_ms:
                raise ScenarioError(self.field, f"{self.path_text!r} line {number}: {ms} ms is beyond the engine's limit "
                                           f"of {units.format_time(self.max_ms * 1_000_000)} for a trace's period")
            out.append(ms)
            prev = ms
        return out

    def config(self) -> dict[str, Any]:
        if not self.count or self.last_ms == 0:
            raise ScenarioError(self.field, f"{self.path_text!r} has no opportunity after 0 ms (its last line is its period)")
        return {
            "opportunities": self.count,
            "gaps_ms": base64.b64encode(b"".join(self.gaps)).decode("ascii"),
            "period_ns": self.last_ms * 1_000_000,
            "opportunity_bytes": units.PACKET_WIRE_BYTES,
            "opportunities_sha256": self.digest.hexdigest(),
        }


def _two_on_a_line(chunk: bytes) -> bool:
    """Whether a chunk of digits and blanks has two numbers on a line (which
    numpy would read as two lines)."""
    return (b" " in chunk or b"\t" in chunk) and re.search(rb"\d[ \t]+\d", chunk) is not None


def _ns_text(chunk: bytes, values: Any) -> bytes:
    """The digest's text of the chunk's instants: each in ns, joined by
    commas (ms x 10^6 is the ms's digits and six zeros, but for 0 ms)."""
    text = chunk.replace(b"\r\n", b"\n")
    canonical = (not text.translate(None, b"0123456789\n") and text.endswith(b"\n") and b"\n\n" not in text
                 and not text.startswith((b"0", b"\n")) and b"\n0" not in text)
    if canonical:  # one number a line, no blanks, no leading zeros: its own text
        return text[:-1].replace(b"\n", b"000000,") + b"000000"
    return ",".join(str(ms * 1_000_000) for ms in values.tolist()).encode()


def _leb128(values: Any) -> bytes:
    """Each value (u32) in unsigned LEB128: 7 bits a byte, low bits first,
    the high bit set on every byte but a value's last."""
    import numpy as np

    values = values.astype(np.uint32)
    if not values.size or values.max() < 0x80:
        return values.astype(np.uint8).tobytes()  # the usual trace: one byte each
    sizes = 1 + sum((values >> (7 * k) > 0).astype(np.int64) for k in range(1, 5))
    digits = np.stack([(values >> (7 * k)) & 0x7F for k in range(5)], axis=1).astype(np.uint8)
    digits[np.arange(5) < sizes[:, None] - 1] |= 0x80
    return digits[np.arange(5) < sizes[:, None]].tobytes()
