"""`python -m benchcard.fakeserver`: the fake server's command line (it lives in benchcard.testing.fakeserver)."""

from benchcard.testing.fakeserver import main

raise SystemExit(main())
