"""Render batches of sessions in worker processes, each with its own read-only view of the cache.

A cold build spends about half its time rendering session pages, one core at a time. The parent
gathers the model, renders the site-wide pages and publishes; each worker is a new interpreter
(`python -m agenthropic_site.render.parallel`: no SQLite connection, lock or thread crosses a
fork, and no caller's `__main__` is imported again) that renders its share of the batches into
staged files and sends back, through its stdout, what the parent needs: input digests, the
staged files, counts and newly drawn graphs. A page's bytes do not depend on which process
rendered it, so a build with workers equals one without. A worker that dies is seen as the end
of its output, never waited for: the parent then renders everything itself.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from agenthropic_site.render.writer import SiteWriter

if TYPE_CHECKING:
    from agenthropic_site.gather import SiteModel
    from agenthropic_site.render.pages import Renderer


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs to build its own Renderer."""

    model: SiteModel
    cache_folder: Path
    out: Path
    theme: Path | None
    pricing: Path | None
    redact: bool
    parent: int = 0  # the build's process id: a worker whose build is gone stops


@dataclass
class BatchResult:
    """What rendering one batch in a worker produced, for the parent to merge."""

    digests: dict[str, str]
    writer: SiteWriter  # what it produced, wrote (staged) and kept
    rendered: int
    graphviz_missing: bool
    redactions: dict[str, list[Any]]
    svgs: dict[str, bytes] = field(default_factory=dict)


class WorkersFailed(Exception):
    """The worker processes could not start or stopped early; the caller renders in-process instead."""


def render_in_workers(parent: Renderer, setup: WorkerSetup, batches: list[list[str]], jobs: int) -> None:
    """Render `batches` in `jobs` worker processes and merge what they did into `parent`.

    Raises WorkersFailed (nothing merged, nothing left staged by a worker that answered) when a
    worker cannot start or stops early. An error a worker raised while rendering (a full disk)
    is raised here once every worker has finished, with every staged file merged into the
    parent's writer, so that its abort removes them.
    """
    shares = [batches[index::jobs] for index in range(jobs)]
    command = [sys.executable, "-m", "agenthropic_site.render.parallel"]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for _ in shares:
            workers.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    except OSError as exc:
        _stop(workers)
        raise WorkersFailed(f"cannot start a render worker: {exc}") from exc
    answers: list[list[tuple[str, Any]]] = [[] for _ in workers]
    errors: list[bytes] = [b"" for _ in workers]
    threads = [
        threading.Thread(target=_talk, args=(worker, setup, share, answers[index], errors, index), daemon=True)
        for index, (worker, share) in enumerate(zip(workers, shares))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for worker in workers:
        worker.wait()
    results = [value for answer in answers for kind, value in answer if kind == "batch"]
    raised = [value for answer in answers for kind, value in answer if kind == "error"]
    broken = [value for answer in answers for kind, value in answer if kind == "broken"]
    if broken or (not raised and len(results) != len(batches)):
        for result in results:
            result.writer.abort()
        said = [text.decode("utf-8", "replace").strip().splitlines()[-1] for text in errors if text.strip()]
        detail = said[0] if said else (f"{type(broken[0]).__name__}: {broken[0]}" if broken else "no message")
        raise WorkersFailed(f"a render worker stopped early ({detail})")
    for result in results:
        parent.merge(result)
    if raised:
        raise raised[0]


def _talk(worker: subprocess.Popen[bytes], setup: WorkerSetup, share: list[list[str]], answer: list[tuple[str, Any]],
          errors: list[bytes], index: int) -> None:
    """Send a worker its share, read its answers until it closes its output, and never leave it blocked."""
    assert worker.stdin is not None and worker.stdout is not None and worker.stderr is not None
    stderr = worker.stderr
    reader = threading.Thread(target=lambda: errors.__setitem__(index, stderr.read()), daemon=True)
    reader.start()
    try:
        pickle.dump((setup, share), worker.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        worker.stdin.close()
        while True:
            answer.append(pickle.load(worker.stdout))
    except EOFError:
        pass  # it closed its output: done, or stopped early (the caller counts the answers)
    except Exception as exc:  # noqa: BLE001 - an answer that cannot be read ends this worker's share
        answer.append(("broken", exc))
    finally:
        if worker.poll() is None and (not answer or answer[-1][0] == "broken"):
            worker.kill()  # it may be blocked writing an answer nobody reads any more
        worker.stdout.close()
    reader.join()


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        worker.kill()
        worker.wait()


def _start_worker(setup: WorkerSetup) -> Renderer:
    """Open the cache read-only and build this worker's Renderer."""
    from agenthropic_site.cache import Cache
    from agenthropic_site.cost import load_price_table
    from agenthropic_site.render.pages import Renderer
    from agenthropic_site.stored_views import load_view

    reader = Cache.reader(setup.cache_folder)
    prices = load_price_table(setup.pricing)
    return Renderer(
        setup.model, reader, SiteWriter(setup.out), setup.theme, lambda message: None,
        load_view=lambda sid: load_view(reader, sid, prices, store=False), redact=setup.redact, mask_model=False,
    )


def _render_batch(renderer: Renderer, batch: list[str]) -> BatchResult:
    """Render one batch of sessions in this worker; its staged files are removed if it fails."""
    from agenthropic_site.render.pages import RenderStats

    renderer.digests, renderer.stats, renderer.redactions = {}, RenderStats(), {}
    renderer.writer = writer = SiteWriter(renderer.writer.out)
    drawn: dict[str, bytes] = {}
    cache = renderer.cache
    renderer.svg_store = (lambda digest: drawn.get(digest) or cache.svg(digest), drawn.__setitem__)
    try:
        renderer.render_batch(batch)
    except BaseException:
        writer.abort()
        raise
    return BatchResult(renderer.digests, writer, renderer.stats.rendered, renderer.stats.graphviz_missing, renderer.redactions, drawn)


def _worker_main(source: IO[bytes], sink: IO[bytes]) -> int:
    """Read a setup and a share of batches, render them, and write one answer per batch (or an error)."""
    setup, share = pickle.load(source)
    renderer = _start_worker(setup)
    for batch in share:
        if setup.parent and os.getppid() != setup.parent:
            return 2  # the build was killed: stage nothing more into its output folder
        try:
            answer: tuple[str, Any] = ("batch", _render_batch(renderer, batch))
        except Exception as exc:  # noqa: BLE001 - the parent raises it once every worker is back
            try:
                pickle.dumps(exc)
                answer = ("error", exc)
            except Exception:  # noqa: BLE001 - an exception that cannot travel is sent as text
                answer = ("error", RuntimeError(f"{type(exc).__name__}: {exc}"))
        try:
            pickle.dump(answer, sink, protocol=pickle.HIGHEST_PROTOCOL)
            sink.flush()
        except BrokenPipeError:
            if answer[0] == "batch":
                answer[1].writer.abort()  # nobody will publish these: leave no staged file behind
            return 2
        if answer[0] == "error":
            return 1
    return 0


if __name__ == "__main__":
    # Run from the module's own name, so that what is pickled names agenthropic_site.render.parallel,
    # not __main__. Answers go through a copy of stdout; anything else printed goes to stderr.
    from agenthropic_site.render import parallel

    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.exit(parallel._worker_main(sys.stdin.buffer, answers))
