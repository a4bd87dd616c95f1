"""Measuring what Linux hosts add to a flow's timing, and fitting the
simulator's host model (crates/sim/src/host.rs) to it.

``ccarena live host --measure`` runs, on the live testbed (root):

1. **Turnarounds, stalls, start phase**: two CUBIC flows (10 and 50 ms,
   100 Mbit/s, 2 MB, the userspace bottleneck so that the delay line sees
   each data segment leave the bottleneck) with the delay line's packet
   trace (crates/delayline/src/trace.rs). CUBIC is ACK-clocked, so each
   ACK that releases data times the sender. From the trace:

   - the receiver's part of each ACK's turnaround: from the instant a
     segment was due at the receiver (the delay line's write of it: its
     bottleneck departure, which follows its one-way delay) to the instant the ACK that covers it exactly reached
     the delay line (the delay line's lateness writing the segment, the
     router and veths, the receiver's stack and host);
   - the sender's part: from the instant an ACK was due at the sender to
     the instant the first new segment it released reached the delay line
     (the delay line's lateness writing the ACK, the sender's stack and
     host);
   - the stalls in this trace (see 2), to leave the turnaround samples
     that overlap one out of the turnarounds: the model has the stalls
     separately;
   - the turnarounds longer than :data:`STALL_LATE_NS`, merged where they
     overlap: moments the receiver's or the sender's host was descheduled
     (:func:`host_stalls`), which the model counts as stalls, not as a
     per-ACK delay;
   - the start phase: how far apart the flows' first SYNs were, though the
     engine starts them at the same configured instant.

2. **Timer lateness and stalls**: two BBR flows (paced; the kernel
   bottleneck, the engine's default, whose delay line handles whole GSO
   frames) with the kernel's tracepoints ``timer:hrtimer_start`` and
   ``timer:hrtimer_expire_entry`` for ``tcp_pace_kick`` (tracefs): how long
   after its due time each pacing timer ran; and the delay line's trace
   again, for its stalls: moments when it wrote nothing though a packet
   was due, for more than :data:`STALL_LATE_NS` (the process, or the whole
   machine, was descheduled), how often and how long. They are taken from
   the runs in the engine's default mode because they depend on the
   delay line's load: per packet (the userspace bottleneck) it has ~10
   times the writes of GSO frames, and stalls more.

Each on an idle host, and again with one spinning process per CPU (a
busy host). The fit is empirical: quantiles at :data:`PROBABILITIES` of
each sample; the ACK turnaround is the sum of the receiver's and the
sender's parts, as independent draws (their convolution, by sampling with
a fixed seed so that the fit is a function of the measurement).
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: Cumulative probabilities of the fitted quantiles: the body in tenths,
#: the tail (where stalls and softirq batches live) finer.
PROBABILITIES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1.0)
#: A packet the delay line wrote this late was held by a stall, not by
#: scheduling noise: ten times the lateness's p99 on an idle testbed
#: (~50 us), and twice one full packet's time at 100 Mbit/s.
STALL_LATE_NS = 250_000
#: A turnaround sample longer than this is not a host's: a delayed-ACK
#: timer (>= 40 ms on Linux) or an ACK after loss recovery, whose segment
#: left long before.
MAX_TURNAROUND_NS = 5_000_000

#: A run whose CPUs the hypervisor gave to others for more than this share
#: of its time (/proc/stat's steal) measures the hypervisor, not Linux: on
#: this machine's virtual CPUs such runs had 7x the stalls (37 per second,
#: up to 135 ms) of runs with under 1% stolen. It is repeated.
MAX_STEAL = 0.05
#: A live run whose delay line wrote more than this many packets a second
#: over 1 ms late ran on a stalling testbed (docs/host.md, "Two machines,
#: two testbeds"): on the machine of the `linux-stalls` model the
#: 40-s runs of `make bench-fidelity` had 222-861 such packets (quartiles;
#: 5.5-21.5 a second), on the quiet machine of `linux` 3-28 (under 1 a
#: second, 11 at most).
STALLING_LATE_PER_S = 5.0

#: Attempts per measurement at most, to find the clean runs asked for.
MAX_ATTEMPTS_PER_RUN = 3

#: The delay line's trace records (crates/delayline/src/trace.rs).
TRACE_DTYPE = np.dtype([("t", "<u8"), ("due", "<u8"), ("key", "<u2"), ("kind", "u1"), ("flags", "u1"),
                        ("seq", "<u4"), ("ack", "<u4"), ("len", "<u4")])
READ, WRITTEN = 0, 1
SYN = 0x02

#: The turnaround measurement: ACK-clocked senders, the userspace bottleneck.
TURNAROUND_SCENARIO: dict[str, Any] = {
    "duration": "20s",
    "measure": {"from": "2s"},
    "bottleneck": {"rate": "100Mbit", "buffer": "2MB"},
    "flow": [{"cc": "cubic", "rtt": "10ms"}, {"cc": "cubic", "rtt": "50ms"}],
}
#: The timer measurement: paced senders, the kernel bottleneck.
TIMER_SCENARIO: dict[str, Any] = {
    "duration": "20s",
    "measure": {"from": "2s"},
    "bottleneck": {"rate": "100Mbit", "buffer": "2MB"},
    "flow": [{"cc": "bbr", "rtt": "10ms"}, {"cc": "bbr", "rtt": "50ms"}],
}
TRACEFS = Path("/sys/kernel/tracing")


# --------------------------------------------------------------------------
# Reading a packet trace.


def read_trace(path: Path) -> np.ndarray:
    return np.fromfile(path, dtype=TRACE_DTYPE)


def stalls(records: np.ndarray) -> list[tuple[int, int]]:
    """The stalls in a trace, [start, end) in ns: the delay line wrote
    nothing while a packet was due, for more than STALL_LATE_NS. Between
    two consecutive writes, the second packet was due at ``due``; if the
    first write came before that, the stall began at ``due``, else at the
    first write (it was already behind), and it ended at the second write."""
    w = records[records["kind"] == WRITTEN]
    order = np.argsort(w["t"], kind="stable")
    t, due = w["t"][order].astype(np.int64), w["due"][order].astype(np.int64)
    start = np.maximum(t[:-1], due[1:])
    stalled = np.nonzero(t[1:] - start > STALL_LATE_NS)[0]
    return [(int(start[i]), int(t[i + 1])) for i in stalled]


def path_stalled(late_over_1ms: int, seconds: float) -> bool:
    """Whether a live run's delay line (``late_over_1ms`` packets written
    over 1 ms late in ``seconds``) ran on a stalling testbed."""
    return late_over_1ms > STALLING_LATE_PER_S * seconds


def _overlaps(starts: np.ndarray, ends: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """For each [start, end]: whether it overlaps any of ``spans``."""
    hit = np.zeros(len(starts), dtype=bool)
    for s, e in spans:
        hit |= (starts < e) & (ends > s)
    return hit


def turnarounds(records: np.ndarray, spans: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The receivers' and the senders' parts of the ACK turnarounds over
    every flow of the trace, outside ``spans`` (the delay line's stalls):
    rows of [the instant it began, its length], ns."""
    receiver, sender = [], []
    for flow in range(int(records["key"].max()) // 2 + 1):
        data, acks = 2 * flow, 2 * flow + 1
        first = records[(records["key"] == data) & (records["kind"] == READ)]
        if not len(first):
            continue
        isn = np.uint64(first["seq"][0])  # sequence numbers from the SYN's: no wrap-around in < 4 GB

        def rel(numbers: np.ndarray) -> np.ndarray:
            return (numbers.astype(np.uint64) - isn) & np.uint64(0xFFFFFFFF)

        # Receiver: data written toward it, ACKs read from it.
        dw = records[(records["key"] == data) & (records["kind"] == WRITTEN) & (records["len"] > 0)]
        ar = records[(records["key"] == acks) & (records["kind"] == READ)]
        end = rel(dw["seq"]) + dw["len"]
        order = np.argsort(end, kind="stable")  # stable: the last write of an end is the latest
        end, due = end[order], dw["due"][order]
        ack = rel(ar["ack"])
        advancing = np.concatenate([[True], ack[1:] > ack[:-1]]) if len(ack) else ack.astype(bool)
        ack, t_ack = ack[advancing], ar["t"][advancing]
        k = np.searchsorted(end, ack, side="right") - 1
        exact = (k >= 0) & (end[np.clip(k, 0, None)] == ack) if len(end) else np.zeros(len(ack), bool)
        start, stop = due[k[exact]].astype(np.int64), t_ack[exact].astype(np.int64)
        receiver.append(_kept(start, stop, spans))
        # Sender: ACKs written toward it, new data read from it.
        aw = records[(records["key"] == acks) & (records["kind"] == WRITTEN)]
        dr = records[(records["key"] == data) & (records["kind"] == READ) & (records["len"] > 0)]
        wack = rel(aw["ack"])
        advancing = np.concatenate([[True], wack[1:] > wack[:-1]]) if len(wack) else wack.astype(bool)
        ack_due, ack_t = aw["due"][advancing].astype(np.int64), aw["t"][advancing].astype(np.int64)
        seq = rel(dr["seq"])
        new = np.concatenate([[True], seq[1:] > np.maximum.accumulate(seq)[:-1]]) if len(seq) else seq.astype(bool)
        t_new = dr["t"][new].astype(np.int64)
        if not len(t_new) or not len(ack_t):
            continue
        # The first new segment read after the ACK was written, if it came
        # before the next ACK (else the ACK released nothing by itself).
        j = np.searchsorted(t_new, ack_t, side="left")
        nxt = np.concatenate([ack_t[1:], [np.iinfo(np.int64).max]])
        ok = j < len(t_new)
        ok[ok] &= t_new[j[ok]] < nxt[ok]
        sender.append(_kept(ack_due[ok], t_new[j[ok]], spans))
    none = np.empty((0, 2), np.int64)
    return (np.concatenate(receiver) if receiver else none, np.concatenate(sender) if sender else none)


def _kept(start: np.ndarray, stop: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    d = stop - start
    keep = (d >= 0) & (d <= MAX_TURNAROUND_NS) & ~_overlaps(start, stop, spans)
    return np.stack([start[keep], d[keep]], axis=1)


def host_stalls(*turns: np.ndarray) -> list[tuple[int, int]]:
    """The turnarounds longer than STALL_LATE_NS, as the moments a host
    was descheduled that they are: [start, end) in ns, merged where they
    overlap (every ACK due while a host is stalled waits for its end, so
    one stall makes a run of long turnarounds, of one flow or several)."""
    rows = np.concatenate([t for t in turns if len(t)] or [np.empty((0, 2), np.int64)])
    rows = rows[rows[:, 1] > STALL_LATE_NS]
    rows = rows[np.argsort(rows[:, 0], kind="stable")]
    merged: list[tuple[int, int]] = []
    for start, length in rows.tolist():
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], start + length))
        else:
            merged.append((start, start + length))
    return merged


