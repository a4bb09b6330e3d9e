"""The worker pool (pipeline/pool.py): answers in order, the caller takes over from workers that fail, workers die with their build.

The tasks are this module's functions: a worker imports this module by name, from the caller's sys.path.
"""

from __future__ import annotations

import json
import multiprocessing.process
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agenthropic_site.pipeline.pool import AHEAD, Task, map_in_order

REPO = Path(__file__).resolve().parent.parent


def keep(setup: float) -> float:
    return setup


def square_slowly(delay: float, item: int) -> tuple[int, int]:
    """Take longer for earlier items, so that later ones are answered first."""
    time.sleep(delay * (8 - item % 8))
    return item * item, os.getpid()


def die_on_five(setup: float, item: int) -> tuple[int, int]:
    if item == 5:
        os._exit(1)
    return square_slowly(setup, item)


def fail_on_three(setup: float, item: int) -> tuple[int, int]:
    if item == 3:
        raise ValueError("no three")
    return item * item, os.getpid()


def cannot_start(setup: float) -> float:
    raise ValueError(f"no setup {setup}")


def mark_slowly(folder: str, item: int) -> int:
    """Leave a file when an item starts, and another when it ends."""
    Path(folder, f"{item}.{os.getpid()}.start").touch()
    time.sleep(0.3)
    Path(folder, f"{item}.{os.getpid()}.end").touch()
    return item


SQUARES = Task(keep, square_slowly, ("agenthropic_site.pipeline.pool",))


def here(item: int) -> tuple[int, int]:
    return item * item, os.getpid()


def run(task: Task[float, int, tuple[int, int]], items: list[int], jobs: int = 2, chunk: int = 1) -> tuple[list[tuple[int, tuple[int, int]]], list[str]]:
    said: list[str] = []
    return list(map_in_order(task, 0.01, items, jobs, here, said.append, chunk)), said


@pytest.mark.parametrize("chunk", [1, 3])
def test_answers_come_in_the_items_order_under_uneven_work(chunk: int) -> None:
    items = list(range(24))
    answers, said = run(SQUARES, items, jobs=3, chunk=chunk)
    assert said == []
    assert [item for item, _ in answers] == items
    assert [square for _, (square, _) in answers] == [item * item for item in items]
    pids = {pid for _, (_, pid) in answers}
    assert os.getpid() not in pids and len(pids) >= 2


def test_a_worker_that_dies_leaves_its_items_to_the_caller() -> None:
    items = list(range(16))
    answers, said = run(Task(keep, die_on_five), items)
    assert [item for item, _ in answers] == items
    assert [square for _, (square, _) in answers] == [item * item for item in items]
    assert answers[5][1][1] == os.getpid()  # answered here
    assert len(said) == 1 and said[0].startswith("a worker process stopped early"), said


def die_at_start(setup: float) -> float:
    os._exit(1)


