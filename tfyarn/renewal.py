"""Fresh HDFS delegation tokens for a job that outlives the ones it was submitted with.

YARN's ResourceManager renews the job's HDFS token, but only until the
NameNode's max lifetime (``dfs.namenode.delegation.token.max-lifetime``, 7
days by default); after that, every HDFS call of the job fails. When the
user submitted with ``--principal/--keytab``, the plan localizes that keytab
into the AM's container only (never a task's). The AM's ``Renewer`` logs in
from it, fetches a new token over WebHDFS (SPNEGO), renews it itself until
it nears its own max lifetime, then fetches the next. Each new token goes
into the AM's own token file and, as a whole credentials file, to the
key-value store, where every executor picks it up (``refresh``) before it
touches HDFS: staging, snapshots, publishing. The user's own process keeps
the file it started with. Tokens never reach the status page or a log line.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import urllib.parse
from typing import Any

import skein

from tfyarn import protocol, spnego, tokens

log = logging.getLogger("tfyarn.renewal")

RENEW_AT = 0.75  # of the time a token has left: renew (or replace) it then
REPLACE_AT = 0.25  # of a token's max lifetime: when this little is left, fetch a new one instead of renewing
# ... or this many seconds, if more: hdfs-native passes over a token within 60 s of its max lifetime.
REPLACE_MIN_S = 120.0
RETRY_S = 30.0  # after a failed fetch or renewal


def install(data: bytes, directory: str) -> str:
    """Make ``data`` (a credentials file) this process's tokens: written privately, named by
    HADOOP_TOKEN_FILE_LOCATION, and the cached HDFS clients dropped so the next call reconnects with it."""
    path = os.path.join(directory, f".tfyarn-tokens-{time.time_ns()}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    old = os.environ.get(protocol.ENV_HADOOP_TOKEN_FILE, "")
    os.environ[protocol.ENV_HADOOP_TOKEN_FILE] = path
    if os.path.basename(old).startswith(".tfyarn-tokens-"):
        try:
            os.unlink(old)
        except OSError:
            pass
    from tfyarn.storage import fs

    fs.forget_clients()
    return path


def refresh(app: skein.ApplicationClient, directory: str = ".") -> bool:
    """Merge the AM's newest HDFS tokens into this process's, if they are new to it; True if it did."""
    try:
        data = app.kv.get(protocol.KV_TOKENS)
    except Exception as e:  # the AM gone: the tokens we have are all there are
        log.warning(f"could not read the job's renewed tokens ({type(e).__name__})")
        return False
    if not data:
        return False
    return merge(tokens.parse(data), directory)


def merge(fresh: tokens.Credentials, directory: str) -> bool:
    """This process's credentials file with ``fresh``'s tokens in place of those under the same alias."""
    current = tokens.parse(_read(os.environ.get(protocol.ENV_HADOOP_TOKEN_FILE, "")))
    merged = current
    for alias, token in fresh.tokens:
        merged = merged.with_token(alias, token)
    if set(merged.tokens) == set(current.tokens):
        return False
    install(tokens.serialize(merged), directory)
    log.info("switched to the job's renewed HDFS delegation token")
    return True


class Renewer:
    """Keeps the job's HDFS token valid past its max lifetime, from the keytab localized into the AM."""

    def __init__(self, app: skein.ApplicationClient, principal: str, keytab: str, webs: list[str]) -> None:
        self.app, self.principal, self.keytab, self.webs = app, principal, os.path.abspath(keytab), webs
        self.fetched = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="token-renewal", daemon=True)

    @classmethod
    def from_env(cls, app: skein.ApplicationClient) -> Renewer | None:
        principal = os.environ.get(protocol.ENV_RENEW_PRINCIPAL, "")
        webs = [w for w in os.environ.get(protocol.ENV_RENEW_WEBHDFS, "").split(",") if w]
        if not (principal and webs and os.path.exists(protocol.RENEW_KEYTAB_FILE)):
            return None
        return cls(app, principal, protocol.RENEW_KEYTAB_FILE, webs)

    def start(self) -> None:
        # GSS-API logs in from the client keytab on demand, into a ticket cache of the AM's own.
        os.environ[protocol.ENV_KRB5_CLIENT_KTNAME] = f"FILE:{self.keytab}"
        os.environ[protocol.ENV_KRB5CCNAME] = f"FILE:{os.path.abspath('.tfyarn-renewal-ccache')}"
        log.info(f"renewing the job's HDFS delegation token as {self.principal} (keytab given at submit)")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        token: tokens.Token | None = None
        while not self._stop.is_set():
            try:
                if token is None or self._near_end(token):
                    token = self._fetch()
                    wait = self._renew(token)
                else:
                    wait = self._renew(token)
            except Exception as e:  # logged, tried again: the tokens the job has still work meanwhile
                log.warning(f"HDFS token renewal: {type(e).__name__}: {e}; trying again in {RETRY_S:.0f} s")
                wait = RETRY_S
            self._stop.wait(wait)

    @staticmethod
    def _near_end(token: tokens.Token) -> bool:
        return time.time() * 1000 >= _replace_ms(token)

    def _call(self, query: str, method: str = "GET") -> dict[str, Any]:
        from tfyarn import rest

        errors = []
        for web in self.webs:  # HA: the standby refuses, the active answers
            try:
                return dict(rest.parse_json(rest.get(f"{web}/webhdfs/v1/?{query}", method=method, timeout=30)))
            except (rest.FetchError, rest.Unreadable) as e:
                errors.append(f"{web}: {e}")
        raise RuntimeError("; ".join(errors))

    def _fetch(self) -> tokens.Token:
        """A new token from the NameNode, swapped into the job's credentials everywhere."""
        if spnego.credential_lifetime(self.principal) <= 0:
            raise RuntimeError(f"cannot log in as {self.principal} from the keytab")
        renewer = self.principal.split("@", 1)[0].split("/", 1)[0]
        answer = self._call(f"op=GETDELEGATIONTOKEN&renewer={urllib.parse.quote(renewer)}")
        url_string = str((answer.get("Token") or {}).get("urlString") or "")
        current = tokens.parse(_read(os.environ.get(protocol.ENV_HADOOP_TOKEN_FILE, "")))
        fresh = tokens.from_url_string(url_string)
        alias, service = _slot(current, fresh)
        token = tokens.Token(fresh.identifier, fresh.password, fresh.kind, service)
        only = tokens.Credentials(((alias, token),))  # never the AM's own tokens (its AM-RM token): the HDFS one
        merge(only, ".")
        self.app.kv[protocol.KV_TOKENS] = tokens.serialize(only)
        self.fetched += 1
        d = tokens.dates(token)
        log.info(f"fetched HDFS delegation token #{self.fetched} for {service} (valid at most until {_when(d.max_ms)})")
        return token

    def _renew(self, token: tokens.Token) -> float:
        """Renew ``token``; the seconds until the next step."""
        answer = self._call(f"op=RENEWDELEGATIONTOKEN&token={tokens.to_url_string(token)}", method="PUT")
        expires_ms = int(str(answer.get("long")))
        now_ms = time.time() * 1000
        next_ms = min(now_ms + RENEW_AT * (expires_ms - now_ms), _replace_ms(token))
        log.info(f"renewed the HDFS delegation token until {_when(expires_ms)}")
        return max(1.0, (next_ms - now_ms) / 1000)


def _replace_ms(token: tokens.Token) -> float:
    """When ``token`` is to be replaced by a new one (epoch ms)."""
    d = tokens.dates(token)
    return d.max_ms - max(REPLACE_AT * (d.max_ms - d.issue_ms), REPLACE_MIN_S * 1000)


def _slot(current: tokens.Credentials, fresh: tokens.Token) -> tuple[str, str]:
    """Where the fresh token goes in the job's credentials: (alias, service) of the token it replaces."""
    service = fresh.service
    hdfs = current.hdfs_tokens()
    for alias, t in hdfs:
        if t.service == service:
            return alias, service
    if len(hdfs) == 1:  # HA: the job's token names the nameservice (ha-hdfs:ns), the NameNode its address
        return hdfs[0][0], hdfs[0][1].service
    return service, service


def _read(path: str) -> bytes:
    if not path:
        return tokens.serialize(tokens.Credentials())
    with open(path, "rb") as f:
        return f.read()


def _when(ms: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ms / 1000))
