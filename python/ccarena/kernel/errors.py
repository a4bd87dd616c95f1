"""The error a kernel operation raises: one line, plus optional detail."""

from __future__ import annotations


class KernelError(RuntimeError):
    """A refused or failed kernel operation (exit status 2 in the CLI).

    ``str(err)`` is the one line the CLI prints after ``ccarena: error:``;
    ``details`` are a few extra lines worth showing under it (the relevant
    end of a verifier log, a compiler error), possibly empty.
    """

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = list(details or [])