def start_offsets(records: np.ndarray) -> list[int]:
    """How long after the first flow's SYN each other flow's first SYN
    reached the delay line, ns."""
    firsts = []
    for key in range(0, int(records["key"].max()) + 1, 2):
        syn = records[(records["key"] == key) & (records["kind"] == READ) & ((records["flags"] & SYN) != 0)]
        if len(syn):
            firsts.append(int(syn["t"][0]))
    return [t - min(firsts) for t in firsts if t != min(firsts)]


# --------------------------------------------------------------------------
# Timer lateness from tracefs.


def pacing_timer_lateness(trace_text: str) -> np.ndarray:
    """ns by which each ``tcp_pace_kick`` hrtimer ran after its expiry."""
    armed: dict[str, int] = {}
    late = []
    for line in trace_text.splitlines():
        if "function=tcp_pace_kick" not in line:
            continue
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "hrtimer_start:" in line:
            armed[fields["hrtimer"]] = int(fields["expires"])
        elif "hrtimer_expire_entry:" in line and fields["hrtimer"] in armed:
            late.append(int(fields["now"]) - armed.pop(fields["hrtimer"]))
    late = np.array(late, dtype=np.int64)
    # A timer never runs before its expiry: a negative pair (4 in ~10,000
    # here, ~0.9 ms early) is a start and an expiry of two different timers
    # at one address (a socket freed and another allocated there).
    return late[late >= 0]


