"""The live engine's subcommands, hooked into ccarena/cli.py:

    ccarena live run SCENARIO.toml [--out DIR] [--set key=value ...] [--wait [SECONDS]]
    ccarena live cleanup [--wait [SECONDS]]
    ccarena live capacity [--measure] [--wait [SECONDS]]
    ccarena compare SCENARIO.toml [--out DIR] [--set key=value ...] [--wait [SECONDS]] [--sim-signals exact|bpf]

One live command holds the testbed at a time (hygiene.TestbedLock); the
others refuse at once, or with --wait wait for it.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..command_clock import CommandClock


def _scenario_args(parser: argparse.ArgumentParser, out_help: str) -> None:
    parser.add_argument("scenario", type=Path, help="scenario file (TOML), see docs/scenario-format.md")
    parser.add_argument("--out", type=Path, metavar="DIR", help=out_help)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a scenario value by dotted path, e.g. duration=15s")
    parser.add_argument("--bottleneck", choices=("auto", "kernel", "userspace"), default="auto",
                        help="kernel: TBF + bfifo; userspace: the simulator's queue in the delay line "
                             "(RED, random loss, rate schedules); auto (default): kernel when it can")


def _wait_seconds(text: str) -> float:
    from .hygiene import parse_wait

    try:
        return parse_wait(text)
    except ValueError as err:
        # A scenario path after a bare --wait lands here: say how to write it.
        raise argparse.ArgumentTypeError(f"{err} (a bare --wait must come last; or write --wait=SECONDS)") from None


def add_wait_argument(parser: argparse.ArgumentParser) -> None:
    """``--wait [SECONDS]``: wait for the testbed if another live command holds it."""
    parser.add_argument("--wait", nargs="?", const=math.inf, type=_wait_seconds, metavar="SECONDS",
                        help="if another live command holds the testbed, wait for it to finish: at most SECONDS, "
                             "or until it is free when no value is given (default: $CCARENA_LIVE_WAIT seconds, "
                             "else refuse at once); Ctrl-C stops waiting")


def add_parsers(sub) -> None:
    live = sub.add_parser("live", help="run scenarios on real Linux TCP in network namespaces (root)")
    live_sub = live.add_subparsers(dest="live_command", parser_class=type(live))
    run = live_sub.add_parser("run", help="run a scenario live and write a run directory (engine: live)")
    _scenario_args(run, "run directory to write (default: runs/<scenario name>-live)")
    from .choices import APPS, DELAYS, QDISCS, SENDERS, SOCKET_BUFFERS

    run.add_argument("--senders", choices=SENDERS, default=SENDERS[0],
                     help="shared (default): every flow from one sender namespace, an address each; separate: "
                          "each flow from a namespace of its own (its own stack and veth), as one host per sender")
    run.add_argument("--qdisc", choices=QDISCS, default=QDISCS[0],
                     help="the kernel bottleneck's shaper: tbf (default) queues wire packets; htb queues GSO send "
                          "units whole, as testbeds built with HTB do")
    run.add_argument("--socket-buffers", choices=SOCKET_BUFFERS, default=SOCKET_BUFFERS[0],
                     help="ccarena (default): TCP buffers up to 64 MB; default: the kernel's own limits, as an "
                          "untuned host has them")
    run.add_argument("--app", choices=APPS, default=APPS[0],
                     help="agent (default): ccarena's agents (TCP_INFO every tick); iperf3: an iperf3 client and "
                          "server per flow, goodput counted by the receiving iperf3 (bulk [[flow]]s, whole seconds, "
                          "output interval >= 0.1 s)")
    run.add_argument("--delays", choices=DELAYS, default=DELAYS[0],
                     help="delay-line (default): one delay line for every flow; per-sender: a delay line and TUN "
                          "device per sender (needs --senders separate and the kernel bottleneck)")
    add_wait_argument(run)
    cleanup = live_sub.add_parser("cleanup", help="remove leftovers of killed live runs: namespaces, devices, "
                                                  "processes, and the BPF congestion controls they registered")
    add_wait_argument(cleanup)
    cap = live_sub.add_parser("capacity", help="what this host carries through the live testbed (measured once, cached)")
    cap.add_argument("--measure", action="store_true", help="measure again (~7 s of live traffic) and cache the figure")
    add_wait_argument(cap)

    host = live_sub.add_parser("host", help="the simulator's host models; --measure: measure this host (root, ~5 min)")
    host.add_argument("--measure", action="store_true",
                      help="measure this host's timing on the testbed, idle and busy, and print the fitted models")
    host.add_argument("--runs", type=int, default=3, metavar="N", help="runs of each measurement (default 3)")
    host.add_argument("--out", type=Path, metavar="DIR",
                      help="with --measure: also write the models (linux.toml, linux-busy.toml) and the samples' "
                           "summaries into this run directory")

    cmp = sub.add_parser("compare", help="run a scenario on the simulator and live; print both tables and the differences")
    _scenario_args(cmp, "write DIR/sim and DIR/live (default: runs/<scenario name>-compare)")
    add_wait_argument(cmp)
    cmp.add_argument("--sim-signals", choices=("exact", "bpf"), default="exact",
                     help="the simulator's loss signals: exact (default, as Linux's own BBRv2/v3 read them) or bpf "
                          "(the estimates our BPF build makes, like the live run: estimate_tx_signals = 1)")


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _overrides(args: argparse.Namespace):
    from ..scenario import parse_override

    return [parse_override(item) for item in args.overrides]


def run_live_command(args: argparse.Namespace, clock: CommandClock) -> int:
    from ..errors import ScenarioError

    if args.live_command == "cleanup":
        return _cleanup(args.wait)
    if args.live_command == "capacity":
        return _capacity(args.measure, args.wait)
    if args.live_command == "host":
        return _host(args)
    if args.live_command != "run":
        raise ScenarioError("live", "expected `live run SCENARIO.toml`, `live cleanup`, `live capacity` or `live host`")
    from ..units import plural
    from .engine import load_live_scenario, run_live
    from .hostmodel import STALLING_LATE_PER_S, path_stalled

    scenario = load_live_scenario(args.scenario, _overrides(args), bottleneck=args.bottleneck)
    out = args.out if args.out is not None else Path("runs") / f"{scenario.name}-live"
    cfg = scenario.config
    for line in scenario.warnings():
        _log(f"ccarena: warning: {line}")
    from .testbed import Choices

    choices = Choices(senders=args.senders, qdisc=args.qdisc, socket_buffers=args.socket_buffers, app=args.app,
                      delays=args.delays)
    result = run_live(scenario, out=out, log=_log, bottleneck=args.bottleneck, wait=args.wait, choices=choices,
                      announce=(
        f"ccarena: live run of {args.scenario} ({plural(len(cfg['flows']), 'flow')}, "
        f"{cfg['duration_ns'] / 1e9:g} s of real traffic)"))
    print(result.table())
    print()
    dl = result.summary["live"]["delay_line"]
    print(f"bottleneck: {result.summary['live']['bottleneck']}")
    print(f"delay line: {dl['packets']} packets, lateness mean {dl['lateness_mean_us']:.0f} us, "
          f"p99 {dl['lateness_p99_us']:.0f} us, max {dl['lateness_max_us']:.0f} us; "
          f"{dl['late_over_1ms']} packets over 1 ms late")
    if path_stalled(dl["late_over_1ms"], cfg["duration_ns"] / 1e9):
        print(f"            over {STALLING_LATE_PER_S:g} a second: a testbed whose path stalls, as the "
              "simulator's host = \"linux-stalls\" (docs/host.md)")
    losses = result.summary["live"]["losses"]
    if losses["lost_segments"] is None:  # iperf3 counts no segments
        print(f"losses:     bottleneck drops {losses['bottleneck']}, elsewhere in the testbed "
              f"{losses['testbed_total']}; {losses['retransmitted_segments']} retransmitted (segments lost: not "
              "counted by iperf3)")
    else:
        print(f"losses:     {losses['lost_segments']} segments lost (bottleneck drops {losses['bottleneck']}, "
              f"elsewhere in the testbed {losses['testbed_total']}); {losses['retransmitted_segments']} "
              f"retransmitted, {losses['spurious_retransmits']} of them spurious")
    print(f"summary:    {out / 'summary.json'}")
    print(f"timeseries: {out / 'timeseries.parquet'}, {out / 'link.parquet'}")
    print(f"plot:       {out / 'goodput.png'}")
    _log(f"ccarena: done in {clock.seconds():.1f} s wall")
    return 0


def _cleanup(wait: float | None) -> int:
    import os

    from ..errors import ScenarioError
    from .ccs import cleanup_registrations
    from .hygiene import TestbedLock, cleanup_leftovers

    if os.geteuid() != 0:
        raise ScenarioError("live", "cleanup needs root")
    lock = TestbedLock()
    lock.acquire(wait, log=_log)  # refuses (or waits) while a live run is active
    try:
        removed = cleanup_leftovers() + cleanup_registrations()
    finally:
        lock.release()
    print(f"removed: {', '.join(removed)}" if removed else "nothing to clean up")
    return 0


def _host(args: argparse.Namespace) -> int:
    """Print the host models; with --measure, measure this host first."""
    import tomllib

    from .. import host
    from ..errors import ScenarioError
    from . import hostmodel

    if not args.measure:
        if args.out is not None:
            raise ScenarioError("--out", "only with --measure")
        for name in host.names():
            if name != host.IDEAL:
                text = (host.MODELS / f"{name}.toml").read_text(encoding="utf-8")
                print(hostmodel.describe(name, tomllib.loads(text)))
                print("  " + text.splitlines()[0].lstrip("# "))
        return 0
    if args.runs < 1:
        raise ScenarioError("--runs", f"must be >= 1, got {args.runs}")
    from ..rundir import atomic_dir, check_target
    from .engine import check_prerequisites

    check_prerequisites()
    if args.out is not None:
        check_target(args.out, "run")
    source = hostmodel.provenance()
    files = {}
    for name, busy in (("linux", False), ("linux-busy", True)):
        samples = hostmodel.measure(busy, args.runs, _log)
        model = hostmodel.fit(samples)
        print(hostmodel.describe(name, model))
        files[f"{name}.toml"] = hostmodel.to_toml(name, model, source, samples)
        files[f"{name}.samples.json"] = hostmodel.summary_json(samples)
        files[f"{name}.samples.npz"] = hostmodel.raw_samples(samples)
    if args.out is not None:
        with atomic_dir(args.out, "run") as tmp:
            for file, content in files.items():
                if isinstance(content, bytes):
                    (tmp / file).write_bytes(content)
                else:
                    (tmp / file).write_text(content, encoding="utf-8")
        print(f"models: {args.out}")
    return 0


def _capacity(measure: bool, wait: float | None) -> int:
    """Print the figure (measuring it if it is not cached, or if asked)."""
    from .capacity import HEADROOM, override
    from .engine import check_prerequisites, host_capacity
    from .hygiene import TestbedLock
    from .interrupts import deferred

    binary = check_prerequisites()
    record = None if measure else override()
    if record == "off":
        print("capacity check off (CCARENA_LIVE_CAPACITY=off)")
        return 0
    if record is None:
        with deferred():
            lock = TestbedLock()
            lock.acquire(wait, log=_log)
            try:
                record = host_capacity(binary, _log, remeasure=measure)
            finally:
                lock.release()
    assert isinstance(record, dict)
    when = f", measured {record['measured_at']}" if record.get("measured_at") else ""
    print(f"this host carries {record['goodput_mbps']:g} Mbit/s through the live testbed flat out "
          f"({record['source']}{when}); scenarios up to {record['goodput_mbps'] / HEADROOM:g} Mbit/s run without "
          "a warning")
    return 0


def run_compare_command(args: argparse.Namespace, clock: CommandClock) -> int:
    from ..units import plural
    from .compare import compare, load_both, table

    sim_scenario, _ = load_both(args.scenario, _overrides(args), args.bottleneck, args.sim_signals)  # bad input fails here
    out = args.out if args.out is not None else Path("runs") / f"{sim_scenario.name}-compare"
    cfg = sim_scenario.config
    for line in sim_scenario.warnings():
        _log(f"ccarena: warning: {line}")
    sim, live = compare(args.scenario, _overrides(args), out=out, bottleneck=args.bottleneck, wait=args.wait,
                        sim_signals=args.sim_signals, announce=(
        f"ccarena: comparing sim and live on {args.scenario} ({plural(len(cfg['flows']), 'flow')}, "
        f"{cfg['duration_ns'] / 1e9:g} s live)"))
    print(table(sim, live))
    print()
    print(f"runs: {out / 'sim'}, {out / 'live'}")
    _log(f"ccarena: done in {clock.seconds():.1f} s wall")
    return 0
