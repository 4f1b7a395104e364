"""The executor wing: runs one task in its YARN container.

Registers the task, stages its inputs, builds the framework's environment,
runs the user's command, publishes its outputs, reports its exit. Shares
only ``tfyarn.protocol``, ``tfyarn.spec`` and the other pure, client-free
modules of ``tfyarn`` with the AM wing.
"""
