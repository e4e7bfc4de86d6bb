"""``python -m iclr26_theory_metrics`` runs the domain CLI (guarded, so that importing this module, as
pytest-markdown-docs does when collecting ``packages/theory-metrics`` as a directory, runs nothing)."""

import sys

from iclr26_theory_metrics.cli import main

if __name__ == "__main__":
    sys.exit(main())
