"""The live engine: scenarios on real Linux TCP in network namespaces
(``ccarena live run``), leftovers cleanup (``ccarena live cleanup``) and
sim-vs-live comparison (``ccarena compare``). See docs/live.md."""

from __future__ import annotations

from typing import Any

__all__ = ["load_live_scenario", "run_live", "cleanup_leftovers"]

#: Where each public name lives. Loaded on first use (PEP 562): every
#: command's parser imports live.cli, and `ccarena run` should not pay for
#: the engine's imports.
_HOMES = {"load_live_scenario": "engine", "run_live": "engine", "cleanup_leftovers": "hygiene"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_HOMES[name]}", __name__), name)
