"""A replication's records, typed once: the link from a replication run to the run it replicates, the rule it
is judged by (fixed before its first call), and the judgement its verdict gives (`benchcard replicate`,
docs/replication.md).

- `ReplicaLink`, the manifest's and the ledger row's `replicates`: the original run, the hash and seq of the
  ledger row its verdict was entered as, its folder, whether the rerun went to another rig (a *transfer*) and
  whether the original's row is in another project's ledger (a run copied in with its card and seal).
- `RuleRecord`, the manifest's `replication_rule`: the rule's name, parameters and digest, written with the
  plan and covered by its `plan_digest`, so a rule changed after the run started is named, never used.
- `ReplicationJudgement`, verdict.json's and the ledger row's `replication`: what the new run shows against the
  original under that rule (replicated, not replicated, inconclusive; a probe's changed or no change shown).
"""

from __future__ import annotations

from typing import Any

import msgspec

from benchcard._util.hashing import digest


class ReplicaLink(msgspec.Struct, frozen=True, kw_only=True):
    """The run a replication replicates (the manifest's and its ledger row's `replicates`)."""

    run: str  # the original run's id
    hash: str  # the hash of the ledger row its verdict was entered as (verdict.json's `ledger.hash`)
    seq: int  # that row's seq
    evidence: str  # the original's folder, relative to the project
    transfer: bool = False  # sent to another rig (provider or model) than the original's
    foreign: bool = False  # the original's row is in another project's ledger: a run copied in with its seal
    seed_kept: bool = True  # the original's assignment seed (False: a new seed, given with --seed)

    @property
    def kind(self) -> str:
        """`transfer` or `replication`, as a line says it."""
        return "transfer" if self.transfer else "replication"


class RuleRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The rule a replication is judged by, as fixed before its first call (the manifest's `replication_rule`)."""

    name: str
    parameters: dict[str, Any]
    digest: str


class ReplicationJudgement(msgspec.Struct, frozen=True, kw_only=True):
    """The new run against the original (verdict.json's and the ledger row's `replication`)."""

    original: str  # the original run's id
    transfer: bool
    finding: str  # replicated | not replicated | inconclusive (ab); changed | no change shown (probe)
    direction: str | None  # rose | fell, when not replicated or changed
    text: str  # one line: the finding and why
    rule: str  # the rule's name
    rule_digest: str


#: A probe rerun is compared fixture by fixture (`stats.replication.probe_drift`) at this level.
PROBE_RULE_NAME = "probe drift: paired over fixtures, or Newcombe's interval over one prompt's repetitions"
PROBE_ALPHA = 0.05


#: A sequential run's replication keeps its sealed looks and is judged on the two findings alone: each run's gap
#: is selected by the look it stopped at (biased away from 0 when it stopped early), so the gap interval of the
#: default rule does not hold for it (docs/replication.md, "Sequential runs").
SEQUENTIAL_RULE_NAME = "sequential: the same finding at the sealed looks (gaps not compared)"


def rule_record(kind: str, sequential: bool = False) -> RuleRecord:
    """The rule a replication of a run of this kind (`sequential`: of a sequential card) is judged by, fixed now
    (docs/replication.md)."""
    if sequential:
        fixed: dict[str, object] = {"name": SEQUENTIAL_RULE_NAME, "version": 1}
        return RuleRecord(name=SEQUENTIAL_RULE_NAME, parameters=fixed, digest=digest(fixed))
    if kind == "probe":
        parameters: dict[str, object] = {"name": PROBE_RULE_NAME, "alpha": PROBE_ALPHA, "version": 1}
        return RuleRecord(name=PROBE_RULE_NAME, parameters=parameters, digest=digest(parameters))
    # Imported here: stats.replication loads numpy and scipy, which planning and running a card never need.
    from benchcard.stats.replication import DEFAULT_RULE

    return RuleRecord(name=DEFAULT_RULE.name, parameters=DEFAULT_RULE.parameters(), digest=DEFAULT_RULE.digest())
