"""`python -m benchcard.testing.fakeserver --port 0 [--host 127.0.0.2] [--config F.json] [--latency-ms N]`: runs until
SIGTERM."""

from benchcard.testing.fakeserver._app import main

raise SystemExit(main())
