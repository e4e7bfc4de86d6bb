"""``python -m iclr26_generative_vision`` runs the domain CLI."""

import sys

from iclr26_generative_vision.cli import main

if __name__ == "__main__":  # importing this module (pytest --markdown-docs collects sources) runs nothing
    sys.exit(main())
