"""One trial in its own process: ``python -m fpt.experiments.worker REQUEST.json`` (started by LocalExecutor).

The request names the trial (its config and store directory), the threads it may use and where to
write its result: ``{"status": "done" | "failed" | "busy", "note": ...}``. The trial itself is
``fpt.experiments.runner.run_planned``: ``fpt train --out STORE/KEY``, or ``--resume`` when the run
directory has a checkpoint, under the run directory's lock.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    request = json.loads(Path(argv[0]).read_text())
    result = Path(request["result"])
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch

    torch.set_num_threads(int(request.get("threads") or 1))
    from fpt import rundir
    from fpt.experiments.executors import one_line, planned_from_dict
    from fpt.experiments.runner import run_planned

    print(f"fpt worker pid {os.getpid()}: {request.get('label', '')}", flush=True)
    try:
        planned = planned_from_dict(request["trial"])
        run_planned(planned, progress=False)
        out, code = {"status": "done"}, 0
    except rundir.RunDirBusyError as exc:
        out, code = {"status": "busy", "note": str(exc)}, 75
    except Exception as exc:  # noqa: BLE001 - reported to the executor as this trial's failure
        traceback.print_exc()
        out, code = {"status": "failed", "note": one_line(exc)}, 1
    rundir.write_text(result, json.dumps(out))
    print(f"fpt worker: {out['status']}{': ' + out['note'] if out.get('note') else ''}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
