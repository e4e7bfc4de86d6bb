"""``neural-collapse``: NC0–NC4 under SGD, SGDW, Adam, AdamW, Signum and SignumW (Zhao et al., ICLR 2026)."""