def test_a_worker_that_dies_while_the_pool_is_filled_is_said_to_have_stopped_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool started: a worker that dies before the last chunk is queued stopped early, as one that dies later did."""
    from concurrent.futures import ProcessPoolExecutor

    submit = ProcessPoolExecutor.submit
    submitted = []

    def submit_after_a_death(self: ProcessPoolExecutor, *args: object) -> object:
        # Real processes: only the order is forced, the one a loaded machine gave now and then
        # (the worker of a script without a main guard exits before its pool is filled).
        deadline = time.monotonic() + 60
        while submitted and not self._broken and time.monotonic() < deadline:  # type: ignore[attr-defined]
            time.sleep(0.01)
        submitted.append(args)
        return submit(self, *args)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", submit_after_a_death)
    answers, said = run(Task(die_at_start, square_slowly), list(range(6)), jobs=1)
    assert len(submitted) == AHEAD  # its one worker's chunks: the last found the pool broken
    assert answers == [(item, (item * item, os.getpid())) for item in range(6)]
    assert len(said) == 1 and said[0].startswith("a worker process stopped early"), said


def test_a_task_that_cannot_start_leaves_everything_to_the_caller() -> None:
    answers, said = run(Task(cannot_start, square_slowly), list(range(6)))
    assert answers == [(item, (item * item, os.getpid())) for item in range(6)]
    assert said == ["a worker process could not start: ValueError: no setup 0.01"]


def test_no_process_leaves_everything_to_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_process(self: object) -> None:
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", no_process)
    answers, said = run(SQUARES, list(range(6)))
    assert answers == [(item, (item * item, os.getpid())) for item in range(6)]
    assert said == ["cannot start a worker process: Resource temporarily unavailable"]


def test_an_error_in_a_task_is_raised_in_its_turn() -> None:
    seen = []
    with pytest.raises(ValueError, match="no three"):
        for item, _ in map_in_order(Task(keep, fail_on_three), 0.0, list(range(8)), 2, here, print):
            seen.append(item)
    assert seen == [0, 1, 2]


def test_this_process_answers_chunks_while_it_waits_and_keeps_their_order() -> None:
    """With help_here the caller answers the next chunks no worker was given while the next answer is not ready: in order, never far ahead."""
    made_here: list[int] = []

    def here_noting(item: int) -> tuple[int, int]:
        made_here.append(item)
        return here(item)

    items, ahead = list(range(24)), []
    answers = []
    for item, answer in map_in_order(SQUARES, 0.02, items, 1, here_noting, pytest.fail, 2, help_here=True):
        answers.append((item, answer))
        ahead.append(sum(1 for made in made_here if made > item))
    assert [item for item, _ in answers] == items and [square for _, (square, _) in answers] == [item * item for item in items]
    pids = {pid for _, (_, pid) in answers}
    assert os.getpid() in pids and len(pids) == 2  # this process and its one worker
    assert sorted(item for item, (_, pid) in answers if pid == os.getpid()) == made_here
    assert 0 < max(ahead) <= AHEAD * 2  # at most AHEAD chunks a worker, of 2 items, answered before their turn


def square_at_once(setup: float, item: int) -> tuple[int, int]:
    return item * item, os.getpid()


def test_a_workers_queue_is_refilled_before_the_caller_takes_its_answers(chunks_given: list[list[object]]) -> None:
    """The worker goes on while the caller writes what it answered: it is given the next chunk first."""
    seen = []
    for item, _ in map_in_order(Task(keep, square_at_once), 0.0, list(range(12)), 1, here, pytest.fail, 2):
        seen.append((item, len(chunks_given)))
    # When the caller takes chunk k (items 2k, 2k+1), chunks up to k + AHEAD have been given out.
    assert seen == [(item, min(item // 2 + AHEAD + 1, 6)) for item in range(12)]


def test_chunks_are_cut_by_weight_as_well_as_count(chunks_given: list[list[object]]) -> None:
    """A heavy item travels alone, so the answers waiting for their turn stay a few chunks' worth whatever the items weigh."""
    items = list(range(12))
    heavy = {2: 10, 7: 9}
    answers = list(map_in_order(Task(keep, square_at_once), 0.0, items, 1, here, pytest.fail, 4, weigh=lambda item: heavy.get(item, 1), chunk_weight=10))
    assert [(item, square) for item, (square, _) in answers] == [(item, item * item) for item in items]
    assert chunks_given == [[0, 1], [2], [3, 4, 5, 6], [7, 8], [9, 10, 11]]  # 7 and 8 weigh 10: the most a chunk takes


def square_late_first(delay: float, item: int) -> tuple[int, int]:
    if item == 0:
        time.sleep(delay)
    return item * item, os.getpid()


