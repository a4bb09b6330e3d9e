"""Parser: pure functions from transcript bytes to a ParsedSession (no I/O, no clock)."""

from agenthropic_site.parse.model import (
    AGENT_KINDS,
    EDGE_SOURCES,
    TOKEN_CATEGORIES,
    Agent,
    ParsedSession,
    SessionInput,
    Tokens,
    TranscriptInput,
    UsageRow,
)
from agenthropic_site.parse.session import parse_session

__all__ = [
    "AGENT_KINDS",
    "EDGE_SOURCES",
    "TOKEN_CATEGORIES",
    "Agent",
    "ParsedSession",
    "SessionInput",
    "Tokens",
    "TranscriptInput",
    "UsageRow",
    "parse_session",
]
