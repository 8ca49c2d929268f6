"""`benchcard compare`: a paired verdict over two logs other tools wrote (inspect_ai, lm-eval), unsealed and
said so. `logs` reads per-sample scores, `rule` the win rule, `pairing` builds the verdict's arrays, `judge`
gives and writes the verdict (docs/compare.md)."""

from benchcard.compare.comparison import Comparison, RuleOptions, compare
from benchcard.compare.logs import Sample, Samples, read_samples

__all__ = ["Comparison", "RuleOptions", "Sample", "Samples", "compare", "read_samples"]
