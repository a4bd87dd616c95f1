"""A child process of the live engine whose stdout lines arrive on a queue
(so the engine can wait for ``ready`` with a deadline), and optionally
are kept with the instant each arrived (iperf3.py places iperf3's reports
on the run's clock by it)."""

from __future__ import annotations

import queue
import subprocess
import tempfile
import threading
import time

from ..errors import ScenarioError
from . import interrupts
from .hygiene import kill_group, spawn


#: How long a child may take to say it is ready (``ready`` on stdout).
READY_TIMEOUT_S = 15.0


class Child:
    def __init__(self, name: str, argv: list[str], stamped: bool = False) -> None:
        self.name = name
        #: With ``stamped``: every stdout line with its arrival (CLOCK_MONOTONIC ns).
        self.output: list[tuple[int, str]] | None = [] if stamped else None
        self.stderr = tempfile.TemporaryFile()
        self.proc = spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                          text=True, bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if self.output is not None:
                self.output.append((time.monotonic_ns(), line.rstrip("\n")))
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def error_text(self) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace").strip().splitlines()
        return text[-1] if text else f"exit status {self.proc.poll()}"

    def next_line(self, deadline: float) -> str:
        """The next stdout line, or a one-line error if the child exits or
        the deadline (time.monotonic()) passes first. Waits in short slices
        so that a deferred Ctrl-C stops it (interrupts.check)."""
        while True:
            interrupts.check()
            left = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(0.0, min(left, interrupts.POLL_S)))
                break
            except queue.Empty:
                if left <= interrupts.POLL_S:
                    raise ScenarioError("live", f"{self.name} did not answer in time") from None
        if line is None:
            self.proc.wait(timeout=5)
            raise ScenarioError("live", f"{self.name} failed: {self.error_text()}")
        return line

    def wait_output(self, deadline: float) -> list[tuple[int, str]]:
        """A stamped child's whole output, once it has closed its stdout
        (exited); a one-line error if the deadline (time.monotonic())
        passes first. Waits in short slices (interrupts.check)."""
        assert self.output is not None, "only a stamped child keeps its output"
        while self.pump.is_alive():
            interrupts.check()
            if time.monotonic() >= deadline:
                raise ScenarioError("live", f"{self.name} did not finish in time")
            self.pump.join(timeout=interrupts.POLL_S)
        return self.output

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(text + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise ScenarioError("live", f"{self.name} exited: {self.error_text()}") from None

    def kill(self, grace_s: float = 0.0) -> None:
        kill_group(self.proc, grace_s)
        # Close our ends of its pipes too, once the pump has read stdout to
        # the end (the child is gone, so that is at once): a pipe left to the
        # garbage collector is a ResourceWarning at some later, random point.
        self.pump.join(timeout=5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass  # stdin: a write-behind to a child that is gone
        self.stderr.close()