class TimerTrace:
    """The pacing timers' tracepoints, on for the ``with`` block."""

    EVENTS = ("timer/hrtimer_start", "timer/hrtimer_expire_entry")

    def __init__(self) -> None:
        if not (TRACEFS / "events").is_dir():
            subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], check=False, capture_output=True)
        if not (TRACEFS / "events" / "timer").is_dir():
            raise RuntimeError(f"tracefs is not available at {TRACEFS}")
        address = next(line.split()[0] for line in Path("/proc/kallsyms").read_text().splitlines()
                       if line.endswith(" tcp_pace_kick"))
        self.filter = f"function == 0x{address}"
        self.text = ""

    def _write(self, name: str, value: str) -> None:
        (TRACEFS / name).write_text(value)

    def __enter__(self) -> TimerTrace:
        self._write("tracing_on", "0")
        self._write("trace", "")
        self._write("buffer_size_kb", "32768")
        for event in self.EVENTS:
            self._write(f"events/{event}/filter", self.filter)
            self._write(f"events/{event}/enable", "1")
        self._write("tracing_on", "1")
        return self

    def __exit__(self, *exc: object) -> None:
        self._write("tracing_on", "0")
        for event in self.EVENTS:
            self._write(f"events/{event}/enable", "0")
            self._write(f"events/{event}/filter", "0")
        self.text = (TRACEFS / "trace").read_text()
        self._write("trace", "")


