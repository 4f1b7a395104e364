"""Hadoop's secure mode on the local cluster (`cluster up --kerberos`): config and TLS material.

What a production cluster has, at small scale: Kerberos for every RPC,
service-level authorization, block access tokens, DataNode transfer over
SASL (``dfs.data.transfer.protection``, which needs HDFS's web endpoints
on HTTPS since the DataNodes do not run as root on privileged ports),
SPNEGO on every web UI including the RM's proxy, and YARN ACLs with no
admin but the YARN service itself. The overlays here are merged over the
plain config of tfyarn.cluster.config; each key says why it is there.
"""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

from tfyarn.cluster import kdc
from tfyarn.cluster.java import java_home
from tfyarn.cluster.layout import HOST, MAX_NODES, ClusterLayout
from tfyarn.errors import ClusterError

_PASSWORD_FILE = "tls.password"


def tls_dir(layout: ClusterLayout) -> Path:
    return kdc.kerberos_dir(layout) / "tls"


def ca_pem(layout: ClusterLayout) -> Path:
    """The cluster's self-signed certificate: what a Python client trusts for HDFS's HTTPS endpoints."""
    return tls_dir(layout) / "cluster.pem"


def _password(layout: ClusterLayout) -> str:
    return (tls_dir(layout) / _PASSWORD_FILE).read_text().strip()


def ensure_keystores(layout: ClusterLayout) -> None:
    """A keystore with one self-signed key for every node's address, and a truststore holding it (keytool)."""
    d = tls_dir(layout)
    if (d / "truststore.jks").exists():
        return
    d.mkdir(parents=True, exist_ok=True)
    pw = secrets.token_hex(12)
    (d / _PASSWORD_FILE).write_text(pw + "\n")
    (d / _PASSWORD_FILE).chmod(0o600)
    keytool = str(java_home() / "bin" / "keytool")
    san = ",".join(["dns:localhost", *(f"ip:127.0.0.{i}" for i in range(1, MAX_NODES + 1))])
    store = ["-storepass", pw, "-storetype", "JKS"]
    for argv in (
        ["-genkeypair", "-alias", "tfyarn", "-keyalg", "RSA", "-keysize", "2048", "-validity", "3650"]
        + ["-dname", "CN=localhost,O=tfyarn local cluster", "-ext", f"SAN={san}", "-keypass", pw]
        + ["-keystore", str(d / "keystore.jks"), *store],
        ["-exportcert", "-rfc", "-alias", "tfyarn", "-file", str(ca_pem(layout))]
        + ["-keystore", str(d / "keystore.jks"), *store],
        ["-importcert", "-noprompt", "-alias", "tfyarn", "-file", str(ca_pem(layout))]
        + ["-keystore", str(d / "truststore.jks"), *store],
    ):
        r = subprocess.run([keytool, "-J-Xmx128m", *argv], capture_output=True, text=True)
        if r.returncode != 0:
            raise ClusterError(f"keytool {argv[0]} failed: {(r.stderr or r.stdout).strip()}")


def ssl_server(layout: ClusterLayout) -> dict[str, str]:
    d, pw = tls_dir(layout), _password(layout)
    return {
        "ssl.server.keystore.type": "jks",
        "ssl.server.keystore.location": str(d / "keystore.jks"),
        "ssl.server.keystore.password": pw,
        "ssl.server.keystore.keypassword": pw,
        "ssl.server.truststore.type": "jks",
        "ssl.server.truststore.location": str(d / "truststore.jks"),
        "ssl.server.truststore.password": pw,
    }


def ssl_client(layout: ClusterLayout) -> dict[str, str]:
    d, pw = tls_dir(layout), _password(layout)
    return {
        "ssl.client.truststore.type": "jks",
        "ssl.client.truststore.location": str(d / "truststore.jks"),
        "ssl.client.truststore.password": pw,
    }


def _http_keytab(layout: ClusterLayout) -> str:
    return str(kdc.keytab(layout, kdc.HTTP[0]))


