"""A headless Chromium for Playwright in a closed network: its flags and its executable, for the scripted
walkthrough (walkthrough.py) and the real-browser tests (tests/browser/conftest.py)."""
import os
import pathlib
import shutil

# The probe that set up this machine kind found these necessary for a headless Chromium in a closed
# network, as root: without the background-networking flags Chromium keeps trying to reach Google.
# Playwright itself adds --headless and a fresh, temporary --user-data-dir (it refuses one in args).
CHROMIUM_ARGS = [
    "--no-sandbox",  # needed as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_executable():
    """TILEDLAB_CHROMIUM if it exists, else the first Chromium or Chrome on PATH; None if there is none."""
    explicit = os.environ.get("TILEDLAB_CHROMIUM")
    if explicit:
        return explicit if pathlib.Path(explicit).exists() else None
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None
