"""``python -m iclr26_rl`` runs the domain CLI."""

import sys

from iclr26_rl.cli import main

sys.exit(main())
