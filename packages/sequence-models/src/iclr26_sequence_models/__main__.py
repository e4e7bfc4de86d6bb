"""``python -m iclr26_sequence_models`` runs the domain CLI."""

import sys

from iclr26_sequence_models.cli import main

sys.exit(main())
