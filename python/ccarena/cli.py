"""The ``ccarena`` command.

    ccarena run SCENARIO.toml [--out DIR] [--set key=value ...] [--point N]
    ccarena sweep SWEEP.toml [--out DIR] [--jobs N] [--executor local|ray [--address ADDR]] [--save-runs]
    ccarena scorecard [--ccs A,B,...] [--seeds 1,2,...] [--out DIR] [--jobs N] [--executor local|ray [--address ADDR]]
    ccarena report DIR... [--out FILE.html]
    ccarena ccs [NAME]
    ccarena live run SCENARIO.toml [--out DIR] [--set key=value ...] [--wait [SECONDS]]  (root)
    ccarena live cleanup [--wait [SECONDS]]
    ccarena compare SCENARIO.toml [--out DIR] [--set key=value ...] [--wait [SECONDS]]
    ccarena reproduce NAME... | all [--out DIR] [--jobs N] [--quick] [--live [--wait [SECONDS]] [--live-results FILE] [--live-store RUNS]]
    ccarena reproduce --list

Any problem with the input is one line on stderr,
``ccarena: error: <field.path>: <problem>``, exit status 2, and no run
directory. Heavy imports (pyarrow, matplotlib) happen only once the
scenario is known to be good. Set CCARENA_DEBUG=1 for tracebacks.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .command_clock import CommandClock

if TYPE_CHECKING:
    from .scenario import ResolvedScenario

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # One line, like every other input error.
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ccarena", description="TCP congestion-control fairness simulator.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    run = sub.add_parser("run", help="simulate a scenario and write a run directory")
    run.add_argument("scenario", type=Path, help="scenario file (TOML), see docs/scenario-format.md")
    run.add_argument("--out", type=Path, metavar="DIR", help="run directory to write (default: runs/<scenario name>)")
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario value by dotted path, e.g. bottleneck.rate=50Mbit or flow.1.rtt=30ms",
    )

    run.add_argument("--point", type=int, metavar="N",
                     help="for a sweep file: run its point N alone (as listed in the sweep's sweep.json)")

    sweep = sub.add_parser("sweep", help="run a scenario over a grid of values and seeds into one Parquet table")
    sweep.add_argument("sweep", type=Path, help="sweep file: a scenario with a [sweep] table (docs/sweeps.md)")
    sweep.add_argument("--out", type=Path, metavar="DIR",
                       help="sweep directory; rerunning into it skips finished points (default: runs/<sweep name>)")
    sweep.add_argument("--jobs", type=int, metavar="N", help="local worker processes (default: the number of cores)")
    sweep.add_argument("--executor", default="local", metavar="local|ray",
                       help="where points run: local processes (default) or a Ray cluster (pip install 'ccarena[ray]')")
    sweep.add_argument("--address", metavar="ADDR",
                       help="with --executor ray: the cluster to join (auto, HOST:PORT, ray://HOST:10001); "
                            "default: start a local Ray instance")
    sweep.add_argument("--save-runs", action="store_true",
                       help="also write each point's run directory (telemetry, plot) under DIR/runs/")

    card = sub.add_parser("scorecard", help="every algorithm through a standard fairness battery: scores, ranks, one table")
    card.add_argument("--ccs", metavar="A,B,...", help="algorithms to score (default: every one `ccarena ccs` lists)")
    card.add_argument("--seeds", default="1,2,3,4,5", metavar="1,2,...", help="seeds of every scenario (default: 1,2,3,4,5)")
    card.add_argument("--out", type=Path, default=Path("runs/scorecard"), metavar="DIR",
                      help="scorecard directory; rerunning into it reuses finished points (default: runs/scorecard)")
    card.add_argument("--jobs", type=int, metavar="N", help="local worker processes (default: the number of cores)")
    card.add_argument("--executor", default="local", metavar="local|ray", help="where the runs go (as for sweep)")
    card.add_argument("--address", metavar="ADDR", help="with --executor ray: the cluster to join")

    rpt = sub.add_parser("report", help="one self-contained HTML page over run, sweep, scorecard and experiment directories")
    rpt.add_argument("dirs", nargs="+", type=Path, metavar="DIR",
                     help="run, sweep, scorecard or experiment directories (or a reproduce --out directory)")
    rpt.add_argument("--out", type=Path, default=Path("runs/report.html"), metavar="FILE",
                     help="the page to write (default: runs/report.html; an existing file is replaced only if ccarena wrote it)")

    ccs = sub.add_parser("ccs", help="the congestion controls compiled into the simulator, with their parameters")
    ccs.add_argument("name", nargs="?", metavar="NAME",
                     help="one algorithm: every parameter with its unit, default and limits")

    from .live.cli import add_parsers as _add_live_parsers

    _add_live_parsers(sub)  # live run, live cleanup, compare

    _add_kernel_parser(sub)

    rep = sub.add_parser("reproduce", help="reproduce a paper's figures: run experiments, write their reports")
    rep.add_argument("names", nargs="*", metavar="NAME", help="experiment(s) to run, or 'all' (see --list)")
    rep.add_argument("--list", action="store_true", help="list the experiments and the figures they reproduce")
    rep.add_argument("--out", type=Path, default=Path("runs/reproduce"), metavar="DIR",
                     help="write DIR/NAME/report.md, figures and results.json (default: runs/reproduce)")
    rep.add_argument("--jobs", type=int, metavar="N", help="simulations in parallel (default: the number of cores)")
    rep.add_argument("--quick", action="store_true", help="short runs and sweeps, one seed: a smoke test")
    rep.add_argument("--live", action="store_true",
                     help="also run every run again on the live engine (root), each seed a repetition, and record "
                          "what real Linux gives per claim in a dated results file that every report shows; each "
                          "live run is kept in DIR/live-runs as it finishes, so the same command again resumes")
    rep.add_argument("--live-results", type=Path, metavar="FILE",
                     help="with --live: the results file to add to (default: docs/linux/TODAY.json)")
    rep.add_argument("--live-store", type=Path, metavar="RUNS",
                     help="with --live: keep each live run in RUNS/NAME/ instead of DIR/live-runs/NAME/ (a pass "
                          "resumes from the runs kept there, e.g. a directory committed with the project)")
    rep.add_argument("--live-reps", type=int, metavar="N",
                     help="with --live: repetitions of each point, its first N seeds (default 3; at most the seeds "
                          "the experiment runs)")
    from .live.cli import add_wait_argument

    add_wait_argument(rep)  # with --live
    return parser


def _add_kernel_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``ccarena kernel load|unload|list`` (run by kernel/cli.py). Here, not
    there: importing kernel/cli.py imports the whole kernel package, which
    every other command's parser would pay for."""
    kernel = sub.add_parser("kernel", help="load ccarena's congestion controls into the running kernel (root)")
    ksub = kernel.add_subparsers(dest="kernel_command", parser_class=type(kernel))
    load = ksub.add_parser("load", help="build, verify and register one system-wide (as cc_NAME)")
    load.add_argument("name", help="e.g. bbq, bbr@ccarena, cubic@ccarena")
    load.add_argument(
        "--param",
        dest="params",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="non-default parameter, as a scenario's params write it (alpha=3ms, beta=1%%, first_cut=1); "
        "registers cc_NAME_<hash>",
    )
    unload = ksub.add_parser("unload", help="unregister one (sockets using it keep it until they close)")
    unload.add_argument("name", help="e.g. bbq, bbr@ccarena, or a kernel name such as cc_bbr_1a2b3c")
    ksub.add_parser("list", help="ccarena's algorithms, which are registered, and the kernel's")


