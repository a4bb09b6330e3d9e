"""Worker processes for the parts of a build that use more than one core: parsing and rendering.

A standard ProcessPoolExecutor whose workers are forked from a forkserver (spawned where there is
none), which has imported the tasks' modules once. This module knows no task: the caller passes
its functions in (`Task`), and `map_in_order` keeps these guarantees:

- Answers come back in the items' order, whichever process gave them, so what the caller does
  with them (cache writes, merges) happens in the same order as in one process: a build with
  workers equals one without, byte for byte.
- No SQLite connection, lock or thread crosses a fork: the forkserver is a new interpreter that
  only imports modules; each worker's `start` opens what it needs.
- Workers import the package from this process's sys.path, never from a working folder.
- A worker that cannot start, whose `start` fails or that dies leaves the rest to the caller:
  `do_here` answers the remaining items, in order, and `notice` says why, once.
- A worker whose build is gone exits at once: nothing it could stage would be published, and
  the build's staging folder, which nobody holds then, is cleared by the next build.

As with any multiprocessing start method but fork, a script that builds must guard its work with
`if __name__ == "__main__"`: a worker imports the caller's main script (the `agenthropic` entry
points are guarded). A build started by that import is refused (`in_a_workers_import_of_main`):
it would wait for the cache its own parent holds, and the parent for it.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agenthropic_site import heap
from agenthropic_site.batches import batched
from agenthropic_site.records import record_class

if TYPE_CHECKING:
    # Imported for real only when workers start: a build that parses and renders here (most
    # incremental builds) never loads multiprocessing.
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.context import BaseContext
    from types import FrameType

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the item type
A = TypeVar("A")

AHEAD = 2  # chunks queued per worker: enough to keep it busy, few enough that answers never pile up in memory
EXIT_ORPHANED = 2  # a worker's exit status when its build is gone


@record_class(frozen=True)
class Task(Generic[S, I, A]):
    """What workers do: `start(setup)` once per worker, then `run(state, item)` per item.

    Both are module-level functions (they travel by name), and `preload` names the modules
    the forkserver imports once for every worker.
    """

    start: Callable[[Any], S]
    run: Callable[[S, I], A]
    preload: tuple[str, ...] = ()


@record_class(frozen=True)
class _Unable:
    """A worker's answer when its task could not start there."""

    why: str


_lock = threading.Lock()
_worker: tuple[Task[Any, Any, Any], Any] | None = None  # in a worker: its task and the state `start` returned
_unable: str | None = None  # in a worker: why its task could not start


def map_in_order(
    task: Task[S, I, A], setup: Any, items: Sequence[I], jobs: int, do_here: Callable[[I], A], notice: Callable[[str], None], chunk: int = 1,
    help_here: bool = False, weigh: Callable[[I], int] | None = None, chunk_weight: int = 0,
) -> Generator[tuple[I, A], None, None]:
    """Yield (item, answer) for every item in order, answered by up to `jobs` worker processes.

    Items travel `chunk` at a time, and with `weigh`, never more than `chunk_weight` of them in a
    chunk (a heavier item alone), so the answers waiting for their turn stay a few chunks' worth.
    When the workers cannot go on, `notice(why)` is called once and `do_here(item)` answers the
    rest here. An exception `run` raised in a worker is raised here, in its item's turn, once the
    workers have stopped. `help_here`: while the next answer is not ready, this process answers the
    next chunk no worker was given (`do_here`), an item at a time, so it is not idle while its
    consumer waits, and takes each answer of a worker (refilling its queue) as soon as it has
    answered the item it was on; at most `jobs * AHEAD` chunks answered or begun here wait for their turn.
    Close the iterator when not consuming it to the end (`contextlib.closing`): that stops the workers.
    """
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunks = batched(items, chunk, weigh, chunk_weight)
    count = min(jobs, len(chunks))
    done = 0  # chunks answered so far
    given = 0  # chunks given to a worker or answered here so far: those before it, in order
    here: dict[int, list[A] | Exception] = {}  # answers made here before their turn, by chunk (a chunk begun may have fewer)
    helping: int | None = None  # the chunk this process is answering, an item at a time, before its turn
    why: str | None = None
    if count >= 1:
        executor: ProcessPoolExecutor | None = None
        queued: deque[Future[Any]] = deque()

        def fill() -> None:
            nonlocal given
            assert executor is not None
            while given < len(chunks) and len(queued) < count * AHEAD:
                queued.append(executor.submit(_run_chunk, chunks[given]))
                given += 1

        try:
            try:
                executor = ProcessPoolExecutor(count, mp_context=_context(task.preload), initializer=_start_worker, initargs=(task, setup, __file__))
                fill()
            except BrokenProcessPool as exc:
                # A worker started and died before the pool was filled (an unguarded script's worker
                # exits that fast): it stopped early, as when its death shows at an answer.
                why = f"a worker process stopped early ({exc})"
            except Exception as exc:  # noqa: BLE001 - no process, no forkserver: all is done here
                why = f"cannot start a worker process: {exc}"
            while why is None and done < given:
                if done in here:
                    helping = None if helping == done else helping
                    yield from _in_turn(chunks[done], here.pop(done), do_here)
                    done += 1
                    continue
                if help_here and not queued[0].done():
                    # An item, not a chunk, at a time: a worker that has answered what it was given waits
                    # for this process to take the answer at most an item's time, not a whole chunk's.
                    if helping is None and given < len(chunks) and len(here) < count * AHEAD:
                        helping, here[given] = given, []
                        given += 1
                    if helping is not None:
                        if _answer_one(chunks[helping], here, helping, do_here):
                            helping = None
                        continue
                try:
                    answers = queued[0].result()
                except BrokenProcessPool as exc:
                    why = f"a worker process stopped early ({exc})"
                    break
                if isinstance(answers, _Unable):
                    why = answers.why
                    break
                queued.popleft()
                try:
                    # Before the caller takes these answers: the worker goes on while it does (with the
                    # queue refilled after them, a worker on 2 cores was idle two fifths of a cold build's parsing).
                    fill()
                except BrokenProcessPool as exc:
                    # A worker died while this one was being answered: the pool ran, so it stopped early
                    # (the same as when the death shows at the next answer; which comes first is a race).
                    why = f"a worker process stopped early ({exc})"
                except Exception as exc:  # noqa: BLE001 - a process that cannot start now
                    why = f"cannot start a worker process: {exc}"
                yield from zip(chunks[done], answers)
                done += 1
        finally:
            if executor is not None:
                # Running chunks finish (their files go with the build's staging folder); queued ones never start.
                executor.shutdown(wait=True, cancel_futures=True)
        if why is not None:
            notice(why)
    for number in range(done, len(chunks)):
        yield from _in_turn(chunks[number], here.pop(number, []), do_here)


