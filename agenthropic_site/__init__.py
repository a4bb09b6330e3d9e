"""agenthropic: static-site reports of Claude Code sessions."""

from __future__ import annotations

__version__ = "0.1.0"
_identity: list[str] = []


def code_identity() -> str:
    """Return the version plus a digest of the package's own files.

    Cached parses, views and pages are valid only for the code that made them; hashing the
    source (not just the version number) keeps that true between releases too.
    """
    # Imported here: `agenthropic hook` imports this package and must start fast.
    import hashlib
    from pathlib import Path

    if _identity:
        return _identity[0]
    digest = hashlib.sha256(__version__.encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".json") and path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    _identity.append(f"{__version__}+{digest.hexdigest()[:16]}")
    return _identity[0]


def adopt_code_identity(identity: str) -> bool:
    """Take the identity an earlier process computed from these very source files (the stamp saw none of them change); say whether it was taken."""
    prefix = f"{__version__}+"
    digest = identity[len(prefix):]
    if _identity or not identity.startswith(prefix) or len(digest) != 16 or digest.strip("0123456789abcdef"):
        return False  # computed here already, or not one code_identity makes
    _identity.append(identity)
    return True