# --------------------------------------------------------------------------
# Fitting.


def quantiles(sample: np.ndarray, weights: np.ndarray | None = None) -> list[list[float | int]]:
    """(probability, ns) points of ``sample`` at PROBABILITIES (each value
    counted ``weights`` times, when given)."""
    sample = np.asarray(sample, dtype=np.float64)
    if weights is None:
        values = np.quantile(sample, PROBABILITIES)
    else:
        values = np.quantile(sample, PROBABILITIES, weights=weights, method="inverted_cdf")
    return [[p, int(round(v))] for p, v in zip(PROBABILITIES, np.maximum.accumulate(values), strict=True)]


def fit(samples: dict[str, Any]) -> dict[str, Any]:
    """The host model of one condition's measurement (the form a scenario's
    ``[host]`` table takes, in ns).

    The ACK turnaround is fitted to the turnarounds up to STALL_LATE_NS:
    what a host adds to each ACK. Longer ones are moments the host was
    descheduled (``host_stall_lengths_ns``), events in time, not per ACK:
    drawn per ACK, their number would grow with the packet rate (a lone
    BBR flow at 500 Mbit/s then kept 3 times the queue it keeps on the
    live testbed, docs/host.md). They join the delay line's stalls, each
    kind at its own rate, in one Poisson process of stalls."""
    rng = np.random.default_rng(0)
    receiver, sender = (np.asarray(samples[k], dtype=np.int64) for k in ("receiver_ns", "sender_ns"))
    receiver, sender = receiver[receiver <= STALL_LATE_NS], sender[sender <= STALL_LATE_NS]
    n = 200_000
    ack = rng.choice(receiver, n) + rng.choice(sender, n)
    offsets = np.asarray(samples["start_offsets_ns"], dtype=np.float64)
    # The two kinds of stall as one distribution of lengths: each stall
    # weighs 1 / the seconds of the runs it was counted in, so the weights
    # add up to the stalls' rate.
    kinds = [(samples[k], seconds) for k, seconds in (("stall_lengths_ns", samples["seconds"]),
                                                      ("host_stall_lengths_ns", samples["turnaround_seconds"]))
             if seconds > 0]
    lengths = np.concatenate([np.asarray(x, dtype=np.float64) for x, _ in kinds])
    weights = np.concatenate([np.full(len(x), 1.0 / seconds) for x, seconds in kinds])
    return {
        "start_spread_ns": int(round(float(np.quantile(offsets, 0.95)))) if len(offsets) else 0,
        "ack_delay_ns": quantiles(ack),
        "timer_lateness_ns": quantiles(np.asarray(samples["timer_lateness_ns"])),
        "stalls_per_s": round(float(weights.sum()), 3),
        "stall_length_ns": quantiles(lengths, weights) if len(lengths) else [],
        **({"hz": hz} if (hz := model_hz(samples)) else {}),
    }


def model_hz(samples: dict[str, Any]) -> int | None:
    """The tick a model takes from its measurement: the kernel's CONFIG_HZ
    as recorded with the samples, where it is a whole number of ms (a
    scenario's ``host.hz`` must divide 1000); else None (the default,
    1000)."""
    from ..host import whole_ms_tick
    from ..scenario_limits import engine_limits

    hz = int(samples.get("hz", 0))
    return hz if whole_ms_tick(hz, engine_limits()) else None


# --------------------------------------------------------------------------
# Measuring.


