"""How the example pipeline's stage programs (generator, consumer) run: until their work
ends or SIGTERM asks them to stop, then one last line `<word> <count>`, which the demo
reads as the stage's count."""
from __future__ import annotations

import signal
from typing import Callable


def run_stage(work: Callable[[Callable[[], bool]], int], word: str) -> int:
    """Runs `work(stop)`, where `stop()` turns true once SIGTERM arrives, and prints
    `word N` with the count it returns; exit status 0, or 130 after Ctrl-C."""
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    try:
        count = work(lambda: bool(stopping))
    except KeyboardInterrupt:
        return 130
    print(f"{word} {count}", flush=True)
    return 0
