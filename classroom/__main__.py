import sys

try:
    from .cli import main
except ModuleNotFoundError as missing:  # a Python without tiledlab's packages: not the clone's environment
    if (missing.name or "").split(".")[0] in ("tiledlab", "classroom"):
        raise  # ours: a bug
    print(f"tiledlab: error: cannot run here: {sys.executable} has no {missing.name}: run the classroom commands with "
          "the clone's environment, where tiledlab is installed: .venv/bin/python -m classroom ...", file=sys.stderr)
    sys.exit(3)  # tiledlab.cli.UNAVAILABLE

sys.exit(main())
