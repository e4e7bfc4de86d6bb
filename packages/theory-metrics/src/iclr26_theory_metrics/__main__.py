"""``python -m iclr26_theory_metrics`` runs the domain CLI."""

import sys

from iclr26_theory_metrics.cli import main

sys.exit(main())
