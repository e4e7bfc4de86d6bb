"""``python -m iclr26_graphs`` runs the domain CLI."""

import sys

from iclr26_graphs.cli import main

if __name__ == "__main__":  # importing this module (pytest --markdown-docs collects sources) runs nothing
    sys.exit(main())
