"""ccarena: measure, explain and fix unfairness between TCP congestion
controls on a shared bottleneck.

    >>> import ccarena
    >>> result = ccarena.run("examples/bbr-rtt-unfairness.toml", out="runs/demo")
    >>> [f["share"] for f in result.flows]

See README.md and docs/scenario-format.md.
"""

from .api import run
from .errors import ScenarioError
from .results import Result
from .scenario import ResolvedScenario, load_scenario

__version__ = "0.1.0"

__all__ = ["run", "load_scenario", "Result", "ResolvedScenario", "ScenarioError", "__version__"]
