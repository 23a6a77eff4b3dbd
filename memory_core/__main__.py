"""`python -m memory_core ...`: the `memory-core` command line (memory_core/cli/main.py)."""

import sys

from memory_core.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
