"""The maintainers' tools: what makes and checks the series, never installed with it (students get
tiledlab/ only; teachers run classroom/ from a clone). Run from a clone as `python -m tools COMMAND`
(tools/README.md):

  translate   the Chinese edition: catalogs, notebooks/zh/ and docs/zh/, its check (edition/)
  links       each notebook's "Run it online" cell and Colab install cell, from pyproject.toml
  execute     run the notebooks top to bottom (how the stored H200 outputs are made), timed
  walkthrough the scripted walkthrough in Chromium: modelled student minutes (walkthrough.py)
  plans       the teacher's guide's tables, from the committed walkthrough (plans.py)
  ladder      every rung of register tiling against cuBLAS, with registers and SASS (measure/ladder.py)
  sass        the main loops' SASS of bench's kernels (measure/sass.py)
  profile     Nsight Compute's counters of the kernels (measure/profile.py)
  measure     the GPU reference data: device, latency, peaks, effects, races, racecheck (measure/)

tools imports tiledlab and classroom; neither imports tools (tests/test_layers.py checks it).
"""
