"""Progress of long work, the same way in every command: a tqdm bar on
stderr, drawn only when stderr is a terminal.

Two kinds of work:

- counted work (sweep points, scorecard runs, reproduce runs): a bar of
  items done, with what is being done (``what``: "sweep rtt-ratio",
  "scorecard rtt", "reproduce"), the latest item, rate and ETA. Not at a
  terminal (a log, a pipe, a test), ``log=True`` keeps a plain line every
  tenth of the way or every :data:`LOG_EVERY_S`, whichever comes first
  (``ccarena: [k/N] what: item  elapsed ..., ETA ...``), so that the log
  of a long job shows that it lives and how far it is; tests and scripts
  wait for these lines.
- continuous work (a run's simulated seconds, a live run's seconds of
  traffic): a bar of seconds at a terminal, nothing otherwise; shown only
  once the work has lasted ``delay_s`` (a short run draws nothing).

The bar goes to stderr because stdout carries the results: ``ccarena run
s.toml > table.txt`` writes a clean table and still shows the bar; a
redirected or piped stderr turns the bar off.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

#: Seconds between two plain progress lines at most (not at a terminal).
LOG_EVERY_S = 30.0
#: Continuous work shows a bar only once it has lasted this long: a run of
#: a second needs none.
CONTINUOUS_DELAY_S = 1.0
#: Seconds between two updates of a bar driven by the wall clock.
TICK_S = 0.5


def at_terminal(stream: TextIO | None = None) -> bool:
    """Whether a bar drawn on ``stream`` (default stderr) is seen by a person."""
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class Progress:
    """One job's progress: ``total`` items (or seconds), ``initial`` of them
    already done (cached). Use as a context manager, or call :meth:`close`."""

    def __init__(
        self,
        total: float,
        *,
        what: str,
        unit: str = "it",
        initial: float = 0,
        stream: TextIO | None = None,
        log: bool = False,
        delay_s: float = 0.0,
        bar_format: str | None = None,
        leave: bool = True,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.what = what
        self.done = initial
        self.computed = 0
        self.log = log
        self.started = time.monotonic()
        self.last_line = self.started
        self.bar = None
        if at_terminal(self.stream):
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=what, unit=unit, file=self.stream,
                            dynamic_ncols=True, smoothing=0.1, delay=delay_s, bar_format=bar_format, leave=leave)

    @property
    def shown(self) -> bool:
        """Whether anything is drawn or printed at all."""
        return self.bar is not None or self.log

    def advance(self, label: str = "", n: int = 1) -> None:
        """``n`` more items done, the latest called ``label``."""
        self.done += n
        self.computed += n
        if self.bar is not None:
            if label:
                self.bar.set_postfix_str(label, refresh=False)
            self.bar.update(n)
            return
        if not self.log:
            return
        now = time.monotonic()
        step = max(1, (int(self.total) + 9) // 10)
        if self.done >= self.total or self.done % step == 0 or now - self.last_line >= LOG_EVERY_S:
            self.last_line = now
            width = len(str(int(self.total)))
            item = f"{self.what}: {label}" if label else self.what
            print(f"ccarena: [{self.done:>{width}}/{self.total}] {item}  {self._eta(now)}", file=self.stream, flush=True)

    def skip(self, n: int) -> None:
        """``n`` items found done (cached): counted, but not in the rate."""
        self.done += n
        if self.bar is not None and n:
            # As tqdm's own `initial`: outside the rate and the ETA.
            self.bar.n += n
            self.bar.last_print_n += n
            self.bar.initial += n
            self.bar.refresh()

    def update_to(self, value: float) -> None:
        """Continuous work: ``value`` of ``total`` done (never goes back)."""
        value = min(value, self.total)
        if value <= self.done:
            return
        if self.bar is not None:
            self.bar.update(value - self.done)
        self.done = value

    def set_what(self, what: str) -> None:
        """What is being done now (e.g. the scorecard's family)."""
        self.what = what
        if self.bar is not None:
            self.bar.set_description_str(what, refresh=False)

    def set_note(self, note: str) -> None:
        """Text after the bar (e.g. the speed)."""
        if self.bar is not None:
            self.bar.set_postfix_str(note, refresh=False)

    def _eta(self, now: float) -> str:
        from tqdm import tqdm

        elapsed = now - self.started
        left = self.total - self.done
        if not self.computed or left <= 0:
            return f"elapsed {tqdm.format_interval(elapsed)}"
        return f"elapsed {tqdm.format_interval(elapsed)}, ETA {tqdm.format_interval(elapsed / self.computed * left)}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: A bar of seconds: "simulating: 40%|####    | 24.0/60 s [00:10<00:15, 2.4x real time]"
#: (tqdm puts ", " before a postfix).
_SECONDS_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:g} s [{elapsed}<{remaining}{postfix}]"


def seconds(total_s: float, what: str, stream: TextIO | None = None) -> Progress:
    """Continuous work of ``total_s`` seconds (simulated or real): a bar at
    a terminal once it has lasted :data:`CONTINUOUS_DELAY_S`, else nothing;
    the bar goes when the work ends (the command's next line says how it went)."""
    return Progress(total_s, what=what, unit="s", stream=stream, delay_s=CONTINUOUS_DELAY_S,
                    bar_format=_SECONDS_FORMAT, leave=False)


def simulated_time_hook(bar: Progress) -> Callable[[int], None] | None:
    """What the engine calls with its simulated time (ns) while it runs
    (``_core.simulate``'s ``progress``): moves ``bar`` and shows the speed;
    None when nothing is drawn, so that the engine does not call at all."""
    if bar.bar is None:
        return None
    started = time.monotonic()

    def at(now_ns: int) -> None:
        simulated_s = now_ns / 1e9
        bar.update_to(simulated_s)
        bar.set_note(speed(simulated_s, time.monotonic() - started))

    return at


def speed(simulated_s: float, wall_s: float) -> str:
    """Simulated time per wall time, readable at any speed: "120x real
    time", "2.5x real time", "0.31x real time" (never "0x")."""
    if wall_s <= 0 or simulated_s <= 0:
        return "speed n/a"
    ratio = simulated_s / wall_s
    if ratio >= 10:
        return f"{ratio:.0f}x real time"
    if ratio >= 1:
        return f"{ratio:.1f}x real time"
    return f"{ratio:.2g}x real time"


class WallClockTicker:
    """Moves a bar of seconds with the wall clock from ``start`` (a
    ``time.monotonic()`` value) while a blocking wait runs elsewhere: the
    live engine's seconds of traffic. A thread, as a context manager;
    ``clock`` is for tests."""

    def __init__(self, bar: Progress, start: float, *, tick_s: float = TICK_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bar, self.start, self.tick_s, self.clock = bar, start, tick_s, clock
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="ccarena-progress", daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.tick_s):
            self.bar.update_to(max(0.0, self.clock() - self.start))

    def __enter__(self) -> WallClockTicker:
        if self.bar.bar is not None:  # nothing to draw: no thread
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()
