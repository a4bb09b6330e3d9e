"""Send the package's log to the terminal: one line a message on stderr, control characters shown."""

from __future__ import annotations

import logging

from agenthropic_site.terminal import printable, say

ROOT_LOGGER = "agenthropic_site"
QUIET, NORMAL, VERBOSE = -1, 0, 1
# -q: only what went wrong; default: progress, as a build goes; -v: every decision explained
# (why a session is read again, why a page is rendered, what is skipped and why).
LEVELS = {QUIET: logging.WARNING, NORMAL: logging.INFO, VERBOSE: logging.DEBUG}
_singled_out: set[str] = set()


class _Console(logging.Handler):
    """Print each record's message to the current stderr (tests and --watch swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            # Messages name corpus paths and model ids: untrusted text bound for a terminal.
            say(printable(record.getMessage()))
        except Exception:  # noqa: BLE001 - logging must never break a build
            self.handleError(record)


def progress_step(total: int, least: int) -> int:
    """Return how many items each progress line of a stage stands for: a tenth of `total`, at least `least`."""
    return max(least, -(-total // 10))


def verbosity(quiet: bool, verbose: bool) -> int:
    """Return the verbosity that -q and -v ask for (-q wins)."""
    return QUIET if quiet else VERBOSE if verbose else NORMAL


def configure(level: int, only: str | None = None) -> None:
    """Log the package at this verbosity to stderr; with `only`, other loggers keep only warnings unless -v is given."""
    level = max(QUIET, min(VERBOSE, level))
    logger = logging.getLogger(ROOT_LOGGER)
    for handler in [h for h in logger.handlers if isinstance(h, _Console)]:
        logger.removeHandler(handler)  # configured again by the next command run in this process
    logger.addHandler(_Console())
    logger.propagate = False  # printed once, whatever the embedding program's root logger does
    for name in _singled_out:
        logging.getLogger(name).setLevel(logging.NOTSET)  # a watch run earlier in this process set it
    _singled_out.clear()
    if only is None or level >= VERBOSE:
        logger.setLevel(LEVELS[level])
        return
    logger.setLevel(logging.WARNING)
    logging.getLogger(only).setLevel(LEVELS[level])
    _singled_out.add(only)


__all__ = ["NORMAL", "QUIET", "VERBOSE", "configure", "verbosity"]
