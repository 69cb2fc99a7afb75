"""The binary of the edge preset (CMakePresets.json: HTTP + ONNX engine, -Os, no gRPC): it serves
the demo ONNX model over HTTP, says it has no gRPC, and its cold start (process start -> ready ->
first answer) is printed. Runs against BRIGADE_BIN (scripts/edge points it at build-edge/brigade;
it passes on the full build too, which also serves gRPC).
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY, BrigadeProcess

MODEL = "fashion_mnist_onnx"


def infer(server):
    body = json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                                   "data": [0.5] * 784}]}).encode()
    request = urllib.request.Request(f"{server.http_url}/v2/models/{MODEL}/infer", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read())


def test_edge_binary_serves_the_demo_onnx_model_over_http():
    repo = tempfile.mkdtemp(prefix="brigade-edge-repo-")
    try:
        shutil.copytree(os.path.join(DEMO_REPOSITORY, MODEL), os.path.join(repo, MODEL))
        started = time.monotonic()
        server = BrigadeProcess(model_repository=repo, extra_args=["--pin-threads", "false"])
        with server:
            ready = time.monotonic()
            status, answer = infer(server)
            answered = time.monotonic()
            assert status == 200, answer
            assert len(answer["outputs"][0]["data"]) == 10
            has_grpc = "gRPC (KServe v2) listening" in server.logs()
            print(f"{BRIGADE_BIN}: {os.path.getsize(BRIGADE_BIN)} bytes; start -> ready "
                  f"{(ready - started) * 1e3:.0f} ms, -> first answer "
                  f"{(answered - started) * 1e3:.0f} ms; gRPC {'served' if has_grpc else 'absent'}")
            if not has_grpc:
                assert "gRPC: not in this build" in server.logs()
        out = subprocess.run([BRIGADE_BIN, "--help"], capture_output=True, text=True, timeout=30)
        assert "serve" in out.stdout
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def test_grpc_tls_flags_fail_the_start_rather_than_serve_plain_text():
    # The edge binary has no gRPC port to put a certificate on: it must say so and exit, not
    # start serving while the operator believes gRPC is encrypted. The full build fails the same
    # start for the missing files. Either way the server never becomes ready.
    repo = tempfile.mkdtemp(prefix="brigade-edge-tls-")
    try:
        out = subprocess.run(
            [BRIGADE_BIN, "serve", "--model-repository", repo, "--http-port", "0",
             "--grpc-port", "0", "--grpc-use-ssl", "true", "--grpc-server-cert",
             os.path.join(repo, "missing.crt"), "--grpc-server-key",
             os.path.join(repo, "missing.key")],
            capture_output=True, text=True, timeout=60)
        assert out.returncode != 0, out.stderr
        has_grpc = "bench" in subprocess.run([BRIGADE_BIN, "--help"], capture_output=True,
                                             text=True, timeout=30).stdout
        logs = out.stdout + out.stderr
        if has_grpc:
            assert "missing.crt" in logs, logs
        else:
            assert "need the gRPC front end, which this build lacks" in logs, logs
    finally:
        shutil.rmtree(repo, ignore_errors=True)
