"""`python -m benchcard.fakeserver` and `benchcard.fakeserver.FakeServer`, kept as documented entry points.

The server lives in `benchcard.testing.fakeserver`.
"""

from benchcard.testing.fakeserver import *  # noqa: F403
from benchcard.testing.fakeserver import __all__ as __all__
