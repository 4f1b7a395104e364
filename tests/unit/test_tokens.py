"""Delegation tokens as bytes (tfyarn.tokens), the renewal's plumbing (appmaster.renewal), and its plan.

The renewal itself, against a NameNode whose tokens expire in minutes, is
tested in tests/kerberos.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tfyarn import hadoop_env, protocol, renewal, tokens
from tfyarn.cluster.config import to_xml
from tfyarn.plan import PlanContext, Renewal, plan
from tfyarn.spec import JobSpec, RoleSpec

# What a real NameNode (Hadoop 3.5, the Kerberized local cluster) answered to
# GETDELEGATIONTOKEN&renewer=alice over WebHDFS; that cluster is long gone.
REAL_URL_STRING = ("HgAFYWxpY2UFYWxpY2UAigGiR_sx8ooBomwHtfIGBBQTgD70ldgbtvPjMbasA8Pk0YHOUBNTV0VCSERGUyBkZWxl"
                   "Z2F0aW9uDjEyNy4wLjAuMTo5MDAw")


def test_a_real_webhdfs_token_reads_as_an_rpc_token_with_its_dates():
    t = tokens.from_url_string(REAL_URL_STRING)
    assert (t.kind, t.service) == (tokens.HDFS_KIND, "127.0.0.1:9000")
    d = tokens.dates(t)
    assert (d.owner, d.renewer) == ("alice", "alice")
    assert d.max_ms - d.issue_ms == 7 * 24 * 3600 * 1000  # Hadoop's default max lifetime
    assert tokens.to_url_string(t, "SWEBHDFS delegation") == REAL_URL_STRING
    assert tokens.from_url_string(REAL_URL_STRING, "ha-hdfs:ns1").service == "ha-hdfs:ns1"


@pytest.mark.parametrize("value", [0, 1, -1, 127, 128, -112, -113, -120, -121, 255, 256, 2**31, -(2**31), 2**62,
                                   1796503974386])
def test_hadoop_vlongs_round_trip(value: int):
    encoded = tokens._vlong(value)
    assert tokens._Reader(encoded).vlong() == value
    assert len(encoded) == 1 if -112 <= value <= 127 else len(encoded) > 1


def test_hadoop_vlong_bytes_are_hadoops():
    # WritableUtils.writeVLong: 300 is 0x8E (-114: two bytes follow) 0x01 0x2C; -300 is 0x86 0x01 0x2B
    assert tokens._vlong(300) == bytes([0x8E, 0x01, 0x2C])
    assert tokens._vlong(-300) == bytes([0x86, 0x01, 0x2B])


def creds() -> tokens.Credentials:
    hdfs = tokens.from_url_string(REAL_URL_STRING)
    amrm = tokens.Token(b"\x01\x02", b"pw" * 10, "YARN_AM_RM_TOKEN", "127.0.0.1:8030")
    return tokens.Credentials((("127.0.0.1:9000", hdfs), ("amrm", amrm)), (("key", b"\x00secret"),))


def test_a_credentials_file_round_trips_and_starts_as_hadoops():
    data = tokens.serialize(creds())
    assert data[:5] == b"HDTS\x00"
    assert tokens.parse(data) == creds()
    assert [a for a, _ in creds().hdfs_tokens()] == ["127.0.0.1:9000"]


def _pb(number: int, payload: bytes) -> bytes:  # a length-delimited protobuf field
    def varint(n: int) -> bytes:
        out = b""
        while True:
            out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
            n >>= 7
            if not n:
                return out
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_the_protobuf_format_version_1_is_read():
    t = tokens.Token(b"id" * 70, b"pw", tokens.HDFS_KIND, "ha-hdfs:ns1")  # a 140-byte id: a two-byte length
    token = _pb(1, t.identifier) + _pb(2, t.password) + _pb(3, t.kind.encode()) + _pb(4, t.service.encode())
    body = _pb(1, _pb(1, b"ha-hdfs:ns1") + _pb(2, token)) + _pb(2, _pb(1, b"k") + _pb(3, b"v"))
    data = b"HDTS\x01" + bytes([len(body)]) + body if len(body) < 128 else b"HDTS\x01" + _pb(0, body)[1:]
    assert tokens.parse(data) == tokens.Credentials((("ha-hdfs:ns1", t),), (("k", b"v"),))


@pytest.mark.parametrize("data", [b"", b"HDTS", b"XXXX\x00", b"HDTS\x07\x00", b"HDTS\x00\x05"])
def test_what_is_not_a_credentials_file_is_one_error(data: bytes):
    with pytest.raises(tokens.TokenFormatError):
        tokens.parse(data)


def test_a_token_never_prints_its_password():
    t = tokens.Token(b"id", b"TOPSECRET", tokens.HDFS_KIND, "127.0.0.1:9000")
    assert "TOPSECRET" not in repr(t) and "TOPSECRET" not in repr(tokens.Credentials((("a", t),)))


def conf(tmp_path: Path, core: dict[str, str], hdfs: dict[str, str]) -> Path:
    tmp_path.mkdir()
    (tmp_path / "core-site.xml").write_text(to_xml(core))
    (tmp_path / "hdfs-site.xml").write_text(to_xml(hdfs))
    return tmp_path


def test_namenode_web_addresses_follow_the_http_policy_and_ha(tmp_path: Path):
    plain = conf(tmp_path / "a", {"fs.defaultFS": "hdfs://nn:8020"}, {})
    assert hadoop_env.namenode_webs(plain) == ["http://nn:9870"]
    secure = conf(tmp_path / "b", {"fs.defaultFS": "hdfs://nn:8020"},
                  {"dfs.http.policy": "HTTPS_ONLY", "dfs.namenode.https-address": "0.0.0.0:50470"})
    assert hadoop_env.namenode_webs(secure) == ["https://nn:50470"]
    ha = conf(tmp_path / "c", {"fs.defaultFS": "hdfs://ns1"},
              {"dfs.ha.namenodes.ns1": "nn1, nn2", "dfs.namenode.http-address.ns1.nn1": "m1:9870",
               "dfs.namenode.http-address.ns1.nn2": "m2:9870"})
    assert hadoop_env.namenode_webs(ha) == ["http://m1:9870", "http://m2:9870"]
    assert hadoop_env.namenode_webs(conf(tmp_path / "d", {"fs.defaultFS": "s3a://bucket"}, {})) == []


def test_the_keytab_goes_to_the_am_alone(tmp_path: Path):
    keytab = tmp_path / "alice.keytab"
    keytab.write_bytes(b"\x05\x02keys")
    spec = JobSpec(name="j", command=("python", "x.py"), roles={"worker": RoleSpec("worker", instances=2)})
    ctx = PlanContext(python="python", kerberized=True, owner="alice",
                      renewal=Renewal("alice@R", str(keytab), ("https://nn:9871",), "/ca.pem"))
    app = plan(spec, ctx)
    assert app.master.files[protocol.RENEW_KEYTAB_FILE].source == f"file://{keytab}"
    assert app.master.env[protocol.ENV_RENEW_PRINCIPAL] == "alice@R"
    assert app.master.env[protocol.ENV_RENEW_WEBHDFS] == "https://nn:9871"
    assert app.master.env[protocol.ENV_CA_FILE] == "/ca.pem"
    for service in app.services.values():
        assert protocol.RENEW_KEYTAB_FILE not in service.files
        assert not any(str(keytab) in f.source for f in service.files.values())
    bare = plan(spec, PlanContext(python="python"))
    assert protocol.RENEW_KEYTAB_FILE not in bare.master.files and protocol.ENV_RENEW_PRINCIPAL not in bare.master.env


def test_the_fresh_token_replaces_the_one_for_its_namenode():
    fresh = tokens.from_url_string(REAL_URL_STRING)
    assert renewal._slot(creds(), fresh) == ("127.0.0.1:9000", "127.0.0.1:9000")
    ha = tokens.Credentials((("ha-hdfs:ns1", tokens.Token(b"i", b"p", tokens.HDFS_KIND, "ha-hdfs:ns1")),))
    assert renewal._slot(ha, fresh) == ("ha-hdfs:ns1", "ha-hdfs:ns1")  # HA: the nameservice's token
    assert renewal._slot(tokens.Credentials(), fresh) == ("127.0.0.1:9000", "127.0.0.1:9000")


class FakeKV(dict[str, bytes]):
    pass


class FakeApp:
    def __init__(self, kv: dict[str, bytes]):
        self.kv = FakeKV(kv)


def test_a_container_swaps_in_the_ams_newest_hdfs_token_and_keeps_its_own_others(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    yarn_given = tmp_path / "container_tokens"
    yarn_given.write_bytes(tokens.serialize(creds()))
    monkeypatch.setenv(protocol.ENV_HADOOP_TOKEN_FILE, str(yarn_given))
    app = FakeApp({})
    assert not renewal.refresh(app, str(tmp_path))  # type: ignore[arg-type]  # no renewal: nothing changes
    fresh = tokens.Token(b"new-id", b"new-pw", tokens.HDFS_KIND, "127.0.0.1:9000")
    app.kv[protocol.KV_TOKENS] = tokens.serialize(tokens.Credentials((("127.0.0.1:9000", fresh),)))
    assert renewal.refresh(app, str(tmp_path))  # type: ignore[arg-type]
    path = Path(os.environ[protocol.ENV_HADOOP_TOKEN_FILE])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.parent == tmp_path
    now = tokens.parse(path.read_bytes())
    assert dict(now.tokens)["127.0.0.1:9000"] == fresh
    assert dict(now.tokens)["amrm"] == dict(creds().tokens)["amrm"] and now.secrets == creds().secrets
    assert yarn_given.read_bytes() == tokens.serialize(creds())  # YARN's own file is left alone
    assert not renewal.refresh(app, str(tmp_path))  # type: ignore[arg-type]  # the same token: no new file
    newer = tokens.Token(b"newer-id", b"pw", tokens.HDFS_KIND, "127.0.0.1:9000")
    app.kv[protocol.KV_TOKENS] = tokens.serialize(tokens.Credentials((("127.0.0.1:9000", newer),)))
    assert renewal.refresh(app, str(tmp_path))  # type: ignore[arg-type]
    assert not path.exists()  # the previous renewed file is removed
    assert dict(tokens.parse(Path(os.environ[protocol.ENV_HADOOP_TOKEN_FILE]).read_bytes()).tokens)[
        "127.0.0.1:9000"] == newer


def test_a_token_is_replaced_well_before_hdfs_clients_pass_over_it():
    def token(issue_s: float, max_s: float) -> tokens.Token:
        ident = b"\x00" + tokens._text("alice") * 2 + tokens._text("") + tokens._vlong(int(issue_s * 1000))
        return tokens.Token(ident + tokens._vlong(int(max_s * 1000)) + b"\x01\x01", b"", tokens.HDFS_KIND, "s")

    week = 7 * 24 * 3600.0
    assert renewal._replace_ms(token(0, week)) == 0.75 * week * 1000  # a quarter of its life left
    assert renewal._replace_ms(token(0, 150)) == 30_000  # two minutes left, whatever the lifetime