def _answer_one(chunk: list[I], here: dict[int, list[A] | Exception], number: int, do_here: Callable[[I], A]) -> bool:
    """Answer the next item of chunk `number` here, ahead of its turn; return whether the chunk is answered (an exception ends it, to be raised in its turn)."""
    answers = here[number]
    assert isinstance(answers, list)
    try:
        answers.append(do_here(chunk[len(answers)]))
    except Exception as exc:  # noqa: BLE001 - raised by _in_turn, in its turn
        here[number] = exc
        return True
    return len(answers) == len(chunk)


def _in_turn(chunk: list[I], answers: list[A] | Exception, do_here: Callable[[I], A]) -> Iterator[tuple[I, A]]:
    """Yield a chunk in its turn: the answers made here ahead of it, then the rest answered now; or raise what answering it raised."""
    if isinstance(answers, Exception):
        raise answers
    yield from zip(chunk, answers)
    for item in chunk[len(answers):]:
        yield item, do_here(item)


def in_a_workers_import_of_main() -> bool:
    """Tell whether this call comes from the top level of a caller's main script, run again as a worker process starts."""
    # A spawned or forkserver child runs the parent's main script as `__mp_main__` before its
    # first task (multiprocessing.spawn.prepare); in the parent that name is only an alias of `__main__`.
    script = sys.modules.get("__mp_main__")
    if script is None or getattr(script, "__name__", None) != "__mp_main__":
        return False
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(script):
            return True
        frame = frame.f_back
    return False


def _context(preload: tuple[str, ...]) -> BaseContext:
    """Return a forkserver context whose server has imported `preload` (a spawn context where there is no forkserver)."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    with _lock, _this_sys_path():
        # The preload counts only when the server starts: once per build process (or after it died).
        context.set_forkserver_preload(list(preload))
        from multiprocessing import forkserver

        forkserver.ensure_running()
    return context


@contextmanager
def _this_sys_path() -> Iterator[None]:
    """Make a process started meanwhile import from this process's sys.path, never from its working folder."""
    # The forkserver runs `python -c`, which puts the working folder first (another agenthropic_site
    # there would be preloaded), and Python 3.11's forkserver ignores the sys.path it is given. With
    # PYTHONSAFEPATH it puts nothing first, and PYTHONPATH puts this process's sys.path before its own.
    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "PYTHONSAFEPATH")}
    entries = [os.path.abspath(str(entry)) for entry in sys.path]
    os.environ["PYTHONPATH"] = os.pathsep.join(entry for entry in entries if os.pathsep not in entry)
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _start_worker(task: Task[Any, Any, Any], setup: Any, parent_file: str) -> None:
    """Start a worker: follow its build's life, check it runs the build's own code, start the task."""
    global _worker, _unable
    import multiprocessing

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's: it stops its workers itself
    heap.settle_inherited()  # the modules its server preloaded live as long as the worker
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()
    if __file__ != parent_file:  # a forkserver that preloaded another copy of the package (started by someone else, or with -I)
        _unable = f"a worker process runs {__file__}, not {parent_file}"
        return
    try:
        _worker = (task, task.start(setup))
    except Exception as exc:  # noqa: BLE001 - said once by the build, which does the work itself
        _unable = f"a worker process could not start: {type(exc).__name__}: {exc}"


def _exit_with(sentinel: int) -> None:
    """Exit this worker as soon as its build is gone, even in the middle of an item."""
    from multiprocessing import connection

    connection.wait([sentinel])
    os._exit(EXIT_ORPHANED)


def _run_chunk(chunk: list[Any]) -> list[Any] | _Unable:
    """Answer one chunk of items (in a worker)."""
    if _worker is None:
        return _Unable(_unable or "a worker process has no task")
    task, state = _worker
    try:
        return [task.run(state, item) for item in chunk]
    except Exception as exc:
        try:
            pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - an exception that cannot travel goes as text
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from None
        raise