def _printable_kernel_args(args: argparse.Namespace) -> None:
    """``kernel``'s NAME and ``--param`` as this front end gates every
    input: a control character (a newline, a NUL) is refused here, so
    that nothing the kernel commands echo spans two lines."""
    from .errors import ScenarioError, one_line

    given = [("NAME", args.name)] if getattr(args, "name", None) is not None else []
    given += [("--param", item) for item in getattr(args, "params", None) or []]
    for what, value in given:
        if one_line(value) != value:
            raise ScenarioError(f"kernel {what}", f"'{one_line(value)}' holds a control character")


def _error(message: str, status: int) -> int:
    from .errors import one_line

    print(f"ccarena: error: {one_line(message)}", file=sys.stderr)
    return status


def _warn(scenarios: Iterable["ResolvedScenario"]) -> None:
    """The scenarios' warnings (ResolvedScenario.warnings), each once."""
    from .errors import one_line

    for line in dict.fromkeys(w for scenario in scenarios for w in scenario.warnings()):
        print(f"ccarena: warning: {one_line(line)}", file=sys.stderr, flush=True)


def _cmd_run(args: argparse.Namespace, clock: CommandClock) -> int:
    from . import preload, progress
    from .api import simulate
    from .rundir import check_target
    from .scenario import load_scenario, parse_override
    from .units import plural

    overrides = [parse_override(item) for item in args.overrides]
    if args.point is not None:
        from .sweep import point_scenario

        scenario = point_scenario(args.scenario, args.point, overrides)
    else:
        scenario = load_scenario(args.scenario, overrides)
    out = args.out if args.out is not None else default_out(scenario.name)
    check_target(out)

    cfg = scenario.config
    simulated_s = cfg["duration_ns"] / 1e9
    print(
        f"ccarena: running {args.scenario} ({plural(len(cfg['flows']), 'flow')}"
        + (f", {plural(len(cfg['workloads']), 'workload')}" if cfg.get("workloads") else "")
        + f", {simulated_s:g} s simulated)",
        file=sys.stderr,
        flush=True,
    )
    _warn([scenario])
    started = time.perf_counter()
    with progress.seconds(simulated_s, "simulating") as bar, preload.alongside():
        # The scenario is good: Result.save's imports run beside the engine.
        raw = simulate(scenario, progress=progress.simulated_time_hook(bar))
    engine_s = time.perf_counter() - started
    from .results import Result  # imported beside the engine (preload)

    result = Result(scenario, raw)
    result.save(out)

    print(result.table())
    print()
    print(f"summary:    {out / 'summary.json'}")
    print(f"timeseries: {out / 'timeseries.parquet'}, {out / 'link.parquet'}")
    if cfg.get("workloads"):
        print(f"flows:      {out / 'flows.parquet'} (each workload flow)")
    print(f"plot:       {out / 'goodput.png'}")
    print(
        f"ccarena: done in {clock.seconds():.2f} s wall (simulator {engine_s:.2f} s, "
        f"{progress.speed(simulated_s, engine_s)})",
        file=sys.stderr,
    )
    return 0


