"""Worker processes for the parts of a build that use more than one core: parsing and rendering.

Each worker is a new interpreter running `workers.main` with the parent's sys.path: no SQLite
connection, lock or thread crosses a fork, and no caller's `__main__` is imported again. It reads a task
name, the task's setup and its share of the items on stdin, and writes one pickled answer per
item, in order, on a copy of its stdout. Items are dealt round-robin (item i to worker i mod n),
so the parent reads the answers in the items' order, which keeps what it does with them (cache
writes, merges) in the same order as in one process: a build with workers equals one without.
A worker that cannot start or stops early is seen as the end of its answers, never waited for;
the caller does the rest of that worker's items itself. A worker whose build is gone stops.
"""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any
from collections.abc import Callable

# task name -> module with `start(setup) -> state`, `run(state, item) -> answer`, `cancel(answer)`
TASKS = {"parse": "agenthropic_site.pipeline.parsing", "render": "agenthropic_site.render.parallel"}


class WorkersFailed(Exception):
    """No worker process could be started."""


class Workers:
    """Worker processes doing one task over items; answers are read in the items' order."""

    def __init__(self, task: str, setup: Any, items: list[Any], jobs: int) -> None:
        self.items = items
        self.count = max(1, min(jobs, len(items)))
        self.processes: list[subprocess.Popen[bytes]] = []
        self.stderr: list[bytes] = [b""] * self.count
        self.ended = [False] * self.count
        self._drains: list[threading.Thread] = []
        # The worker imports this package from the parent's own sys.path, never from its working
        # folder (`-m` would put that first, and another agenthropic_site there would win).
        command = [sys.executable, "-c", f"import sys; sys.path[:] = {sys.path!r}; from agenthropic_site.pipeline.pool import main; main()"]
        try:
            for index in range(self.count):
                process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                self.processes.append(process)
                drain = threading.Thread(target=self._drain, args=(index,), daemon=True)
                drain.start()
                self._drains.append(drain)
        except OSError as exc:
            self.close()
            raise WorkersFailed(f"cannot start a worker process: {exc}") from exc
        for index, process in enumerate(self.processes):
            assert process.stdin is not None
            try:
                pickle.dump((task, setup, items[index :: self.count], os.getpid()), process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                process.stdin.close()
            except OSError:
                self._end(index)  # it stopped before reading: its items are done by the caller

    def _drain(self, index: int) -> None:
        stream = self.processes[index].stderr
        assert stream is not None
        self.stderr[index] = stream.read()

    def _end(self, index: int) -> None:
        self.ended[index] = True
        process = self.processes[index]
        if process.poll() is None:
            process.kill()  # it may be blocked writing an answer nobody will read

    def answers(self, do_here: Callable[[Any], Any]) -> Iterator[tuple[Any, Any]]:
        """Yield (item, answer) in the items' order; `do_here(item)` answers for a worker that stopped."""
        for position, item in enumerate(self.items):
            index = position % self.count
            answer = None
            if not self.ended[index]:
                stdout = self.processes[index].stdout
                assert stdout is not None
                try:
                    answer = ("ok", pickle.load(stdout))
                except Exception:  # noqa: BLE001 - end of output, or an answer that cannot be read
                    self._end(index)
            yield item, (answer[1] if answer is not None else do_here(item))

    def stopped_early(self) -> str | None:
        """Return why a worker stopped before answering all its items (its last stderr line), or None."""
        for index, ended in enumerate(self.ended):
            if ended:
                self.processes[index].wait()
                self._drains[index].join()
                lines = self.stderr[index].decode("utf-8", "replace").strip().splitlines()
                return lines[-1] if lines else f"exit code {self.processes[index].returncode}"
        return None

    def close(self) -> None:
        """Stop every worker still running and wait for it."""
        for index, process in enumerate(self.processes):
            if process.poll() is None:
                process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
            self._drains[index].join()


def _serve(source: IO[bytes], sink: IO[bytes]) -> int:
    """Run in a worker: answer each item of the share read from `source`, in order, on `sink`."""
    task, setup, share, parent = pickle.load(source)
    handler = importlib.import_module(TASKS[task])
    state = handler.start(setup)
    for item in share:
        if os.getppid() != parent:
            return 2  # the build was killed: do no more of its work
        answer = handler.run(state, item)
        try:
            pickle.dump(answer, sink, protocol=pickle.HIGHEST_PROTOCOL)
            sink.flush()
        except BrokenPipeError:
            handler.cancel(answer)  # nobody will take it: undo what it left behind
            return 2
    return 0


def main() -> None:
    """Be a worker process: answers go through a copy of stdout, anything else printed to stderr."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.exit(_serve(sys.stdin.buffer, answers))
