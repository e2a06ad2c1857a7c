"""Put the H200's final run (tools/final_h200.sh: $OUT/final.tar.gz, final.log beside it) into tiledlab/data/h200/,
or a card's one-call run (tools/same_run.py --set card: the folder $OUT with same_run_card.csv) into
tiledlab/data/<card>/ (the card's key in core.card.KNOWN, from the run's `card` column).

    python tools/install_final.py PATH/final.tar.gz
    python tools/install_final.py PATH/OUT         # a card run: shapes.csv and the README's card-run paragraph

Writes, each only when the run produced it: shapes.csv (every row of the three same-run table runs, with its
point's median, min, max and spread of % of cuBLAS over the runs), shapes_checked.csv (every registry kernel
checked on the odd shapes against float64), tune.csv (every candidate tune timed, its choice per shape class
marked) and shapes_profile.csv (Nsight Compute); and the data README's provenance paragraph of the final run
(card, driver, clocks, versions, date, each step's exit and time) from env.txt and final.log. Rows measured on the
simulator are refused unless --simulator (the chain's own test). Prints what it wrote and what is missing.
"""
import argparse
import glob
import io
import os
import pathlib
import re
import sys
import tarfile
import tempfile
from contextlib import redirect_stdout

import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "tiledlab" / "data" / "h200"
BEGIN, END = "<!-- final run: written by tools/install_final.py -->", "<!-- end of the final run -->"
CARD_BEGIN, CARD_END = "<!-- card run: written by tools/install_final.py -->", "<!-- end of the card run -->"
# the run's file → its name in the data folder
FILES = {"same_run_check.csv": "shapes_checked.csv", "tune/tune.csv": "tune.csv",
         "profile/profile.csv": "shapes_profile.csv"}


def summarized(work):
    """shapes.csv made again from the table runs' CSVs (same_run --summary), or None when no run wrote one."""
    runs = [p for p in glob.glob(os.path.join(work, "same_run_*.csv")) if not p.endswith("_check.csv")]
    if not runs:
        return None
    sys.path.insert(0, str(ROOT / "tools"))
    import same_run
    with tempfile.TemporaryDirectory() as folder, redirect_stdout(io.StringIO()):
        for p in runs:
            os.symlink(p, os.path.join(folder, os.path.basename(p)))
        same_run.summarize(folder)
        return pd.read_csv(os.path.join(folder, "shapes.csv"))


def provenance(work, log):
    """The README paragraph: where, when and with what the run measured, and how each step ended."""
    env = pathlib.Path(work, "env.txt").read_text().splitlines() if pathlib.Path(work, "env.txt").exists() else []
    steps = [line[3:] for line in log.splitlines() if line.startswith("== ")]
    card = next((line for line in env[1:] if line.count(",") == 4), "a card nvidia-smi did not name")
    versions = ", ".join(line for line in env[1:] if re.fullmatch(r"[\w.-]+ [\w.+-]+", line.strip()))
    ncu = next((line for line in env if "Version" in line), "")  # ncu --version's last line
    return "\n".join([BEGIN, f"The final run (`bash tools/final_h200.sh`, files shapes.csv, shapes_checked.csv, "
                      f"tune.csv, shapes_profile.csv) began {env[0] if env else '(date not recorded)'} on {card} "
                      f"(name, driver, SM clock, its maximum, temperature, as nvidia-smi read them at the start); "
                      f"{versions}{'; ncu ' + ncu if ncu else ''}. Its steps: " + "; ".join(steps) + ".", END])


def readme(text, paragraph, begin=BEGIN, end=END):
    """The data README with its final-run (or card-run) paragraph replaced (or added at its end)."""
    if begin in text:
        return re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: paragraph, text, flags=re.S)
    return text.rstrip("\n") + "\n\n" + paragraph + "\n"


