"""Headless MuJoCo rendering for the rl tests (must be set before mujoco is imported)."""

import os

os.environ.setdefault("MUJOCO_GL", "egl")
