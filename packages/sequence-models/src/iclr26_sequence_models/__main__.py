"""``python -m iclr26_sequence_models`` runs the domain CLI."""

import sys

from iclr26_sequence_models.cli import main

if __name__ == "__main__":  # importing this module (pytest --markdown-docs collects sources) runs nothing
    sys.exit(main())
