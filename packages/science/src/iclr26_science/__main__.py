"""``python -m iclr26_science`` runs the domain CLI."""

import sys

from iclr26_science.cli import main

sys.exit(main())
