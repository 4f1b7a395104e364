"""tfyarn's ApplicationMaster and in-container executor.

Runs inside YARN containers. Imports ``tfyarn.protocol``, ``tfyarn.spec``
and ``tfyarn.status`` (shared data), never the client's cluster code.
"""
