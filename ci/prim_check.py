"""Check the report's PRIM box against the EMA Workbench on the same runs.

    python ci/prim_check.py OUT_DIR...

Reads OUT_DIR/runs/*.parquet and the grid's dimensions from
OUT_DIR/manifest.json, builds the same table the report gives PRIM (every
axis path; floats as floats, integers as integers, anything else, or a
number column with nulls, as categories; the outcome is the grid's
`[report] prim` expression, evaluated here on its own in SQL's
three-valued logic (comparisons of a metric with a number, a bare metric
true when non-zero, `and`, `or`, `not`, parentheses; a null metric is
unknown), or "not recovered" without one; runs without a verdict left
out), then:

1. recomputes the coverage, density and mass of the reported box
   (OUT_DIR/analysis/prim_trajectory.csv, prim_limits.csv) from the runs
   table itself: they must agree within 1e-9;
2. if `ema_workbench` imports, runs its `Prim` (one box, its defaults),
   picks from its trajectory the box the report's rule picks (the highest
   harmonic mean of coverage and density), and requires the same restricted
   parameters, numeric limits within one sample step (the gap between the
   parameter's adjacent distinct values there), the same categories, and
   coverage and density within 0.01.

Exit status 1 with every difference listed, 0 when all agree (for every
OUT_DIR given).
"""

import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore")