def default_out(name: str) -> Path:
    """``runs/<scenario name>``, for a name that can be a directory's."""
    from .errors import ScenarioError

    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise ScenarioError("--out", f"the scenario's name {name!r} cannot name a run directory; give --out DIR")
    return Path("runs") / name


def _cmd_sweep(args: argparse.Namespace, clock: CommandClock) -> int:
    from .errors import ScenarioError
    from .sweep import load_sweep, run_sweep
    from .sweep.cache import open_sweep_dir
    from .sweep.executors import check_executor
    from .sweep.summary import summary_table
    from .units import plural

    if args.jobs is not None and args.jobs < 1:
        raise ScenarioError("--jobs", f"must be >= 1, got {args.jobs}")
    if args.address is not None and args.executor != "ray":
        raise ScenarioError("--address", "only with --executor ray")
    check_executor(args.executor)
    sweep = load_sweep(args.sweep)
    out = args.out if args.out is not None else default_out(sweep.name)
    open_sweep_dir(out)  # refuses a directory that is not a sweep's before anything runs
    axes = ", ".join(f"{k} ({len(v)})" for k, v in sweep.axes.items())
    print(f"ccarena: sweeping {args.sweep}: {plural(len(sweep.points), 'point')} over {axes}; "
          f"executor {args.executor}", file=sys.stderr, flush=True)
    _warn([p.scenario for p in sweep.points])
    done = run_sweep(sweep, out, executor=args.executor, jobs=args.jobs, address=args.address,
                     save_runs=args.save_runs, sweep_file=str(args.sweep))
    print(summary_table(sweep.points, done.summaries, axes=[a for a in sweep.axes if a != "seed"]))
    print()
    print(f"points: {done.points} ({done.cached} cached, {done.computed} computed)")
    print(f"table:  {done.table}")
    print(f"ccarena: done in {clock.seconds():.1f} s wall", file=sys.stderr)
    return 0


