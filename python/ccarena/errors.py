"""The one error type a user sees: a field path and a problem."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A bad scenario (or override, or output path).

    ``str(err)`` is ``"<path>: <problem>"``, the line the CLI prints after
    ``ccarena: error:``.
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem

    def __reduce__(self):
        # Rebuild from both fields, so the error survives pickling (e.g.
        # coming back from a worker process of an experiment).
        return (type(self), (self.path, self.problem))
