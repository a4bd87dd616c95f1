"""`make bench-delayline`: how much the live engine's delay line carries.

One bulk TCP flow (CUBIC by default) through the real live testbed
(`ccarena.live.engine.run_live`: namespaces, the TUN delay line, the kernel
bottleneck) with a 10 ms RTT, by default twice:

- behind a 10 Gbit/s bottleneck (16 MB), far above what this machine
  forwards, so that the delay line (or the kernel's work around it) limits
  the flow: what the host carries flat out (the figure the engine caches,
  ccarena.live.capacity);
- behind a 1 Gbit/s bottleneck (2 MB): how close the flow gets to the TCP
  payload ceiling (1448/1514 of the rate). This used to be a test's floor
  (>= 900 Mbit/s); it depends on the machine and its load (955.6 Mbit/s on
  an idle 2-core VM, 594-665 on a slower one), so it is printed here.

`--rate` (and `--buffer`) runs one configuration instead. Prints, for the
measurement window:

- the flow's goodput, and TCP's mean RTT: far above 10 ms means packets
  waited in front of the delay line (it did not keep up);
- the delay line's CPU time (user, system). Its system time includes the
  kernel's forwarding of every packet it writes (routing, the bottleneck
  qdisc and, as softirq, the receiver's stack), done inside its write()
  calls; `--split-cpus` pins it to CPU 0 and steers that work to the other
  CPUs (RPS on the TUN device), so that its CPU time is its own;
- the whole machine's CPU use (2 cores shared with other work, which
  shows here);
- the delay line's counters: frames read and written (with GSO up to
  64 KB each) and the wire packets they stand for; lateness (how long
  after their due time packets left).

Needs root and `make build`; takes the testbed lock like any live run
(waits up to CCARENA_LIVE_WAIT seconds, default 300, for another run to
finish). A benchmark, not a test: it fails only if the run does.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

TICKS_PER_S = os.sysconf("SC_CLK_TCK")
#: TCP payload per wire byte with timestamps: 1448 of 1514.
PAYLOAD_PER_WIRE = 1448 / 1514
#: The default configurations: (rate, buffer).
PRESETS = [("10Gbit", "16MB"), ("1Gbit", "2MB")]


def find_delay_line(parent: int) -> int | None:
    """The delay line this process started (`ip netns exec` execs in place)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and "--tun" in argv and Path(argv[0]).name.startswith("delayline"):
            return int(entry.name)
    return None


def process_cpu_s(pid: int) -> tuple[float, float] | None:
    """(user, system) CPU seconds of `pid` so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) / TICKS_PER_S, int(fields[12]) / TICKS_PER_S


def machine_cpu_s() -> tuple[float, float]:
    """(busy, total) CPU seconds of all cores so far (/proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values) - idle) / TICKS_PER_S, sum(values) / TICKS_PER_S


def split_cpus(pid: int) -> bool:
    """testbed.split_forwarding for this run (the engine does it by itself
    from testbed.SPLIT_FROM_BPS on). False until the device exists."""
    from ccarena.errors import ScenarioError
    from ccarena.live import testbed
    from ccarena.live.hygiene import run_prefix

    try:
        return testbed.split_forwarding(testbed.Names.for_prefix(run_prefix()), [pid])
    except ScenarioError:
        return False


class CpuSampler(threading.Thread):
    """Samples the delay line's and the machine's CPU counters every 100 ms
    so that the measurement window can be cut out afterwards (and, with
    `split`, separates the delay line's CPU from the kernel's work)."""

    def __init__(self, split: bool) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[int, tuple[float, float], tuple[float, float]]] = []
        self.stop = threading.Event()
        self.split, self.was_split = split, False

    def run(self) -> None:
        pid = None
        while not self.stop.wait(0.1):
            pid = pid or find_delay_line(os.getpid())
            if pid and self.split and not self.was_split:
                self.was_split = split_cpus(pid)
            cpu = process_cpu_s(pid) if pid else None
            if cpu is not None:
                self.samples.append((time.monotonic_ns(), cpu, machine_cpu_s()))

    def window(self, start_ns: int, end_ns: int) -> dict[str, float] | None:
        inside = [s for s in self.samples if start_ns <= s[0] <= end_ns]
        if len(inside) < 2:
            return None
        (t_a, (u_a, s_a), (b_a, all_a)), (t_b, (u_b, s_b), (b_b, all_b)) = inside[0], inside[-1]
        wall = (t_b - t_a) / 1e9
        return {
            "wall_s": wall,
            "user": (u_b - u_a) / wall,
            "system": (s_b - s_a) / wall,
            "machine_busy": (b_b - b_a) / (all_b - all_a) if all_b > all_a else 0.0,
        }


def scenario(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "duration": args.duration,
        "measure": {"from": args.measure_from},
        "output": {"interval": "100ms"},
        "bottleneck": {"rate": args.rate, "buffer": args.buffer},
        "flow": [{"cc": args.cc, "rtt": args.rtt}],
    }


