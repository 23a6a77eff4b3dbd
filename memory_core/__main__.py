"""`python -m memory_core ...`: the `memory-core` command line (memory_core/cli.py)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
