"""`tfyarn save` from a --modify-acl user: a signal YARN delivers to the AM's container.

Only the job's owner holds the skein credentials that write the save key.
YARN's modify ACL does govern one thing that reaches a running container:
the RM's "signal container" call. `tfyarn save` by another user asks the RM
to send OUTPUT_THREAD_DUMP (SIGQUIT) to the AM's container; the RM refuses
anyone outside the owner, the modify ACL and the admins. The NodeManager
signals the container's whole process group: skein's JVM prints a thread
dump (in the AM's log), and this script, which keeps SIGQUIT blocked from
its first line, finds it pending on its next poll and asks the output tasks
for a snapshot as `tfyarn save` by the owner would.
"""

from __future__ import annotations

import signal


def block() -> None:
    """Keep SIGQUIT pending instead of fatal: call first, before any thread starts (threads inherit the mask)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGQUIT})


def taken() -> bool:
    """Whether a save signal arrived since the last call (consumed: one request, however many signals)."""
    if signal.SIGQUIT not in signal.sigpending():
        return False
    return signal.sigtimedwait({signal.SIGQUIT}, 0) is not None