def run_once(args: argparse.Namespace) -> None:
    from ccarena.live.engine import load_live_scenario, run_live

    resolved = load_live_scenario(scenario(args), bottleneck=args.bottleneck)
    cfg = resolved.config
    sampler = CpuSampler(args.split_cpus)
    sampler.start()
    started = time.monotonic_ns()
    result = run_live(resolved, log=lambda line: None, bottleneck=args.bottleneck)
    sampler.stop.set()
    sampler.join()
    # The run's t0 lies ~0.3 s after the delay line started (setup, agents);
    # take the CPU window as the last (duration - from) seconds of samples.
    last = sampler.samples[-1][0] if sampler.samples else started
    span_ns = cfg["duration_ns"] - cfg["measure_from_ns"]
    cpu = sampler.window(last - span_ns, last)
    summary = result.summary
    flow = summary["flows"][0]
    dl = summary["live"]["delay_line"]
    mean_size = dl["bytes"] / dl["packets"] if dl["packets"] else 0.0
    was_split = sampler.was_split or summary["live"]["split_forwarding"]
    split = ", delay line on CPU 0, its packets' forwarding on the others" if was_split else ""
    print(f"{args.cc} {args.rtt}, bottleneck {args.rate} ({summary['live']['bottleneck'].split(' ')[0]}), "
          f"window {cfg['measure_from_ns'] / 1e9:g}-{cfg['measure_to_ns'] / 1e9:g} s{split}:")
    print(f"  goodput            {flow['goodput_mbps']:8.1f} Mbit/s   (retransmits {flow['retransmits']}, "
          f"rtt mean {flow['rtt_mean_ms']:.1f} ms)")
    if cpu is None:
        print("  delay line CPU     not sampled")
    else:
        print(f"  delay line CPU     {100 * (cpu['user'] + cpu['system']):8.1f} % of a core   "
              f"(user {100 * cpu['user']:.1f} %, system {100 * cpu['system']:.1f} %)")
        print(f"  machine busy       {100 * cpu['machine_busy']:8.1f} % of {os.cpu_count()} cores")
    # "packets" are what the delay line read and wrote (with GSO: frames,
    # data and ACKs); "segments" the wire packets they stand for.
    segments = dl.get("segments", dl["packets"])
    gso = "GSO frames" if dl.get("gso") else "per packet (no GSO)"
    print(f"  delay line         {gso}: {dl['packets']} frames for {segments} wire packets in the run "
          f"(mean {mean_size:.0f} B), {dl['passthrough']} passed through")
    print(f"  lateness           mean {dl['lateness_mean_us']:.0f} us, max {dl['lateness_max_us']:.0f} us "
          f"(dropped {dl['dropped_overflow']}, real-time priority {dl['realtime']})")
    losses = summary["live"]["losses"]
    places = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in losses["testbed"].items() if v) or "none"
    print(f"  losses (run)       {losses['lost_segments']} segments lost: bottleneck {losses['bottleneck']}, "
          f"host outside it {losses['testbed_total']} ({places}); unexplained {losses['unexplained_losses']}")
    print(f"  retransmissions    {losses['retransmitted_segments']} ({losses['spurious_retransmits']} spurious), "
          f"reordering seen {losses['reordering_seen']}")
    rate_bps = cfg["bottleneck"]["rate_bps"]
    if rate_bps <= 2_000_000_000:  # a rate the host may reach: how close to the payload ceiling
        ceiling = rate_bps * PAYLOAD_PER_WIRE / 1e6
        print(f"  of the ceiling     {100 * flow['goodput_mbps'] / ceiling:8.1f} %   (TCP payload ceiling "
              f"{ceiling:.1f} Mbit/s; the former test's floor, 900 Mbit/s at 1 Gbit/s (94%): "
              f"{'met' if flow['goodput_mbps'] >= 0.94 * ceiling else 'NOT met'})")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="cubic", help="the flow's congestion control (default cubic)")
    parser.add_argument("--rtt", default="10ms")
    parser.add_argument("--rate", help="bottleneck rate (default: 10Gbit, then 1Gbit)")
    parser.add_argument("--buffer", help="bottleneck buffer (default: 16MB at 10Gbit, 2MB at 1Gbit)")
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--from", dest="measure_from", default="2s", help="start of the measurement window")
    parser.add_argument("--bottleneck", default="kernel", choices=("kernel", "userspace"))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--split-cpus", action="store_true",
                        help="pin the delay line to CPU 0 and steer the kernel's forwarding of its packets to the "
                             "other CPUs (RPS), so that its CPU time is its own work")
    args = parser.parse_args()
    os.environ.setdefault("CCARENA_LIVE_WAIT", "300")
    from ccarena.errors import ScenarioError

    presets = [(args.rate, args.buffer or "16MB")] if args.rate else PRESETS
    try:
        for rate, buffer in presets:
            for _ in range(args.runs):
                run_once(argparse.Namespace(**{**vars(args), "rate": rate, "buffer": args.buffer or buffer}))
    except ScenarioError as err:
        print(f"bench-delayline: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
