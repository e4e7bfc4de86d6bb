"""``python -m iclr26_federated`` runs the domain CLI (only as ``__main__``: importing this module, as
pytest's ``--markdown-docs`` collection of the package's sources does, runs nothing)."""

import sys

from iclr26_federated.cli import main

if __name__ == "__main__":
    sys.exit(main())