def _traced_seconds(records: np.ndarray) -> float:
    return (int(records["t"][-1]) - int(records["t"][0])) / 1e9 if len(records) else 0.0


def cpu_times() -> tuple[int, int]:
    """(steal, total) CPU time of the machine so far, in clock ticks
    (/proc/stat): the time a hypervisor gave this virtual machine's CPUs to
    others. Stalls grow with it; a measurement says how much there was."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    steal = fields[7] if len(fields) > 7 else 0
    return steal, sum(fields[:8])


def steal_fraction(before: tuple[int, int], after: tuple[int, int]) -> float:
    total = after[1] - before[1]
    return (after[0] - before[0]) / total if total > 0 else 0.0


def _spinners(busy: bool) -> list[subprocess.Popen]:
    """One process spinning on each CPU this process may use (a busy host)."""
    if not busy:
        return []
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in os.sched_getaffinity(0)]


def measure(busy: bool, runs: int, log: Callable[[str], None]) -> dict[str, Any]:
    """The raw samples of one condition (idle or busy): ``runs`` clean runs
    (at most MAX_STEAL of their CPU time stolen) of each measurement."""
    from .engine import load_live_scenario, run_live

    out: dict[str, Any] = {"receiver_ns": [], "sender_ns": [], "start_offsets_ns": [], "stall_lengths_ns": [],
                           "host_stall_lengths_ns": [], "timer_lateness_ns": [], "seconds": 0.0,
                           "turnaround_seconds": 0.0, "runs": runs, "busy": busy, "steal": [],
                           "discarded_steal": [], "hz": kernel_hz() or 0}
    condition = "busy" if busy else "idle"
    spinning = _spinners(busy)

    def clean_runs(what: str, one: Callable[[int], Callable[[], None]]) -> None:
        kept = attempt = 0
        while kept < runs and attempt < MAX_ATTEMPTS_PER_RUN * runs:
            attempt += 1
            log(f"ccarena: host measurement ({condition}), {what} {kept + 1}/{runs}")
            before = cpu_times()
            keep = one(attempt)
            steal = steal_fraction(before, cpu_times())
            if steal > MAX_STEAL:
                log(f"ccarena: {100 * steal:.0f}% of that run's CPU time was stolen by the hypervisor: run again")
                out["discarded_steal"].append(round(steal, 4))
                continue
            keep()
            out["steal"].append(round(steal, 4))
            kept += 1
        if kept < runs:
            raise RuntimeError(f"only {kept} of {runs} {what} runs had at most {100 * MAX_STEAL:g}% of their "
                               "CPU time stolen by the hypervisor: measure when the machine is quieter")

    try:
        with tempfile.TemporaryDirectory(prefix="ccarena-host-") as tmp:
            def turnaround_run(seed: int) -> Callable[[], None]:
                trace = Path(tmp) / "trace"
                scenario = load_live_scenario({**TURNAROUND_SCENARIO, "seed": seed}, bottleneck="userspace")
                run_live(scenario, bottleneck="userspace", packet_trace=trace, log=log)
                records = read_trace(trace)
                trace.unlink()

                def keep() -> None:
                    receiver, sender = turnarounds(records, stalls(records))
                    out["receiver_ns"].extend(receiver[:, 1].tolist())
                    out["sender_ns"].extend(sender[:, 1].tolist())
                    out["host_stall_lengths_ns"].extend(e - s for s, e in host_stalls(receiver, sender))
                    out["turnaround_seconds"] += _traced_seconds(records)
                    out["start_offsets_ns"].extend(start_offsets(records))
                return keep

            def timer_run(seed: int) -> Callable[[], None]:
                trace = Path(tmp) / "trace"
                with TimerTrace() as timers:
                    run_live(load_live_scenario({**TIMER_SCENARIO, "seed": seed}), packet_trace=trace, log=log)
                late = pacing_timer_lateness(timers.text).tolist()
                records = read_trace(trace)
                trace.unlink()

                def keep() -> None:
                    out["timer_lateness_ns"].extend(late)
                    out["stall_lengths_ns"].extend(e - s for s, e in stalls(records))
                    out["seconds"] += _traced_seconds(records)
                return keep

            clean_runs("turnarounds", turnaround_run)
            clean_runs("pacing timers", timer_run)
    finally:
        for p in spinning:
            p.kill()
            p.wait()
    return out


def kernel_hz(configs: tuple[Path, ...] | None = None) -> int | None:
    """The running kernel's CONFIG_HZ, from its config (/proc/config.gz, or
    /boot/config-<release>); None where neither can be read. The tick is
    not timing one can trace from a run: it is how the kernel was built."""
    if configs is None:
        configs = (Path("/proc/config.gz"), Path(f"/boot/config-{platform.release()}"))
    for path in configs:
        try:
            raw = path.read_bytes()
            text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8", "replace")
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        for line in text.splitlines():
            if line.startswith("CONFIG_HZ="):
                return int(line.split("=", 1)[1])
    return None


def provenance() -> dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.machine())
    return {"date": datetime.date.today().isoformat(), "kernel": platform.release(), "cpu": cpu,
            "cpus": len(os.sched_getaffinity(0))}


def describe(name: str, model: dict[str, Any]) -> str:
    """A few lines on a model: each distribution's median, p90, p99, max."""
    def dist(points: list) -> str:
        if not points:
            return "none"
        at = dict((p, v) for p, v in points)
        return ", ".join(f"p{round(p * 100, 1):g} {at[p] / 1e3:.1f} us" for p in (0.5, 0.9, 0.99, 1.0) if p in at)
    return "\n".join([
        f"{name}:",
        f"  start spread      {model['start_spread_ns'] / 1e6:.2f} ms",
        f"  ACK turnaround    {dist(model['ack_delay_ns'])}",
        f"  timer lateness    {dist(model['timer_lateness_ns'])}",
        f"  stalls            {model['stalls_per_s']:g}/s, lengths {dist(model['stall_length_ns'])}",
        f"  tick              HZ={model.get('hz', 1000)}",
    ])


