"""Progress of a long sweep on stderr: a tqdm bar with rate and ETA at a
terminal; in a log (not a terminal) a plain line every tenth of the way
or every 30 s, whichever comes first, with the same ETA."""

from __future__ import annotations

import sys
import time
from typing import TextIO

#: Seconds between plain progress lines at most.
LOG_EVERY_S = 30.0


class Progress:
    def __init__(self, total: int, cached: int, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = cached
        self.computed = 0
        self.started = time.monotonic()
        self.last_line = self.started
        self.bar = None
        if self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=cached, file=self.stream, unit="pt", dynamic_ncols=True, smoothing=0.1)

    def advance(self, label: str) -> None:
        self.done += 1
        self.computed += 1
        if self.bar is not None:
            self.bar.set_postfix_str(label, refresh=False)
            self.bar.update(1)
            return
        now = time.monotonic()
        step = max(1, (self.total + 9) // 10)
        if self.done == self.total or self.done % step == 0 or now - self.last_line >= LOG_EVERY_S:
            self.last_line = now
            print(f"ccarena: [{self.done}/{self.total}] {label}  {self._eta(now)}", file=self.stream, flush=True)

    def _eta(self, now: float) -> str:
        from tqdm import tqdm

        elapsed = now - self.started
        left = self.total - self.done
        if not self.computed or not left:
            return f"elapsed {tqdm.format_interval(elapsed)}"
        return f"elapsed {tqdm.format_interval(elapsed)}, ETA {tqdm.format_interval(elapsed / self.computed * left)}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
