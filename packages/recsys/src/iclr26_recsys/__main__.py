"""``python -m iclr26_recsys`` runs the domain CLI."""

import sys

from iclr26_recsys.cli import main

sys.exit(main())
