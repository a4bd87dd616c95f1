"""The live engine: scenarios on real Linux TCP in network namespaces
(``ccarena live run``), leftovers cleanup (``ccarena live cleanup``) and
sim-vs-live comparison (``ccarena compare``). See docs/live.md."""

from .engine import load_live_scenario, run_live
from .hygiene import cleanup_leftovers

__all__ = ["load_live_scenario", "run_live", "cleanup_leftovers"]
