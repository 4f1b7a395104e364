"""Jobs that outlive their HDFS delegation tokens, and where secrets must never show.

The suite's NameNode gives tokens a max lifetime of TOKEN_LIFETIME_S (not
Hadoop's 7 days); both jobs (tests/kerberos/conftest.py: long_jobs) run
longer, staging an input, publishing snapshots and their output. The one
submitted with --principal/--keytab has its AM fetch and renew new tokens;
the one from a ticket cache alone cannot, and its AM says why when it fails
to save the job's final status.
"""
from __future__ import annotations

import base64
import calendar
import json
import time
from pathlib import Path

from tests.kerberos.conftest import TOKEN_LIFETIME_S, LongJobs, User, hdfs
from tfyarn import protocol, tokens
from tfyarn.cluster import LocalCluster

WAIT_S = TOKEN_LIFETIME_S + 300


def nodes(cluster: LocalCluster) -> list:
    return [cluster.layout, cluster.layout.for_node(2)]


def log_files(cluster: LocalCluster, app: str) -> dict[Path, bytes]:
    return {f: f.read_bytes() for n in nodes(cluster) for f in (n.log_dir / "containers" / app).rglob("*")
            if f.is_file()}


def am_log(cluster: LocalCluster, app: str) -> str:
    return "".join(b.decode(errors="replace") for f, b in log_files(cluster, app).items()
                   if f.name == protocol.AM_LOG_FILE)


def token_files(cluster: LocalCluster, app: str) -> list[Path]:
    """Every delegation-token file of ``app``'s containers: YARN's, and those the renewal wrote."""
    found = []
    for n in nodes(cluster):
        local = n.nm_local_dir
        found += (local / "nmPrivate" / app).rglob("*.tokens")
        found += local.glob(f"usercache/*/appcache/{app}/container_*/.tfyarn-tokens-*")
    return found


def test_a_job_outliving_its_token_renews_it_from_the_keytab_and_still_publishes(kcluster: LocalCluster, alice: User,
                                                                                    long_jobs: LongJobs):
    res = alice.tfyarn("wait", long_jobs.renewed, timeout=WAIT_S)
    assert res.returncode == 0 and "SUCCEEDED" in res.stdout, res.stdout + res.stderr
    expired_at = long_jobs.submitted + TOKEN_LIFETIME_S  # the first token is no good after this
    out = f"{long_jobs.data}/renewed"
    assert int(hdfs(kcluster, alice, "-cat", f"{out}/done.txt")) > expired_at  # published past it
    assert hdfs(kcluster, alice, "-cat", f"{out}/x.txt").startswith("input ")  # the staged input
    listing = hdfs(kcluster, alice, "-ls", f"{out}.snapshots")
    stamps = [parsed[0] for line in listing.splitlines()
              if (parsed := protocol.parse_snapshot_name(line.rsplit("/", 1)[-1]))]
    when = [calendar.timegm(time.strptime(s, protocol.SNAPSHOT_STAMP)) for s in stamps]
    assert any(t > expired_at for t in when), (listing, expired_at)  # a snapshot past it too
    saved = json.loads(hdfs(kcluster, alice, "-cat", f"/user/alice/.tfyarn/jobs/{long_jobs.renewed}/status.json"))
    assert saved["state"] == "SUCCEEDED"  # the AM's last write, minutes after the first token ended
    am = am_log(kcluster, long_jobs.renewed)
    assert "fetched HDFS delegation token #2" in am and "renewed the HDFS delegation token" in am, am[-3000:]
    logs = b"".join(log_files(kcluster, long_jobs.renewed).values()).decode(errors="replace")
    assert "switched to the job's renewed HDFS delegation token" in logs


def test_without_a_keytab_nothing_renews_and_the_am_says_what_to_do(kcluster: LocalCluster, alice: User,
                                                                     long_jobs: LongJobs):
    """The control: the same job from a ticket cache alone outlives its token (its executor's open
    connection still publishes, as HDFS checks a token only when a connection opens), and the AM's
    new connection at the end is refused; it says so and how to avoid it."""
    alice.tfyarn("wait", long_jobs.ticket, timeout=WAIT_S)
    am = am_log(kcluster, long_jobs.ticket)
    assert "could not save the final status to HDFS" in am and "--principal/--keytab" in am, am[-3000:]
    assert "fetched HDFS delegation token" not in am


def test_no_token_or_keytab_reaches_a_page_a_log_a_status_or_the_plan(kcluster: LocalCluster, alice: User,
                                                                      long_jobs: LongJobs):
    secrets: set[bytes] = {alice.keytab.read_bytes(), base64.b64encode(alice.keytab.read_bytes())}
    for app in (long_jobs.renewed, long_jobs.ticket):
        for f in token_files(kcluster, app):
            for _, t in tokens.parse(f.read_bytes()).tokens:
                if t.password:
                    secrets |= {t.password, base64.b64encode(t.password), base64.urlsafe_b64encode(t.password),
                                tokens.to_url_string(t).encode()}
    assert len(secrets) > 6, "no token files found: the check would prove nothing"
    seen: dict[str, bytes] = {"dry-run": long_jobs.dry_run.encode()}
    for app in (long_jobs.renewed, long_jobs.ticket):
        seen |= {str(f): b for f, b in log_files(kcluster, app).items()}
        seen[f"status {app}"] = alice.tfyarn("status", "--json", app).stdout.encode()
    seen["history"] = hdfs(kcluster, alice, "-cat", f"/user/alice/.tfyarn/jobs/{long_jobs.renewed}/status.json").encode()
    for where, text in seen.items():
        for secret in secrets:
            assert secret not in text, f"a secret ({len(secret)} bytes) in {where}"
    assert "renews the job's HDFS delegation token as alice" in long_jobs.dry_run
    # The keytab went to the AM's container alone, never a task's.
    keytab = alice.keytab.read_bytes()
    for n in nodes(kcluster):
        for c in (n.nm_local_dir).glob(f"usercache/*/appcache/{long_jobs.renewed}/container_*"):
            holds = any(f.is_file() and f.read_bytes() == keytab for f in c.rglob("*"))
            assert holds == c.name.endswith("_000001"), c
