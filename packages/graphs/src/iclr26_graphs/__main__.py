"""``python -m iclr26_graphs`` runs the domain CLI."""

import sys

from iclr26_graphs.cli import main

sys.exit(main())
