"""`benchcard compare`: a paired verdict over two logs other tools wrote (inspect_ai, lm-eval), unsealed and
said so. `logs` reads per-sample scores, `rule` the win rule, `pairing` builds the verdict's arrays,
`comparison` gives the verdict (`rule_on`, in memory) and writes it (`compare`); `guard` is what every reader checks
before it trusts a byte (docs/compare.md, docs/security.md)."""

from benchcard.compare._comparison import Comparison, RuleOptions, compare, rule_on
from benchcard.compare._logs import Sample, Samples

__all__ = ["Comparison", "RuleOptions", "Sample", "Samples", "compare", "rule_on"]