def test_this_process_helps_an_item_at_a_time_and_takes_a_workers_answer_between_them() -> None:
    """Helping a whole chunk, it kept a worker that had answered waiting for as long as the chunk took."""
    events: list[tuple[str, int]] = []

    def here_slowly(item: int) -> tuple[int, int]:
        events.append(("here", item))
        time.sleep(0.3)
        return here(item)

    items = list(range(16))
    # The worker answers its first chunk 0.3 s after it starts; this process answers an item of a
    # later chunk in 0.3 s, and up to two chunks (2.4 s) ahead: the worker's answers come meanwhile.
    for item, (square, _) in map_in_order(Task(keep, square_late_first), 0.3, items, 1, here_slowly, pytest.fail, 4, help_here=True):
        assert square == item * item
        events.append(("taken", item))
    assert [item for kind, item in events if kind == "taken"] == items
    places = {item: place for place, (kind, item) in enumerate(events) if kind == "here"}
    chunks = {item // 4 for item in places}
    assert chunks, events
    # A chunk answered here, item by item, has the worker's answers taken between two of its items.
    assert any(max(places[i] for i in places if i // 4 == c) - min(places[i] for i in places if i // 4 == c) >= 4 for c in chunks), events


def test_a_worker_that_dies_while_this_process_helps_leaves_each_item_answered_once_in_order() -> None:
    items = list(range(16))
    said: list[str] = []
    answers = list(map_in_order(Task(keep, die_on_five), 0.01, items, 1, here, said.append, help_here=True))
    assert [item for item, _ in answers] == items
    assert [square for _, (square, _) in answers] == [item * item for item in items]
    assert len(said) == 1 and said[0].startswith("a worker process stopped early"), said


def test_an_error_in_a_chunk_answered_here_ahead_is_raised_in_its_turn() -> None:
    seen = []

    def fail_here_on_three(item: int) -> tuple[int, int]:
        if item == 3:
            raise ValueError("no three here")
        return here(item)

    with pytest.raises(ValueError, match="no three here"):
        # The worker takes 0.16 s for item 0: items 2 and 3 are answered here meanwhile.
        for item, _ in map_in_order(SQUARES, 0.02, list(range(8)), 1, fail_here_on_three, pytest.fail, help_here=True):
            seen.append(item)
    assert seen == [0, 1, 2]


def test_nothing_is_left_to_do_with_no_items_or_no_jobs() -> None:
    assert run(SQUARES, []) == ([], [])
    answers, said = run(SQUARES, [1, 2], jobs=0)
    assert answers == [(1, (1, os.getpid())), (2, (4, os.getpid()))] and said == []


def _script(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "script" / "build.py"
    script.parent.mkdir()
    script.write_text(
        "import json, os, signal, sys\n"
        f"sys.path[:0] = [{str(REPO)!r}, {str(REPO / 'tests')!r}]\n"
        "from agenthropic_site.pipeline.pool import Task, map_in_order\n"
        "import test_pool\n"
        "if __name__ == '__main__':\n" + body
    )
    return script


@pytest.mark.slow
def test_workers_stop_as_soon_as_their_build_is_killed(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    script = _script(tmp_path, (
        "    answers = map_in_order(Task(test_pool.keep, test_pool.mark_slowly), sys.argv[1], list(range(40)), 2, print, print)\n"
        "    next(answers)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    ))
    with open(tmp_path / "stderr", "wb") as stderr:  # not a pipe: workers that outlived the build would hold it open
        killed = subprocess.run([sys.executable, str(script), str(marks)], stdout=subprocess.DEVNULL, stderr=stderr, timeout=60)
    assert killed.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()
    time.sleep(0.2)
    after_kill = sorted(os.listdir(marks))
    time.sleep(1.0)
    assert sorted(os.listdir(marks)) == after_kill  # no item went on, none started
    pids = {int(name.split(".")[1]) for name in after_kill}
    assert 1 <= len(pids) <= 2
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        assert state == "Z", f"worker {pid} outlived its build"


@pytest.mark.slow
def test_workers_import_the_package_from_the_callers_sys_path_not_the_working_folder(tmp_path: Path) -> None:
    decoy = tmp_path / "decoy" / "agenthropic_site"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise SystemExit('the decoy package was imported')\n")
    script = _script(tmp_path, (
        "    said = []\n"
        "    answers = list(map_in_order(test_pool.SQUARES, 0.0, list(range(8)), 2, test_pool.here, said.append))\n"
        "    print(json.dumps({'said': said, 'pids': sorted({pid for _, (_, pid) in answers}), 'me': os.getpid()}))\n"
    ))
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    done = subprocess.run([sys.executable, str(script)], cwd=decoy.parent, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["said"] == [] and report["me"] not in report["pids"], report


def collector_state(setup: float, item: int) -> tuple[bool, int, bool]:
    """Say whether the worker's collector runs, its young threshold, and whether what it inherited is exempt."""
    import gc

    return gc.isenabled(), gc.get_threshold()[0], gc.get_freeze_count() > 0


COLLECTOR = Task(keep, collector_state, ("agenthropic_site.pipeline.pool",))


def test_a_worker_exempts_what_it_inherited_from_its_server_from_its_collections() -> None:
    from agenthropic_site.heap import YOUNG_THRESHOLD

    answers = list(map_in_order(COLLECTOR, 0.0, [1, 2], 2, lambda item: (False, 0, False), lambda why: pytest.fail(why)))
    assert [answer for _, answer in answers] == [(True, YOUNG_THRESHOLD, True)] * 2
