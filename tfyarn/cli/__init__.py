"""The ``tfyarn`` command line (click). Subcommands load lazily to keep ``--help`` fast."""
