"""Integration tests run against the installed workspace (console scripts in the venv's bin/)."""

import os

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("FLWR_DISABLE_UPDATE_CHECK", "1")
