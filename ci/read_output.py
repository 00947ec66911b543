"""Reads a sweep's output the way a notebook would, with polars, pandas
(pyarrow) and DuckDB, and checks it against the Rust side's manifest: the
counts, the column types (string axes and `status` categorical), and the
description and unit of every column in each part's metadata.

Usage: python ci/read_output.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq

out = Path(sys.argv[1])
manifest = json.loads((out / "manifest.json").read_text())
runs_glob = str(out / "runs" / "*.parquet")
series_glob = str(out / "series" / "*.parquet")
ok, failed = manifest["ok"], manifest["failed"]
events_total = manifest["events_total"]
failures = []


def check(what, got, want):
    status = "ok " if got == want else "BAD"
    print(f"  [{status}] {what}: {got!r} (want {want!r})")
    if got != want:
        failures.append(what)


expected_columns = {
    "run_id": "str",
    "point_id": "str",
    "seed": "int",
    "status": "cat",
    "error": "str",
    "events": "int",
    "wall_ms": "float",
    "recovered": "bool",
    "recovery_s": "float",
    "success_rate_after": "float",
    "users": "int",
    "users_ok": "int",
}

print(f"polars {pl.__version__}")
runs = pl.read_parquet(runs_glob)
series = pl.scan_parquet(series_glob).select(pl.len()).collect().item()
series_runs = pl.scan_parquet(series_glob).select(pl.col("run_id").n_unique()).collect().item()
# The runs written: all those planned once the sweep is complete.
check("polars: runs rows", runs.height, ok + failed)
check("polars: ok runs", runs.filter(pl.col("status") == "ok").height, ok)
check("polars: sum(events) of ok runs", int(runs.filter(pl.col("status") == "ok")["events"].sum()), events_total)
check("polars: series covers every ok run", series_runs, ok)
kinds = {
    "str": lambda t: t == pl.String,
    "cat": lambda t: t == pl.Categorical,
    "int": lambda t: t.is_integer(),
    "float": lambda t: t.is_float(),
    "bool": lambda t: t == pl.Boolean,
}
for col, kind in expected_columns.items():
    check(f"polars: column {col} is {kind}", col in runs.columns and kinds[kind](runs.schema[col]), True)
for axis in manifest["axes"] + manifest["fixed"]:
    check(f"polars: axis column {axis}", axis in runs.columns, True)
    if axis in runs.columns and runs.schema[axis] in (pl.String, pl.Categorical):
        check(f"polars: string axis {axis} is categorical", runs.schema[axis], pl.Categorical)
check("polars: error is null exactly for ok runs", runs.filter(pl.col("error").is_null()).height, ok)

# Every column of every part is described, with a unit, in its metadata.
for table in ("runs", "series"):
    for part in sorted((out / table).glob("*.parquet")):
        meta = pq.read_metadata(part).metadata or {}
        docs = json.loads(meta.get(b"sweep.columns", b"[]"))
        names = pq.read_schema(part).names
        described = [d["name"] for d in docs if d.get("description") and "unit" in d]
        missing = [n for n in names if n not in described]
        check(f"pyarrow: {table}/{part.name} describes its {len(names)} columns, in order", described == names, True)
        check(f"pyarrow: {table} columns without a description", missing, [])
        break

print(f"pandas {pd.__version__}")
frame = pd.concat([pd.read_parquet(p) for p in sorted((out / "runs").glob("*.parquet"))])
check("pandas: runs rows", len(frame), ok + failed)
check("pandas: failed runs", int((frame["status"] == "failed").sum()), failed)
check("pandas: sum(events) of ok runs", int(frame.loc[frame["status"] == "ok", "events"].sum()), events_total)
check("pandas: run_id unique", frame["run_id"].is_unique, True)
first = pd.read_parquet(sorted((out / "runs").glob("*.parquet"))[0])
check("pandas: status is a category", str(first["status"].dtype), "category")

print(f"duckdb {duckdb.__version__}")
con = duckdb.connect()
rows = con.execute(f"select count(*), count(distinct run_id) from read_parquet('{runs_glob}')").fetchall()
check("duckdb: runs rows, distinct ids", rows[0], (ok + failed, ok + failed))
events = con.execute(f"select sum(events) from read_parquet('{runs_glob}') where status = 'ok'").fetchall()
check("duckdb: sum(events) of ok runs", int(events[0][0] or 0), events_total)
joined = con.execute(
    f"select count(*) from read_parquet('{series_glob}') s join read_parquet('{runs_glob}') r using (run_id)"
).fetchall()
check("duckdb: every series row joins its run", joined[0][0], series)
described = con.execute(
    f"select count(*) from parquet_kv_metadata('{runs_glob}') where key = 'sweep.columns'"
).fetchall()
check("duckdb: every runs part has its column descriptions", described[0][0], len(list((out / "runs").glob("*.parquet"))))

if failures:
    print(f"FAIL: {len(failures)} check(s) failed: {', '.join(failures)}")
    sys.exit(1)
print("PASS: polars, pandas and duckdb read the sweep and agree with the manifest")
