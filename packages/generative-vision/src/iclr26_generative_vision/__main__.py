"""``python -m iclr26_generative_vision`` runs the domain CLI."""

import sys

from iclr26_generative_vision.cli import main

sys.exit(main())