def number(v):
    """A number as the report writes a level (`200`, not `200.0`)."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


TOKEN = re.compile(r"\s*(?:(<=|>=|==|!=|<|>|\(|\))|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z0-9_.]*))")


def outcome(expr, runs):
    """The grid's outcome per run as a nullable boolean (NA: unknown), by
    recursive descent: or > and > not > comparison."""
    tokens, at = [], 0
    while at < len(expr.rstrip()):
        m = TOKEN.match(expr, at)
        if not m or m.end() == at:
            sys.exit(f"prim expression {expr!r}: cannot read it at {expr[at:]!r}")
        tokens.append(m.group(1) or m.group(2) or m.group(3))
        at = m.end()
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def metric(name):
        if name not in runs.columns:
            sys.exit(f"prim expression {expr!r}: no column {name!r} in the runs table")
        return runs[name].astype("Float64")

    def atom():
        t = take()
        if t == "(":
            v = disjunction()
            if take() != ")":
                sys.exit(f"prim expression {expr!r}: a parenthesis is not closed")
            return v
        if t == "not":
            return ~atom()
        col = metric(t)
        op = peek()
        if op in ("<", "<=", ">", ">=", "==", "!="):
            take()
            x = float(take())
            return {"<": col < x, "<=": col <= x, ">": col > x, ">=": col >= x, "==": col == x, "!=": col != x}[op]
        return col != 0

    def conjunction():
        v = atom()
        while peek() == "and":
            take()
            v = v & atom()
        return v

    def disjunction():
        v = conjunction()
        while peek() == "or":
            take()
            v = v | conjunction()
        return v

    v = disjunction()
    if pos != len(tokens):
        sys.exit(f"prim expression {expr!r}: unexpected {tokens[pos]!r}")
    return v.astype("boolean")


def load(out):
    manifest = json.loads((out / "manifest.json").read_text())
    expr = (manifest.get("report") or {}).get("prim") or "not recovered"
    paths = [p for dim in manifest.get("dimensions") or [[a] for a in manifest["axes"]] for p in dim]
    runs = pd.read_parquet(out / "runs").sort_values("run_index").reset_index(drop=True)
    verdict = outcome(expr, runs)
    print(f"outcome: {expr} ({int(verdict.isna().sum())} of {len(runs)} runs without a verdict, left out)")
    runs = runs[verdict.notna().to_numpy()].reset_index(drop=True)
    y = verdict[verdict.notna()].to_numpy(dtype=bool)
    x = pd.DataFrame(index=runs.index)
    kinds = {}
    for p in paths:
        c = runs[p]
        if c.isna().any() or not pd.api.types.is_numeric_dtype(c) or pd.api.types.is_bool_dtype(c):
            labels = c.map(lambda v: "unbounded" if pd.isna(v) else (str(v) if isinstance(v, (str, bool, np.bool_)) else number(v)))
            x[p] = labels.astype(str)
            kinds[p] = "categorical"
        elif pd.api.types.is_integer_dtype(c):
            x[p] = c.astype(np.int64)
            kinds[p] = "integer"
        else:
            x[p] = c.astype(float)
            kinds[p] = "real"
    return x, y, kinds


def reported(out):
    trajectory = pd.read_csv(out / "analysis" / "prim_trajectory.csv")
    limits = pd.read_csv(out / "analysis" / "prim_limits.csv")
    chosen = trajectory[trajectory["chosen"]].iloc[0]
    box = {}
    for _, r in limits[limits["box"] == chosen["box"]].iterrows():
        if r["kind"] == "categorical":
            box[r["parameter"]] = set(str(r["categories"]).split("|"))
        else:
            box[r["parameter"]] = (float(r["low"]), float(r["high"]))
    return chosen, box


def inside(x, box):
    keep = np.ones(len(x), dtype=bool)
    for p, lim in box.items():
        if isinstance(lim, set):
            keep &= x[p].astype(str).isin(lim).to_numpy()
        else:
            v = x[p].astype(float).to_numpy()
            keep &= (lim[0] <= v) & (v <= lim[1])
    return keep


def step(values, limit):
    """The gap between the distinct values on either side of `limit`."""
    d = np.unique(values.astype(float))
    if len(d) < 2:
        return 0.0
    i = np.searchsorted(d, limit)
    lo = d[max(i - 1, 0)]
    hi = d[min(i, len(d) - 1)]
    gaps = [hi - lo] if hi > lo else []
    if i + 1 < len(d):
        gaps.append(d[i + 1] - d[i])
    if i - 2 >= 0:
        gaps.append(d[i - 1] - d[i - 2])
    return max(gaps) if gaps else 0.0


def workbench_box(x, y, kinds):
    """The Workbench's trajectory box that the report's rule picks, or None
    if ema_workbench is not installed."""
    try:
        from ema_workbench.analysis import prim
    except ImportError:
        return None
    if not hasattr(np, "int"):  # ema_workbench 2.x pastes integers with np.int
        np.int = int
    xe = x.copy()
    for p, k in kinds.items():
        if k == "integer":
            # 2.x pastes only int32 columns as integers (int64 fails there).
            xe[p] = xe[p].astype(np.int32)
        elif k == "categorical":
            xe[p] = xe[p].astype("category")
    params = prim.Prim.__init__.__code__.co_varnames
    if "threshold" in params:  # 2.x: cases of interest are y >= threshold
        p = prim.Prim(xe, y.astype(float), threshold=1e-6)
    else:
        p = prim.Prim(xe, y)
    box = p.find_box()
    if box is None:
        return "no box"
    tr = box.peeling_trajectory
    cov, den = tr["coverage"].to_numpy(), tr["density"].to_numpy()
    f1 = np.where(cov + den > 0, 2 * cov * den / np.where(cov + den > 0, cov + den, 1), 0)
    i = int(np.argmax(f1))
    lims = box.box_lims[i]
    init = p.box_init
    out = {}
    for col in lims.columns:
        a, b = lims[col].iloc[0], lims[col].iloc[1]
        if kinds[col] == "categorical":
            if set(a) != set(init[col].iloc[0]):
                out[col] = set(map(str, a))
        elif a != init[col].iloc[0] or b != init[col].iloc[1]:
            out[col] = (float(a), float(b))
    return {"coverage": float(cov[i]), "density": float(den[i]), "box": out}


def main():
    failed = [out for out in sys.argv[1:] if not check(Path(out))]
    if failed:
        sys.exit(f"PRIM check failed for {', '.join(failed)}")


def check(out):
    """Whether the report's box in `out` agrees (every difference printed)."""
    print(f"{out}:")
    x, y, kinds = load(out)
    chosen, box = reported(out)
    problems = []
    keep = inside(x, box)
    n, k = int(keep.sum()), int((keep & y).sum())
    recomputed = {
        "coverage": k / max(int(y.sum()), 1),
        "density": k / n if n else 0.0,
        "mass": n / len(y),
    }
    for name, value in recomputed.items():
        if abs(value - float(chosen[name])) > 1e-9:
            problems.append(f"{name}: report {chosen[name]}, recomputed from the runs {value}")
    print(f"reported box {box}: coverage {chosen['coverage']:.4f}, density {chosen['density']:.4f}, mass {chosen['mass']:.4f} "
          f"(recomputed from {len(y)} runs: {recomputed['coverage']:.4f}, {recomputed['density']:.4f}, {recomputed['mass']:.4f})")

    ema = workbench_box(x, y, kinds) if 0 < y.sum() < len(y) else "nothing to find"
    if ema == "nothing to find":
        print("every run or none has the outcome: no box to compare")
    elif ema is None:
        print("ema_workbench is not installed: checked the box against the runs table only")
    elif ema == "no box":
        problems.append("the EMA Workbench found no box")
    else:
        print(f"EMA Workbench box {ema['box']}: coverage {ema['coverage']:.4f}, density {ema['density']:.4f}")
        for name in ("coverage", "density"):
            if abs(ema[name] - float(chosen[name])) > 0.01:
                problems.append(f"{name}: report {chosen[name]:.4f}, EMA Workbench {ema[name]:.4f}")
        if set(ema["box"]) != set(box):
            problems.append(f"restricted parameters: report {sorted(box)}, EMA Workbench {sorted(ema['box'])}")
        for p in set(ema["box"]) & set(box):
            ours, theirs = box[p], ema["box"][p]
            if isinstance(ours, set):
                if ours != theirs:
                    problems.append(f"{p}: report {sorted(ours)}, EMA Workbench {sorted(theirs)}")
                continue
            for side, a, b in (("lower", ours[0], theirs[0]), ("upper", ours[1], theirs[1])):
                if abs(a - b) > step(x[p].to_numpy(), a):
                    problems.append(f"{p} {side} limit: report {a}, EMA Workbench {b} (more than one sample step apart)")
    if problems:
        print("PRIM check failed:\n  " + "\n  ".join(problems))
        return False
    print("PRIM check passed")
    return True


if __name__ == "__main__":
    main()
