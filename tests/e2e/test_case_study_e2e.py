"""End to end: demo/case_study/run's machinery on toy encoders (`--tiny --quick`).

The demo itself (BERT-base, ~4 minutes on 2 cores) is measured, not tested; this runs the same
script on encoders of the same code at hidden 64 (2 and 1 layers): generation with the
TorchScript trace, `brigade optimize quantize --mode dynamic`, the repository with the cache and
the router, `brigade serve`, `brigade bench` with a Zipf workload, and the agreement check, and
checks that every step printed its row, the router sent new users to the small model, the
TorchScript and ONNX fp32 answers agree with torch, and the server was stopped. ~15 s.
"""

import os
import re
import subprocess
import tempfile

from brigade_process import BRIGADE_BIN, ROOT

SCRIPT = os.path.join(ROOT, "demo", "case_study", "run")


def test_case_study_runs_every_step_on_tiny_encoders():
    with tempfile.TemporaryDirectory(prefix="case-study-") as work:
        done = subprocess.run(
            [SCRIPT, "--tiny", "--quick", "--work", work, "--pool", "16"],
            env=dict(os.environ, BRIGADE=BRIGADE_BIN), capture_output=True, text=True,
            timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        out = done.stdout
        for step in ("(a) TorchScript fp32", "(b) ONNX fp32", "(c) + INT8", "(d) + response cache",
                     "(e) + router"):
            assert re.search(re.escape(step) + r".*\d", out), step
        # fp32 served both ways agrees with torch on the same inputs.
        for step in ("(a) TorchScript fp32", "(b) ONNX fp32"):
            line = next(l for l in out.splitlines() if l.strip().startswith(step) and "cos " in l)
            assert float(re.search(r"cos (\d\.\d+)", line).group(1)) > 0.9999, line
        assert "routed_to: returning ['bert_int8_cached:1'], new ['distil_int8_cached:1']" in out
        assert 'variant="distil",reason="rule"' in out
        # The server the script started is gone (its port answers nothing).
        port = re.search(r"--http-port (\d+)", out).group(1)
        probe = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                f"http://127.0.0.1:{port}/v2/health/live"],
                               capture_output=True, text=True)
        assert probe.stdout in ("000", ""), probe.stdout
