"""A directory the executor puts first on a task's PYTHONPATH: its ``sitecustomize`` makes each line
one write. The package itself is never imported."""