def _cmd_scorecard(args: argparse.Namespace, clock: CommandClock) -> int:
    from .errors import ScenarioError
    from .scorecard import run_scorecard
    from .scorecard.render import markdown

    if args.jobs is not None and args.jobs < 1:
        raise ScenarioError("--jobs", f"must be >= 1, got {args.jobs}")
    if args.address is not None and args.executor != "ray":
        raise ScenarioError("--address", "only with --executor ray")
    ccs = None if args.ccs is None else [c.strip() for c in args.ccs.split(",")]
    if ccs is not None and "" in ccs:
        raise ScenarioError("--ccs", f"expected comma-separated names, got {args.ccs!r} (an empty name)")
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        raise ScenarioError("--seeds", f"expected comma-separated integers, got {args.seeds!r}") from None
    done = run_scorecard(args.out, ccs=ccs, seeds=seeds, executor=args.executor, jobs=args.jobs, address=args.address)
    print(markdown(done.record))
    print(f"scorecard: {done.out / 'scorecard.md'} ({done.points} runs: {done.cached} cached, {done.computed} computed)")
    print(f"ccarena: done in {clock.seconds():.1f} s wall", file=sys.stderr)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .html import write

    out = write(args.dirs, args.out)
    print(f"report: {out}")
    return 0


def _cmd_ccs(args: argparse.Namespace) -> int:
    from . import cc_catalog

    print(cc_catalog.overview() if args.name is None else cc_catalog.details(args.name))
    return 0


def _cmd_reproduce(args: argparse.Namespace, clock: CommandClock) -> int:
    from .errors import ScenarioError
    from .experiments import registry

    if args.list:
        if args.names:
            raise _UsageError("reproduce: --list takes no experiment names")
        rows = [(exp.name, exp.figure, exp.summary) for exp in registry.EXPERIMENTS]
        widths = [max(len(r[c]) for r in rows) for c in range(2)]
        for name, figure, summary in rows:
            print(f"{name.ljust(widths[0])}  {figure.ljust(widths[1])}  {summary}")
        return 0
    if not args.names:
        raise _UsageError("reproduce: name an experiment, or all, or use --list")
    if args.jobs is not None and args.jobs < 1:
        raise ScenarioError("--jobs", f"must be >= 1, got {args.jobs}")
    everything = registry.ALL in args.names
    if everything and len(args.names) > 1:
        raise ScenarioError("reproduce", f"'{registry.ALL}' runs every experiment; give it alone")
    names = registry.names() if everything else list(dict.fromkeys(args.names))
    for name in names:
        registry.get(name)  # unknown names fail here, before anything runs

    from .experiments import report
    from .experiments.reproduce import INDEX, REPORT, check_outputs, reproduce

    check_outputs(names, args.out, index=everything)
    if args.wait is not None and not args.live:
        raise ScenarioError("--wait", "waits for the live testbed: only with --live")
    if args.live_results is not None and not args.live:
        raise ScenarioError("--live-results", "records live runs: only with --live")
    if args.live_store is not None and not args.live:
        raise ScenarioError("--live-store", "keeps live runs: only with --live")
    if args.live_reps is not None and not args.live:
        raise ScenarioError("--live-reps", "repeats live runs: only with --live")
    if args.live_reps is not None and args.live_reps < 1:
        raise ScenarioError("--live-reps", f"must be >= 1, got {args.live_reps}")
    if args.live:
        from .experiments import linux
        from .experiments.reproduce import check_live

        check_live(args.live_results or linux.default_path())
    print(f"ccarena: reproducing {', '.join(names)}{' (--quick)' if args.quick else ''}{' with live runs' if args.live else ''}",
          file=sys.stderr, flush=True)
    done = reproduce(names, args.out, quick=args.quick, jobs=args.jobs, index=everything, live=args.live,
                     live_wait=args.wait, live_results=args.live_results, live_store=args.live_store,
                     **({"live_reps": args.live_reps} if args.live_reps is not None else {}))
    for exp, result in done:
        print(f"{exp.name}: {exp.figure}")
        print(report.plain_table(result.rows))
        print(f"report: {args.out / exp.name / REPORT}")
        print()
    if everything:
        print(f"index: {args.out / INDEX}")
    print(f"ccarena: done in {clock.seconds():.1f} s wall", file=sys.stderr)
    return 0


