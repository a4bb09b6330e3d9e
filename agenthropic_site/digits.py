"""Whole numbers read from text a user or another program wrote: ASCII digits only, never more than `int()` converts.

`str.isdigit()` is true of "²" and "٣", which `int()` refuses or reads as a number; and since
Python 3.11 `int()` refuses a string of more than `sys.get_int_max_str_digits()` digits (4,300
unless set otherwise). A check by `isdigit()` alone let either reach `int()`, which raised, and
the command ended with a traceback instead of its own message. No imports beyond `sys`: the
no-change check reads its stamp with this before anything else loads (pipeline/stamp.py).
"""

from __future__ import annotations

import sys


def whole_number(text: str) -> int | None:
    """Return the number a string of ASCII digits writes; None for anything else (a sign, a space, another script's digits, too many digits)."""
    limit = sys.get_int_max_str_digits()  # 0: no limit
    if not text or not text.isascii() or not text.isdigit() or (limit and len(text) > limit):
        return None
    return int(text)
