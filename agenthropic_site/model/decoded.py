"""Keep what stored bytes decoded to, so a process that builds again decodes only what changed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from typing import Generic, TypeVar

T = TypeVar("T")


class DecodedOnce(Generic[T]):
    """Decode each key's bytes once per process for the same bytes (a `--watch` builds again and again).

    Kept by a digest of the bytes, not the bytes. Shared between builds, so nothing may change a
    decoded value once made.
    """

    def __init__(self, decode: Callable[[str, bytes], T]) -> None:
        self._decode = decode
        self._known: dict[str, tuple[bytes | str, T]] = {}

    def __call__(self, key: str, data: bytes, checksum: str | None = None) -> T:
        """Return what `data` decodes to, decoding it only when the key's bytes changed since last time.

        `checksum`: a digest of `data` the caller has just verified (the cache's own), taken instead
        of making one (500 summaries: 2 ms a build). A key given one is always given one.
        """
        digest: bytes | str = checksum if checksum is not None else hashlib.blake2b(data, digest_size=16).digest()
        known = self._known.get(key)
        if known is not None and known[0] == digest:
            return known[1]
        value = self._decode(key, data)
        self._known[key] = (digest, value)
        return value

    def keep_only(self, keys: Collection[str]) -> None:
        """Forget the keys not in `keys` (sessions gone from the corpus)."""
        for key in set(self._known) - set(keys):
            del self._known[key]

    def clear(self) -> None:
        """Forget everything: the next call decodes as a new process would."""
        self._known.clear()
