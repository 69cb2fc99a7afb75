"""The binary of the edge preset (CMakePresets.json: HTTP + ONNX engine, -Os, no gRPC, no Redis):
it serves the demo ONNX model over HTTP, says it has no gRPC, refuses every request for the Redis
cache tier, and its cold start (process start -> ready -> first answer) is printed. Runs against
BRIGADE_BIN (scripts/edge points it at build-edge/brigade; it passes on the full build too, which
also serves gRPC and has the Redis tier).
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY, BrigadeProcess, free_port

MODEL = "fashion_mnist_onnx"


def infer(server):
    body = json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                                   "data": [0.5] * 784}]}).encode()
    request = urllib.request.Request(f"{server.http_url}/v2/models/{MODEL}/infer", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read())


def serve_help():
    return subprocess.run([BRIGADE_BIN, "serve", "--help"], capture_output=True, text=True,
                          timeout=30).stdout


def has_redis():
    """A build without Redis says so in the help of --cache-redis-address."""
    return "built without Redis" not in serve_help()


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
                  f"{(answered - started) * 1e3:.0f} ms; gRPC {'served' if has_grpc else 'absent'}, "
                  f"Redis tier {'in the build' if has_redis() else 'absent'}")
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


def test_redis_asked_of_a_build_without_it_fails_the_start():
    # A build without Redis (the edge preset) has no shared tier: serving from memory alone would
    # leave the operator believing the instances share answers and invalidations. Both ways of
    # asking, the flag and a model's config, must stop the start with the reason. The full build
    # serves both (unreachable Redis: lookups count as misses until it answers).
    root = tempfile.mkdtemp(prefix="brigade-edge-redis-")
    repo, empty = os.path.join(root, "models"), os.path.join(root, "empty")
    os.mkdir(empty)
    try:
        shutil.copytree(os.path.join(DEMO_REPOSITORY, MODEL), os.path.join(repo, MODEL))
        with open(os.path.join(repo, MODEL, "config.pbtxt"), "a") as config:
            config.write("response_cache {\n  enable: true\n  tier: TIER_BOTH\n}\n")
        base = [BRIGADE_BIN, "serve", "--http-port", "0", "--grpc-port", "0",
                "--pin-threads", "false"]
        if has_redis():
            address = f"127.0.0.1:{free_port()}"  # nothing listens there
            server = BrigadeProcess(model_repository=repo, extra_args=[
                "--pin-threads", "false", "--cache-redis-address", address])
            with server:
                status, answer = infer(server)
                assert status == 200, answer
                assert "not reachable yet" in server.logs()
            return
        flag = subprocess.run(base + ["--model-repository", empty,
                                      "--cache-redis-address", "127.0.0.1:6379"],
                              capture_output=True, text=True, timeout=60)
        logs = flag.stdout + flag.stderr
        assert flag.returncode != 0, logs
        assert "--cache-redis-address needs the Redis tier" in logs, logs
        assert "built without Redis" in logs, logs
        config = subprocess.run(base + ["--model-repository", repo], capture_output=True,
                                text=True, timeout=60)
        logs = config.stdout + config.stderr
        assert config.returncode != 0, logs
        assert f"model '{MODEL}': response cache tier 'both' needs Redis" in logs, logs
        assert "built without Redis" in logs, logs
    finally:
        shutil.rmtree(root, ignore_errors=True)
