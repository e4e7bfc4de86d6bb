"""``python -m iclr26_rl`` runs the domain CLI."""

import sys

from iclr26_rl.cli import main

if __name__ == "__main__":  # importing this module (pytest --markdown-docs collects sources) runs nothing
    sys.exit(main())