def card_run(folder, data_root, simulator=False):
    """Install a card run (same_run --set card) from `folder` into data_root/<card>/: shapes.csv and the README's
    card-run paragraph (a new card's folder gets a README). Returns the folder written."""
    runs = pd.read_csv(os.path.join(folder, "same_run_card.csv"))
    if (runs["backend"] == "simulator").any() and not simulator:
        sys.exit("install_final: same_run_card.csv holds rows measured on the simulator, not on a GPU: nothing "
                 "written (--simulator accepts them)")
    first = runs.iloc[0].where(runs.iloc[0].notna(), "")  # a blank (no driver read) stays blank
    target = pathlib.Path(data_root) / str(first["card"])
    target.mkdir(parents=True, exist_ok=True)
    table = summarized(folder)
    table.to_csv(target / "shapes.csv", index=False)
    timed = runs[runs["shape"] != "odd"]
    ours = set(timed["kernel"]) - {"cublas", "triton", "best"}
    versions = ", ".join(f"{name} {first[name]}" for name in ("numba", "numba_cuda", "numpy", "torch", "triton")
                         if first.get(name, ""))
    paragraph = "\n".join([CARD_BEGIN, f"shapes.csv: the same-run table of this card (`python3 tools/same_run.py "
                            f"--set card`, installed by `python tools/install_final.py`), measured {first['date']} on "
                            f"{first['device']} (compute capability {first['compute_capability']}, {first['sms']} SMs, "
                            f"driver {first.get('driver', '')}); {versions}. {timed['run'].nunique()} interleaved "
                            f"rounds over {timed['shape'].nunique()} shapes: cuBLAS (torch, TF32 off), Triton "
                            f"(autotuned), `best` (the model's choice on this card, in `config`) and {len(ours)} "
                            f"kernels ({', '.join(sorted(ours))}); every row with its point's median, min, max and "
                            f"spread of % of cuBLAS over the rounds.", CARD_END])
    path = target / "README.md"
    text = path.read_text() if path.exists() else f"# Reference measurements from one {first['device']}\n"
    path.write_text(readme(text, paragraph, CARD_BEGIN, CARD_END))
    print(f"wrote {target / 'shapes.csv'} ({len(table)} rows) and the card-run paragraph of {path}")
    return target


def report(tables):
    """Lines saying what each table holds: runs per shape, failed checks, tune's choices, profiled launches."""
    lines = []
    if "shapes.csv" in tables:
        t = tables["shapes.csv"]
        runs = t.groupby("shape")["run"].nunique()
        lines.append(f"shapes.csv: {t['run'].nunique()} runs; runs per shape {runs.to_dict()}")
    if "shapes_checked.csv" in tables:
        t = tables["shapes_checked.csv"]
        bad = t[t["odd_rel_err"].isna() | (t["odd_rel_err"] > 1e-5)]["kernel"].tolist()
        lines.append(f"shapes_checked.csv: {len(t)} kernels checked on the odd shapes; wrong or not compiled: {bad}")
    if "tune.csv" in tables:
        t = tables["tune.csv"]
        chosen = t[t["chosen"].astype(str) == "True"][["M", "K", "N", "kernel"]]
        lines.append(f"tune.csv: {len(t)} rows; chosen: {chosen.to_dict('records')}")
    if "shapes_profile.csv" in tables:
        t = tables["shapes_profile.csv"]
        lines.append(f"shapes_profile.csv: {list(zip(t['kernel'], t['N']))}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive", help="final.tar.gz as the GPU run left it in $OUT (final.log beside it), or the "
                        "folder of a card run (same_run_card.csv)")
    parser.add_argument("--data", help="the data folder (default: tiledlab/data/h200; a card run: tiledlab/data, "
                        "into its card's folder)")
    parser.add_argument("--simulator", action="store_true", help="accept rows measured on the simulator")
    args = parser.parse_args()
    if os.path.isdir(args.archive):
        return card_run(args.archive, args.data or DATA.parent, args.simulator)
    args.data = args.data or str(DATA)
    data = pathlib.Path(args.data)
    log_path = pathlib.Path(args.archive).with_name("final.log")
    with tempfile.TemporaryDirectory() as work:
        with tarfile.open(args.archive) as tar:
            tar.extractall(work, filter="data")
        tables = {"shapes.csv": summarized(work)}
        tables.update({name: pd.read_csv(os.path.join(work, src)) for src, name in FILES.items()
                       if os.path.exists(os.path.join(work, src))})
        tables = {name: t for name, t in tables.items() if t is not None and len(t)}
        simulated = [name for name, t in tables.items() if "backend" in t and (t["backend"] == "simulator").any()]
        if simulated and not args.simulator:
            sys.exit(f"install_final: {', '.join(simulated)} hold rows measured on the simulator, not on a GPU: "
                     "nothing written (--simulator accepts them)")
        for name, t in tables.items():
            t.to_csv(data / name, index=False)
            print(f"wrote {data / name} ({len(t)} rows)")
        missing = sorted({"shapes.csv", *FILES.values()} - set(tables))
        paragraph = provenance(work, log_path.read_text() if log_path.exists() else "")
    readme_path = data / "README.md"
    if readme_path.exists():
        readme_path.write_text(readme(readme_path.read_text(), paragraph))
        print(f"wrote the final run's provenance into {readme_path}")
    print("\n".join(report(tables)))
    if missing:
        print(f"missing (the run did not produce them): {', '.join(missing)}")


if __name__ == "__main__":
    main()
