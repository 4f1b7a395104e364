"""SPNEGO ("Negotiate") tokens for Hadoop's Kerberized web endpoints, from the MIT GSS-API library.

A Kerberized RM, NameNode or NodeManager answers a plain request with 401
and ``WWW-Authenticate: Negotiate``. The client then sends a GSS-API token
for ``HTTP@<host of the URL>`` made from the user's ticket cache. The
Python ``gssapi`` package has no Linux wheel (it compiles against
libkrb5-dev), so this module calls ``libgssapi_krb5.so.2`` through ctypes:
the same library hdfs-native and kinit use, present wherever Kerberos is.
"""

from __future__ import annotations

import base64
import ctypes
import ctypes.util
from functools import cache

_SPNEGO_OID = b"\x2b\x06\x01\x05\x05\x02"  # 1.3.6.1.5.5.2
_GSS_C_GSS_CODE, _GSS_C_MECH_CODE = 1, 2
_CONTINUE_NEEDED = 1


class SpnegoError(Exception):
    """No token could be made; the message says why (no ticket, unknown service, no library)."""


class _Buffer(ctypes.Structure):
    _fields_ = [("length", ctypes.c_size_t), ("value", ctypes.c_void_p)]


class _Oid(ctypes.Structure):
    _fields_ = [("length", ctypes.c_uint32), ("elements", ctypes.c_void_p)]


@cache
def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("gssapi_krb5") or "libgssapi_krb5.so.2"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        raise SpnegoError(
            "the Kerberos GSS-API library (libgssapi_krb5.so.2) is not installed: "
            "install libgssapi-krb5-2 (Debian) or krb5-libs (RHEL)"
        ) from None
    for fn in (
        "import_name",
        "init_sec_context",
        "release_buffer",
        "delete_sec_context",
        "release_name",
        "acquire_cred",
        "release_cred",
    ):
        getattr(lib, f"gss_{fn}").restype = ctypes.c_uint32  # each answers an OM_uint32 major status
    lib.gss_display_status.restype = ctypes.c_uint32
    return lib


def _status_text(major: int, minor: int) -> str:
    lib, parts = _lib(), []
    for code, kind in ((major, _GSS_C_GSS_CODE), (minor, _GSS_C_MECH_CODE)):
        if not code:
            continue
        ctx, out, mn = ctypes.c_uint32(0), _Buffer(), ctypes.c_uint32(0)
        code_t = ctypes.c_uint32(code)
        lib.gss_display_status(ctypes.byref(mn), code_t, kind, None, ctypes.byref(ctx), ctypes.byref(out))
        if out.value:
            parts.append(ctypes.string_at(out.value, out.length).decode(errors="replace"))
            lib.gss_release_buffer(ctypes.byref(mn), ctypes.byref(out))
    return ": ".join(p for p in parts if p and p != "Unspecified GSS failure.  Minor code may provide more information")


def token(host: str) -> str:
    """The base64 ``Negotiate`` token for service ``HTTP@host``, from the default ticket cache."""
    lib = _lib()
    minor = ctypes.c_uint32(0)
    name_bytes = f"HTTP@{host}".encode()
    name_buf = _Buffer(len(name_bytes), ctypes.cast(ctypes.c_char_p(name_bytes), ctypes.c_void_p))
    nt_hostbased = ctypes.c_void_p.in_dll(lib, "GSS_C_NT_HOSTBASED_SERVICE")
    target = ctypes.c_void_p()
    major = lib.gss_import_name(ctypes.byref(minor), ctypes.byref(name_buf), nt_hostbased, ctypes.byref(target))
    if major:
        raise SpnegoError(f"bad service name HTTP@{host}: {_status_text(major, minor.value)}")
    oid_bytes = ctypes.create_string_buffer(_SPNEGO_OID, len(_SPNEGO_OID))
    mech = _Oid(len(_SPNEGO_OID), ctypes.cast(oid_bytes, ctypes.c_void_p))
    ctx, out = ctypes.c_void_p(), _Buffer()
    try:
        major = lib.gss_init_sec_context(
            ctypes.byref(minor),
            None,  # the default credential: the ticket cache (KRB5CCNAME) or client keytab
            ctypes.byref(ctx),
            target,
            ctypes.byref(mech),
            ctypes.c_uint32(0),
            ctypes.c_uint32(0),
            None,
            None,
            None,
            ctypes.byref(out),
            None,
            None,
        )
        if major not in (0, _CONTINUE_NEEDED):
            raise SpnegoError(_status_text(major, minor.value) or f"GSS-API error {major:#x}")
        return base64.b64encode(ctypes.string_at(out.value, out.length)).decode()
    finally:
        if out.value:
            lib.gss_release_buffer(ctypes.byref(minor), ctypes.byref(out))
        if ctx.value:
            lib.gss_delete_sec_context(ctypes.byref(minor), ctypes.byref(ctx), None)
        lib.gss_release_name(ctypes.byref(minor), ctypes.byref(target))


def credential_lifetime(principal: str | None = None) -> int:
    """Seconds left on the Kerberos credentials GSS-API would use (for ``principal``, if given); 0: none.

    The ticket cache, or MIT's client keytab (KRB5_CLIENT_KTNAME), from which
    the library gets a ticket on demand. Makes no connection to any service.
    """
    lib = _lib()
    minor, cred, lifetime = ctypes.c_uint32(0), ctypes.c_void_p(), ctypes.c_uint32(0)
    name = ctypes.c_void_p()
    if principal:
        raw = principal.encode()
        buf = _Buffer(len(raw), ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p))
        nt_user = ctypes.c_void_p.in_dll(lib, "GSS_C_NT_USER_NAME")
        if lib.gss_import_name(ctypes.byref(minor), ctypes.byref(buf), nt_user, ctypes.byref(name)):
            return 0
    try:
        initiate = 1  # GSS_C_INITIATE
        major = lib.gss_acquire_cred(
            ctypes.byref(minor),
            name,
            ctypes.c_uint32(0),
            None,
            initiate,
            ctypes.byref(cred),
            None,
            ctypes.byref(lifetime),
        )
        return int(lifetime.value) if major == 0 else 0
    finally:
        if cred.value:
            lib.gss_release_cred(ctypes.byref(minor), ctypes.byref(cred))
        if name.value:
            lib.gss_release_name(ctypes.byref(minor), ctypes.byref(name))


def principal() -> str | None:
    """The principal of the default Kerberos credentials (``alice@REALM``), or None without any."""
    lib = _lib()
    minor, cred, name, out = ctypes.c_uint32(0), ctypes.c_void_p(), ctypes.c_void_p(), _Buffer()
    try:
        if lib.gss_acquire_cred(ctypes.byref(minor), None, ctypes.c_uint32(0), None, 1, ctypes.byref(cred), None, None):
            return None
        if lib.gss_inquire_cred(ctypes.byref(minor), cred, ctypes.byref(name), None, None, None):
            return None
        if lib.gss_display_name(ctypes.byref(minor), name, ctypes.byref(out), None):
            return None
        return ctypes.string_at(out.value, out.length).decode(errors="replace")
    finally:
        if out.value:
            lib.gss_release_buffer(ctypes.byref(minor), ctypes.byref(out))
        if name.value:
            lib.gss_release_name(ctypes.byref(minor), ctypes.byref(name))
        if cred.value:
            lib.gss_release_cred(ctypes.byref(minor), ctypes.byref(cred))
