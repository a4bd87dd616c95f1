"""ccarena: measure, explain and fix unfairness between TCP congestion
controls on a shared bottleneck.

    >>> import ccarena
    >>> result = ccarena.run("examples/bbr-rtt-unfairness.toml", out="runs/demo")
    >>> [f["share"] for f in result.flows]

See README.md and docs/scenario-format.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["run", "load_scenario", "Result", "ResolvedScenario", "ScenarioError", "__version__"]

if TYPE_CHECKING:
    from .api import run
    from .errors import ScenarioError
    from .results import Result
    from .scenario import ResolvedScenario, load_scenario

#: Where each public name lives. Loaded on first use (PEP 562): every
#: submodule import runs this file first, and `ccarena --help` or a bad
#: scenario should not pay for the API's and the results' imports.
_HOMES = {"run": "api", "ScenarioError": "errors", "Result": "results", "ResolvedScenario": "scenario",
          "load_scenario": "scenario"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
