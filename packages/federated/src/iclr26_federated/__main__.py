"""``python -m iclr26_federated`` runs the domain CLI."""

import sys

from iclr26_federated.cli import main

sys.exit(main())
