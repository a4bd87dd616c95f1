"""The one error type a user sees: a field path and a problem."""

from __future__ import annotations

import re

#: Characters that would break a message's one line (or a terminal):
#: C0 and C1 controls, DEL and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` on one line: each control character a user's input brought
    in (a newline in a path, a NUL) shown as its escape (``\\n``, ``\\x00``)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


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
