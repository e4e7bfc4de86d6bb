"""FGL: Forest-Based Graph Learning for Semi-Supervised Node Classification (ICLR 2026, OpenReview 5asbtzIVpS)."""
