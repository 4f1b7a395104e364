"""Who tfyarn is on a Kerberized cluster: a ticket cache (kinit), or --principal/--keytab.

Checked once, before anything is submitted or copied: with no credentials
every later step would fail in its own way (skein's driver refuses to start,
hdfs-native crashes setting up Kerberos, REST calls answer 401), and a
user deserves one line saying to kinit. Inside a YARN container the
delegation tokens YARN hands over (HADOOP_TOKEN_FILE_LOCATION) are the
credentials, and no keytab is ever shipped there.
"""

from __future__ import annotations

import atexit
import getpass
import os
import shutil
import tempfile
from pathlib import Path

from tfyarn import hadoop_env, protocol, spnego
from tfyarn.errors import NotAuthenticatedError


def use_keytab(principal: str, keytab: str) -> None:
    """Log this process (and its children) in from ``keytab``, not from the user's ticket cache.

    skein's driver logs in with the pair itself; hdfs-native, the SPNEGO REST
    calls and Hadoop's CLIs get tickets through MIT's client keytab into a
    ticket cache private to this process, deleted when it exits.
    """
    path = Path(keytab).expanduser()
    if not path.is_file() or not os.access(path, os.R_OK):
        raise NotAuthenticatedError(f"--keytab {keytab}: no readable file there; give the keytab of {principal}")
    private = tempfile.mkdtemp(prefix="tfyarn-krb5-")
    atexit.register(shutil.rmtree, private, True)
    os.environ[protocol.ENV_KRB5_CLIENT_KTNAME] = f"FILE:{path.absolute()}"
    os.environ[protocol.ENV_KRB5CCNAME] = f"FILE:{private}/ccache"
    if spnego.credential_lifetime(principal) <= 0:
        raise NotAuthenticatedError(
            f"cannot log in as {principal} with --keytab {keytab}: the KDC refused, or the keytab holds "
            f"no key of {principal} (`klist -kt {keytab}` lists what it holds)"
        )


def require(conf_dir: Path | None = None) -> None:
    """Raise NotAuthenticatedError when the cluster is Kerberized and this process has no credentials."""
    conf = conf_dir or Path(os.environ.get(protocol.ENV_HADOOP_CONF_DIR) or "")
    if not str(conf) or not hadoop_env.kerberized(conf):
        return
    if os.environ.get(protocol.ENV_HADOOP_TOKEN_FILE):
        return  # a YARN container: its delegation tokens
    try:
        ok = spnego.credential_lifetime() > 0
    except spnego.SpnegoError as e:
        raise NotAuthenticatedError(f"the cluster is Kerberized, but {e}") from None
    if not ok:
        raise NotAuthenticatedError(
            "no valid Kerberos ticket, and the cluster is Kerberized: run `kinit` (or `kinit -kt KEYTAB PRINCIPAL`), "
            "or pass --principal and --keytab"
        )


def user_name(conf_dir: Path | None = None) -> str:
    """Who the cluster takes this process for: the short name of its principal on a Kerberized
    cluster (``alice`` of ``alice@REALM``, as Hadoop's default rule maps it), else the simple-auth
    user (HADOOP_USER_NAME, or the OS user)."""
    conf = conf_dir or Path(os.environ.get(protocol.ENV_HADOOP_CONF_DIR) or "")
    if str(conf) and hadoop_env.kerberized(conf):
        try:
            full = spnego.principal()
        except spnego.SpnegoError:
            full = None
        if full:
            return full.split("@", 1)[0].split("/", 1)[0]
    return os.environ.get(protocol.ENV_HADOOP_USER_NAME) or getpass.getuser()