def to_toml(name: str, model: dict[str, Any], source: dict[str, Any], samples: dict[str, Any]) -> str:
    import tomli_w

    header = (f"# ccarena host model '{name}': measured by `ccarena live host --measure` on {source['date']},\n"
              f"# Linux {source['kernel']}, {source['cpus']} x {source['cpu']}, "
              f"{'busy (one spinning process per CPU)' if samples['busy'] else 'idle'}; "
              f"{samples['runs']} runs of each measurement, {samples['seconds']:.0f} s traced, "
              f"at most {100 * max(samples['steal']):.1f}% of a run's CPU time stolen by the hypervisor "
              f"({len(samples['discarded_steal'])} runs with more discarded),\n"
              f"# {len(samples['receiver_ns'])} receiver and {len(samples['sender_ns'])} sender turnarounds, "
              f"{len(samples['timer_lateness_ns'])} pacing timers, {len(samples['stall_lengths_ns'])} stalls of the "
              f"path and {len(samples['host_stall_lengths_ns'])} of the hosts.\n"
              + ("# hz: the kernel's CONFIG_HZ, from its config.\n" if "hz" in model else
                 f"# hz: left at 1000: the kernel's CONFIG_HZ is {samples.get('hz') or 'not in its config'} "
                 "(a model's must divide 1000).\n")
              + "# Distributions are [cumulative probability, ns] points (docs/host.md).\n")
    return header + tomli_w.dumps(model)


def raw_samples(samples: dict[str, Any]) -> bytes:
    """Every sample, as NumPy arrays (``numpy.load``): a later fit needs
    no new measurement."""
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{k: np.asarray(v) for k, v in samples.items()})
    return buffer.getvalue()


def load_raw_samples(path: Path) -> dict[str, Any]:
    """The samples :func:`raw_samples` wrote, as :func:`measure` returned
    them (numbers as numbers, samples as arrays)."""
    with np.load(path) as data:
        return {k: data[k].item() if data[k].ndim == 0 else data[k] for k in data.files}


def summary_json(samples: dict[str, Any]) -> str:
    """The raw samples' sizes and a few percentiles (for the record)."""
    def pct(xs: list) -> dict[str, float]:
        a = np.asarray(xs, dtype=np.float64)
        return {f"p{p}": round(float(np.percentile(a, p)) / 1e3, 2) for p in (10, 50, 90, 99)} if len(a) else {}
    kept = ("steal", "discarded_steal")  # fractions per run, as they are
    return json.dumps({k: pct(v) if isinstance(v, list) and k not in kept else v for k, v in samples.items()}, indent=1)
