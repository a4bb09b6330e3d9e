"""Read layer: walk the untrusted corpus safely and group files into sessions."""

from agenthropic_site.corpus.safe_io import (
    ContainmentError,
    CorpusRootError,
    FileRef,
    UnreadableError,
    read_bytes,
    real_root,
)
from agenthropic_site.corpus.walk import SKIP_REASONS, AgentFile, CorpusScan, SessionFiles, Skip, scan_corpus

__all__ = [
    "AgentFile",
    "ContainmentError",
    "CorpusRootError",
    "CorpusScan",
    "FileRef",
    "SKIP_REASONS",
    "SessionFiles",
    "Skip",
    "UnreadableError",
    "read_bytes",
    "real_root",
    "scan_corpus",
]
