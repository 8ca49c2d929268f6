"""`python -m benchcard.testing.fakeserver --port 0 [--config F.json] [--latency-ms N]`: runs until SIGTERM."""

from benchcard.testing.fakeserver._app import main

raise SystemExit(main())
