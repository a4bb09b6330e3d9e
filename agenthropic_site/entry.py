"""The console entry point: `agenthropic hook`, and a build with nothing to do, take short paths that import almost nothing."""

from __future__ import annotations

import atexit
import gc
import sys

from agenthropic_site import heap


def main() -> int:
    """Run `agenthropic`; a bare `hook` (Claude Code runs it per event) and a build the stamp answers skip the command-line parser."""
    if sys.argv[1:] == ["hook"]:
        from agenthropic_site.live.spool import run_hook

        return run_hook()
    # Python writes what stderr's encoding cannot hold as \uNNNN, but stdout raised
    # UnicodeEncodeError (exit 4) for a model id or path in a non-UTF-8 locale (ISO-8859-1, or
    # PYTHONIOENCODING=ascii): stdout escapes such characters the same way.
    if getattr(sys.stdout, "errors", None) == "strict":
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    if sys.argv[1:2] == ["build"]:
        # SIGTERM (a service manager stopping a watch, `kill`) ended the process where it stood;
        # it now stops a build as Ctrl-C does: staged files removed, a watch ending with exit 0.
        import signal

        from agenthropic_site.errors import terminate

        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:  # a parent's SIG_IGN is kept
            signal.signal(signal.SIGTERM, terminate)
        # Until the build's modules are imported, collecting garbage only walks objects that live
        # as long as the process (0.05-0.08 s of a 0.55-0.8 s one-append build of 500 sessions,
        # measured with gc.callbacks). pipeline/build.py resumes it once the renderer is imported;
        # a watch resumes it before its first build (heap.py).
        heap.pause_for_imports()
        # A build with nothing to do is answered from the stamp its last run left, before the
        # command line parser and the rest of the package load (pipeline/stamp.py).
        from agenthropic_site.commands.summary import answer_unchanged

        code = answer_unchanged(sys.argv[1:])
        if code is not None:
            return code
    from agenthropic_site.cli import main as cli_main

    # The process ends with the command: the garbage collection at exit need not walk every object
    # the command left (about 15 ms of a 0.54 s one-append build of 500 sessions, measured).
    atexit.register(gc.freeze)
    return cli_main()