def _end_process(status: int) -> None:
    """End the process of a finished command here, with ``status``, without
    the interpreter's teardown, which frees every object of matplotlib,
    pyarrow and numpy one at a time (~30 ms after a run, on an idle 2-core
    machine; a person waits for it). Nothing is lost: the ``atexit``
    handlers run and the standard streams are flushed first, as the
    interpreter would; and only with no thread left that the interpreter
    would wait for. Otherwise, or if a stream cannot be flushed (a closed
    pipe), it returns, and the interpreter ends the process as usual."""
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        return
    atexit._run_exitfuncs()  # and forgets them: a normal exit after a return here would not run them twice
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(status)


#: Printed after an engine crash: what to send us.
BUG_REPORT = "this is a bug in ccarena: please report it with the scenario and the command line"


def main(argv: list[str] | None = None) -> int:
    from . import signals
    from .errors import ScenarioError

    # "done in" counts the whole command; for argv=None, the command is this process.
    clock = CommandClock(whole_process=argv is None)
    # The interpreter's last garbage collections walk every object of
    # matplotlib and pyarrow (~0.2-0.5 s after a run); what a command wrote
    # is closed by then, so the objects left are frozen out of them. (Once
    # per process, however often main() runs in it.)
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    debug = bool(os.environ.get("CCARENA_DEBUG"))
    restore_signals = signals.trap()
    try:
        args = _parser().parse_args(argv)
        if args.version:
            from . import __version__

            print(f"ccarena {__version__}")
            return 0
        if args.command == "run":
            status = _cmd_run(args, clock)
            if argv is None:  # the command is this process
                _end_process(status)
            return status
        if args.command == "sweep":
            return _cmd_sweep(args, clock)
        if args.command == "scorecard":
            return _cmd_scorecard(args, clock)
        if args.command == "report":
            return _cmd_report(args)
        if args.command == "ccs":
            return _cmd_ccs(args)
        if args.command in ("live", "compare"):
            from .live import cli as _live_cli

            return (_live_cli.run_live_command if args.command == "live" else _live_cli.run_compare_command)(args, clock)
        if args.command == "kernel":
            from .kernel.cli import run as _cmd_kernel

            _printable_kernel_args(args)
            return _cmd_kernel(args)
        if args.command == "reproduce":
            return _cmd_reproduce(args, clock)
        _parser().print_help(sys.stderr)
        return EXIT_BAD_INPUT
    except _UsageError as err:
        return _error(f"{err} (see ccarena --help)", EXIT_BAD_INPUT)
    except ScenarioError as err:
        if debug:
            raise
        return _error(str(err), EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        return _error("interrupted", EXIT_INTERRUPTED)
    except signals.Terminated as stop:
        return _error(f"terminated by {stop.name}", int(stop.code or 1))
    except Exception as err:  # a bug or an I/O failure: still one line
        if debug:
            raise
        from ._core import EngineCrash

        if isinstance(err, EngineCrash):
            detail = " ".join(str(err).split())
            return _error(f"internal: the simulator crashed: {detail}; {BUG_REPORT}", EXIT_INTERNAL)
        detail = " ".join(str(err).split()) or type(err).__name__
        return _error(f"internal: {type(err).__name__}: {detail} (CCARENA_DEBUG=1 for a traceback)", EXIT_INTERNAL)
    finally:
        restore_signals()


if __name__ == "__main__":
    sys.exit(main())
