"""`python -m benchcard.fakeserver --port 0 [--config F.json] [--latency-ms N]`: runs until SIGTERM."""

from .app import main

raise SystemExit(main())