def core_site(layout: ClusterLayout) -> dict[str, str]:
    return {
        "hadoop.security.authentication": "kerberos",
        "hadoop.security.authorization": "true",
        # SPNEGO on every daemon's web UI. "*": any HTTP/<host> key in the keytab, so a client
        # may name a node by any of its addresses.
        "hadoop.http.filter.initializers": "org.apache.hadoop.security.AuthenticationFilterInitializer",
        "hadoop.http.authentication.type": "kerberos",
        "hadoop.http.authentication.simple.anonymous.allowed": "false",
        "hadoop.http.authentication.kerberos.principal": "*",
        "hadoop.http.authentication.kerberos.keytab": _http_keytab(layout),
        "hadoop.http.authentication.signature.secret.file": str(kdc.kerberos_dir(layout) / "http-secret"),
    }


def hdfs_site(layout: ClusterLayout, token_lifetime_s: int = 0) -> dict[str, str]:
    """``token_lifetime_s``: the delegation tokens' max lifetime (renewed every half of it), so
    that a job can outlive its tokens in minutes, not Hadoop's 7 days; 0 keeps Hadoop's."""
    hdfs, kt = kdc.HDFS.full(), str(kdc.keytab(layout, kdc.HDFS))
    p = layout.node_ports
    tokens = (
        {
            "dfs.namenode.delegation.token.max-lifetime": str(token_lifetime_s * 1000),
            "dfs.namenode.delegation.token.renew-interval": str(token_lifetime_s * 500),
        }
        if token_lifetime_s
        else {}
    )
    return tokens | {
        "dfs.block.access.token.enable": "true",
        "dfs.namenode.kerberos.principal": hdfs,
        "dfs.namenode.keytab.file": kt,
        "dfs.datanode.kerberos.principal": hdfs,
        "dfs.datanode.keytab.file": kt,
        "dfs.web.authentication.kerberos.principal": "*",
        "dfs.web.authentication.kerberos.keytab": _http_keytab(layout),
        # A DataNode that is not root on privileged ports proves itself over SASL instead,
        # which Hadoop allows only with HDFS's web endpoints on HTTPS.
        "dfs.data.transfer.protection": "authentication",
        "dfs.http.policy": "HTTPS_ONLY",
        "dfs.namenode.https-address": f"{HOST}:{p.namenode_https}",
        "dfs.datanode.https.address": f"{layout.host}:{p.datanode_https}",
    }


def yarn_site(layout: ClusterLayout) -> dict[str, str]:
    yarn, kt = kdc.YARN.full(), str(kdc.keytab(layout, kdc.YARN))
    krb5 = kdc.krb5_conf(layout)
    return {
        "yarn.resourcemanager.principal": yarn,
        "yarn.resourcemanager.keytab": kt,
        "yarn.nodemanager.principal": yarn,
        "yarn.nodemanager.keytab": kt,
        "yarn.resourcemanager.webapp.spnego-principal": "*",
        "yarn.resourcemanager.webapp.spnego-keytab-file": _http_keytab(layout),
        "yarn.nodemanager.webapp.spnego-principal": "*",
        "yarn.nodemanager.webapp.spnego-keytab-file": _http_keytab(layout),
        # Applications' view/modify ACLs are enforced (RM web services, the proxy, kill, logs),
        # and no user is admin of every application: only the YARN service itself.
        "yarn.acl.enable": "true",
        "yarn.admin.acl": "yarn",
        # Log aggregation stays on (the plain config's): the NodeManagers read container logs
        # through tfyarn's SecureIOUtils (tfyarn.cluster.secureio), since libhadoop is not on Maven Central.
        # A real node has /etc/krb5.conf; here the realm's config is the cluster's own, so
        # containers are told where it is: MIT tools read KRB5_CONFIG, JVMs (skein's AM) the property.
        "yarn.nodemanager.admin-env": (
            f"MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX,KRB5_CONFIG={krb5},JAVA_TOOL_OPTIONS=-Djava.security.krb5.conf={krb5}"
        ),
    }


def ssl_files(layout: ClusterLayout) -> dict[Path, dict[str, str]]:
    """ssl-server.xml and ssl-client.xml, by path (the keystores must exist: ensure_keystores)."""
    c = layout.conf_dir
    return {c / "ssl-server.xml": ssl_server(layout), c / "ssl-client.xml": ssl_client(layout)}


def ensure_secret(layout: ClusterLayout) -> None:
    """The key that signs SPNEGO's auth cookies, shared by the daemons."""
    path = kdc.kerberos_dir(layout) / "http-secret"
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
