"""Executes a notebook headless against one sweep output directory.

Usage: python ci/run_notebook.py NOTEBOOK OUT_DIR

The kernel ("python3", i.e. the ipykernel of the Python running this script)
starts in the notebook's directory with SWEEP_OUT=OUT_DIR (made absolute).
Every cell gets at most 600 s. The first cell that raises stops the run: its
error is printed and the exit code is 1. The executed notebook is not saved,
so the committed notebook keeps no outputs. On success it prints
"PASS: notebook <name> executed (<n> cells)", n being the code cells run.
"""

import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

CELL_TIMEOUT_S = 600
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    notebook, out_dir = Path(argv[1]).resolve(), Path(argv[2]).resolve()
    if not notebook.is_file():
        print(f"FAIL: no notebook {notebook}", file=sys.stderr)
        return 2
    if not (out_dir / "manifest.json").is_file():
        print(f"FAIL: {out_dir} has no manifest.json (not a sweep output directory)", file=sys.stderr)
        return 2

    nb = nbformat.read(notebook, as_version=4)
    code_cells = sum(1 for c in nb.cells if c.cell_type == "code")
    # The kernel inherits this process's environment.
    os.environ["SWEEP_OUT"] = str(out_dir)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(notebook.parent)}},
    )
    started = time.monotonic()
    try:
        client.execute()
    except CellExecutionError as e:
        # str(e) holds the failing cell's source and its traceback (ANSI colours stripped for CI logs).
        print(f"FAIL: notebook {notebook.name}: a cell raised\n{ANSI.sub('', str(e))}", file=sys.stderr)
        return 1
    except CellTimeoutError as e:
        print(f"FAIL: notebook {notebook.name}: a cell ran over {CELL_TIMEOUT_S} s\n{e}", file=sys.stderr)
        return 1
    except DeadKernelError as e:
        print(f"FAIL: notebook {notebook.name}: the kernel died\n{e}", file=sys.stderr)
        return 1
    print(f"ran in {time.monotonic() - started:.1f} s (kernel start included)")
    print(f"PASS: notebook {notebook.name} executed ({code_cells} cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
