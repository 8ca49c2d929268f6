"""Names that look like numbers, for the places that read a number out of a name (`_util/text.ascii_int`, `digits=None`:
a process id in a temporary's name, a list index in a field's path, a sample id of another tool's log)."""

from __future__ import annotations

#: Text that `str.isdigit()` or `int()` takes for a number and benchcard does not: a superscript two, an
#: Arabic-Indic three, nothing, a space, a sign, an underscore.
NOT_NUMBERS = ("\u00b2", "\u0663", "", " 1", "+1", "1_000")
#: A number of 30 digits: past any process id, list or 64-bit integer, yet a number.
THIRTY_DIGITS = "123456789012345678901234567890"
#: More digits than `int()` converts (Python's limit, 4,300 by default): still a number.
MANY_DIGITS = "9" * 5000
