"""tfyarn's exceptions, one tree, caught once by the CLI.

    TfyarnError                 anything tfyarn reports as "Error: ..." (exit 1)
    ├── SpecError               a job spec is invalid (exit 2: usage)
    ├── ClusterError            the local cluster cannot be set up, started or stopped
    ├── UnreachableError        the ResourceManager or HDFS cannot be reached
    │   └── NotAuthenticatedError   a Kerberized cluster, and no ticket or keytab
    ├── StorageError            a copy failed after its retries, or a path is not what it must be
    └── JobFailed               a followed job ended in a state other than SUCCEEDED

Each message is one line that says what is wrong and how to fix it.
"""

from __future__ import annotations


class TfyarnError(Exception):
    """Base of all errors tfyarn reports to users."""

    exit_code = 1


class SpecError(TfyarnError):
    """The job spec is invalid; nothing was submitted."""

    exit_code = 2


class ClusterError(TfyarnError):
    """The local cluster failed to set up, start or stop."""


class UnreachableError(TfyarnError):
    """A cluster service is unreachable."""

    exit_code = 3


class NotAuthenticatedError(UnreachableError):
    """The cluster is Kerberized and this process has no credentials (exit 3, as unreachable)."""


class JobFailed(TfyarnError):
    """The job ended FAILED or KILLED."""

    exit_code = 4


class StorageError(TfyarnError):
    """A copy failed after its retries, or a path is not what it must be."""
