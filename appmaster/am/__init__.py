"""The ApplicationMaster wing: follows the gang, binds GPUs, restarts, serves the status page.

Shares only ``tfyarn.protocol``, ``tfyarn.spec`` and the other pure,
client-free modules of ``tfyarn`` with the executor wing.
"""
