"""Run `agenthropic ARGUMENT...` with each watch pass marked in the watcher's log (for test_watch_stream.py).

The watcher logs nothing for a pass that changes nothing, so a test cannot see from outside when
such a pass ran. Here every pass (watch.run_pass, whatever its arguments) prints START on stderr
before it builds and END once it has logged all it had to say; the watcher logs to the same stderr
line by line, so the marks and the pass's `updated:` lines are in the order they happened.
Nothing else changes.
"""

from __future__ import annotations

import sys
from typing import Any

from agenthropic_site.cli import main
from agenthropic_site.pipeline import watch

START = "probe: pass started"
END = "probe: pass ended"


def passes_since(log: str) -> int:
    """Count the passes that started and ended in this part of a log (a pass ending in it first started before it)."""
    marks = [line for line in log.splitlines() if line in (START, END)]
    if marks and marks[0] == END:
        marks = marks[1:]
    return sum(1 for mark, after in zip(marks, marks[1:]) if (mark, after) == (START, END))


def _probe_passes() -> None:
    run_pass = watch.run_pass  # watch_loop looks it up in its module at each pass

    def probed(*args: Any, **kwargs: Any) -> Any:
        print(START, file=sys.stderr, flush=True)
        outcome = run_pass(*args, **kwargs)
        print(END, file=sys.stderr, flush=True)
        return outcome

    watch.run_pass = probed


if __name__ == "__main__":
    _probe_passes()
    sys.exit(main(sys.argv[1:]))
