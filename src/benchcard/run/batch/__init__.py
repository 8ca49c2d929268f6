"""`benchcard run --batch` and `benchcard status`: a run's grid through OpenAI's Batch API or Anthropic's Message
Batches, resumable at every step.

`_journal.py` (what the run folder records of each batch), `_vendors.py` (each vendor's batch service and limits),
`_results.py` (result lines → rows of outputs.jsonl), `_driver.py` (the order of steps), `status.py`
(`benchcard status RUN`). docs/scale.md says when to use it.
"""

from __future__ import annotations

from benchcard.run.batch._driver import run_batch

__all__ = ["run_batch", "status"]
