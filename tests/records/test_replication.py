"""A replication's records: the link and the rule read back as written, a manifest without them reads and
digests as before, and the rule a run fixes is the one `stats.replication` states."""

from __future__ import annotations

import msgspec

from benchcard._util.hashing import digest
from benchcard.records.plandigest import plan_digest
from benchcard.records.replication import PROBE_ALPHA, ReplicaLink, RuleRecord, rule_record
from benchcard.records.rows import Manifest, decode_manifest, encode_manifest
from benchcard.stats.replication import DEFAULT_RULE


def test_the_rule_of_an_ab_run_is_the_default_replication_rule_and_a_probe_has_its_own() -> None:
    ab = rule_record("ab")
    assert (ab.name, ab.parameters, ab.digest) == (DEFAULT_RULE.name, DEFAULT_RULE.parameters(), DEFAULT_RULE.digest())
    probe = rule_record("probe")
    assert probe.parameters["alpha"] == PROBE_ALPHA and probe.digest == digest(probe.parameters)
    assert probe.digest != ab.digest


def test_a_manifest_carries_the_link_and_the_rule_and_one_without_them_is_unchanged() -> None:
    link = ReplicaLink(run="20261204T090000Z-0a0a", hash="sha256:" + "a" * 64, seq=3,
                       evidence="results/c/v1/20261204T090000Z-0a0a", transfer=True)
    plain = Manifest(run="r", card="c", version=1, kind="ab", seal_root="sha256:x")
    assert "replicates" not in encode_manifest(plain).decode()
    linked = msgspec.structs.replace(plain, replicates=link, replication_rule=rule_record("ab"))
    back = decode_manifest(encode_manifest(linked), "manifest.json")
    assert back.replicates == link and back.replicates.kind == "transfer"
    assert isinstance(back.replication_rule, RuleRecord) and back.replication_rule.digest == DEFAULT_RULE.digest()
    # the link and the rule are in the plan's digest when a manifest has them, and leave every other run's alone
    assert plan_digest(plain.fields(), {}) != plan_digest(linked.fields(), {})
    assert plan_digest(plain.fields(), {}) == digest({"fields": {k: plain.fields().get(k) for k in (
        "run", "card", "version", "kind", "seal_root", "rig", "scratch", "provider_type", "base_url", "endpoints",
        "batch", "params", "seed", "repetitions", "cells", "started_at")}, "sealed": {}})
