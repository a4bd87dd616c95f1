"""Import what writing a run directory needs while the engine runs.

Importing pyarrow's Parquet writer and matplotlib takes longer than
simulating a typical scenario (~0.5 s against ~0.3 s for the 120-s
headline on an idle 2-core machine). The engine releases the GIL while it
runs, so a thread does the imports on another core meanwhile and
``Result.save`` finds the modules loaded (or waits for the thread to
finish the one it is in). The command does this only once the scenario is
known good: a bad input still fails before anything heavy is imported.

While the engine runs beside the imports:
- it takes the GIL back at most every 50 ms to run Python's signal
  handlers (Ctrl-C; crates/py's PYTHON_POLL_INTERVAL), and would wait up
  to the interpreter's switch interval (5 ms) each time for the importing
  thread to let go; the interval is shortened, so that it does not wait;
- the cyclic garbage collector is off: the imports create some 100,000
  long-lived objects and nothing cyclic to free, and its passes over them
  cost ~20% of the import time. Once imported, they are moved out of its
  sight for good (``gc.freeze``): its full passes after the run would
  otherwise walk them all again (~40% of the time ``Result.save`` takes
  to draw goodput.png).
Both are put back when the engine returns.
"""

from __future__ import annotations

import gc
import importlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: What the command needs once the engine has run: ccarena.results first
#: (the summary), then what ``Result.save`` imports (tables.py, plots.py),
#: dependencies first.
MODULES = ("ccarena.results", "numpy", "pyarrow", "pyarrow.parquet", "matplotlib", "matplotlib.figure",
           "matplotlib.backends.backend_agg", "ccarena.plots", "concurrent.futures")

#: The switch interval while both run, s: the engine's signal check waits
#: at most this long for the GIL.
SWITCH_INTERVAL_S = 0.0002


@contextmanager
def alongside() -> Iterator[threading.Thread]:
    """Import :data:`MODULES` on a daemon thread (an interrupted command
    does not wait for it) while the block runs the engine."""
    interval, collecting = sys.getswitchinterval(), gc.isenabled()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    gc.disable()
    try:
        thread = threading.Thread(target=_import_all, name="ccarena-preload", daemon=True)
        thread.start()
        yield thread
    finally:
        sys.setswitchinterval(interval)
        if collecting:
            gc.enable()


def _import_all() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - save() imports it again and reports the error
            return
    # What the imports made lives as long as the process: out of the
    # collector's full passes (module docstring).
    gc.freeze()
