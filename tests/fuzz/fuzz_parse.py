"""Coverage-guided fuzzing of the read layer's parser with atheris (optional; CI runs hypothesis instead).

    .venv/bin/pip install atheris
    .venv/bin/python tests/fuzz/fuzz_parse.py -max_total_time=300 [CORPUS_DIR ...]

Each input is cut into a main transcript, an agent transcript and the agent's sidecar at its first
two `\\x00\\x01` markers, so one input reaches the linking of a session's files too. The parser is a
pure function of bytes: for any input it must return a ParsedSession, so any exception it raises
is a bug, and libFuzzer stops with the input that caused it (saved as `crash-*`). CORPUS_DIR
folders (seed inputs) are optional; lines of real transcripts make good seeds. test_parse.py runs
`one_input` on a few inputs without atheris, so the harness cannot rot.
"""

from __future__ import annotations

import sys

SID = "00000000-0000-4000-8000-000000000001"
MARKER = b"\x00\x01"


def one_input(data: bytes) -> None:
    """Parse one fuzz input as a session of a main transcript and one agent with a sidecar."""
    from agenthropic_site.parse import SessionInput, TranscriptInput, parse_session

    main, agent, meta = (data.split(MARKER, 2) + [b"", b""])[:3]
    agent_file = TranscriptInput(f"p/{SID}/subagents/agent-z.jsonl", agent, "subagents", "z", meta or None)
    parsed = parse_session(SessionInput(SID, "p", TranscriptInput(f"p/{SID}.jsonl", main, "main"), (agent_file,)))
    if parsed.session_id != SID:
        raise AssertionError(f"the session id changed: {parsed.session_id!r}")


def main(argv: list[str]) -> None:
    """Run libFuzzer over `one_input` with the parser instrumented for coverage."""
    import atheris

    with atheris.instrument_imports():
        import agenthropic_site.parse  # noqa: F401 - instrumented on import
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
