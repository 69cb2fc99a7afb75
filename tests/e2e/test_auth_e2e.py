"""End-to-end tests of access control: the real binary with --auth-token-file, Triton's
restricted-API flag and --allowed-hosts, curl as the client; the token file rotated with SIGHUP.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

import pytest

from brigade_process import BRIGADE_BIN, BrigadeProcess, free_port
from test_http_e2e import curl

ADD_SUB = """
backend: "brigade"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
parameters { key: "op" value { string_value: "add_sub" } }
"""

INFER_TOKEN = "e2e-infer-token-0123456789"
ADMIN_TOKEN = "e2e-admin-token-0123456789"
METRICS_TOKEN = "e2e-metrics-token-012345678"


@pytest.fixture
def workdir():
    path = tempfile.mkdtemp(prefix="brigade-auth-e2e-")
    os.makedirs(os.path.join(path, "repo", "simple", "1"))
    with open(os.path.join(path, "repo", "simple", "config.pbtxt"), "w") as f:
        f.write(ADD_SUB)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def write_tokens(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def bearer(token):
    return f"Authorization: Bearer {token}"


def explicit_args(workdir, *extra):
    return ["--model-control-mode", "explicit", "--load-model", "simple", *extra]


def test_a_token_file_others_may_read_stops_the_server(workdir):
    tokens = os.path.join(workdir, "tokens")
    write_tokens(tokens, f"infer {INFER_TOKEN} app\n", mode=0o644)
    result = subprocess.run(
        [BRIGADE_BIN, "serve", "--model-repository", os.path.join(workdir, "repo"),
         "--http-address", "127.0.0.1", "--http-port", str(free_port()),
         "--grpc-address", "127.0.0.1", "--grpc-port", str(free_port()),
         "--auth-token-file", tokens],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "chmod 600" in result.stdout + result.stderr
    assert INFER_TOKEN not in result.stdout + result.stderr


def test_scopes_over_http_and_a_token_rotated_with_sighup(workdir):
    tokens = os.path.join(workdir, "tokens")
    write_tokens(tokens, f"infer {INFER_TOKEN} app\nadmin {ADMIN_TOKEN} ops\n"
                         f"metrics {METRICS_TOKEN} prometheus\n")
    with BrigadeProcess(os.path.join(workdir, "repo"),
                        explicit_args(workdir, "--auth-token-file", tokens)) as server:
        url = server.http_url
        status, headers, _ = curl(url + "/v2/models/simple")
        assert status == 401 and headers["www-authenticate"].startswith("Bearer")
        assert curl(url + "/v2/models/simple", headers=[bearer(INFER_TOKEN)])[0] == 200
        status, headers, body = curl(url + "/v2/repository/models/simple/unload", "",
                                     headers=[bearer(INFER_TOKEN)], method="POST")
        assert status == 403 and 'scope="admin"' in headers["www-authenticate"], body
        status, _, metrics = curl(url + "/metrics", headers=[bearer(METRICS_TOKEN)])
        assert status == 200
        assert (b'brigade_auth_refusals_total{protocol="http",reason="missing_token"} 1'
                in metrics)
        assert b'brigade_auth_refusals_total{protocol="http",reason="scope"} 1' in metrics

        rotated = "e2e-rotated-token-0123456789"
        write_tokens(tokens, f"infer {rotated} app\n")
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while curl(url + "/v2/models/simple", headers=[bearer(rotated)])[0] != 200:
            assert time.monotonic() < deadline, server.logs()
            time.sleep(0.1)
        assert curl(url + "/v2/models/simple", headers=[bearer(INFER_TOKEN)])[0] == 401

        # A bad new file keeps the tokens in force.
        write_tokens(tokens, "infer short app\n")
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "keeping the tokens in force" not in server.logs():
            assert time.monotonic() < deadline, server.logs()
            time.sleep(0.1)
        assert curl(url + "/v2/models/simple", headers=[bearer(rotated)])[0] == 200
        logs = server.logs()
    assert INFER_TOKEN not in logs and rotated not in logs


def test_tritons_restricted_api_flag_and_allowed_hosts(workdir):
    args = explicit_args(workdir, "--http-restricted-api=model-repository:admin-key=s3cret",
                         "--allowed-hosts", "127.0.0.1")
    with BrigadeProcess(os.path.join(workdir, "repo"), args) as server:
        url = server.http_url
        status, _, body = curl(url + "/v2/repository/index", "{}", method="POST",
                               headers=["Content-Type: application/json"])
        assert status == 403 and b"restricted" in body
        status, _, body = curl(url + "/v2/repository/index", "{}", method="POST",
                               headers=["Content-Type: application/json", "admin-key: s3cret"])
        assert status == 200, body
        assert curl(url + "/v2/models/simple/ready")[0] == 200
        assert curl(url + "/v2", headers=["Host: rebound.attacker.example"])[0] == 403


def test_a_cross_site_text_plain_post_cannot_unload_a_model(workdir):
    with BrigadeProcess(os.path.join(workdir, "repo"), explicit_args(workdir)) as server:
        url = server.http_url
        status, _, _ = curl(url + "/v2/repository/models/simple/unload", "{}",
                            headers=["Content-Type: text/plain"], method="POST")
        assert status == 415
        status, _, _ = curl(url + "/v2/repository/models/simple/unload", "",
                            headers=["Origin: http://attacker.example"], method="POST")
        assert status == 403
        assert curl(url + "/v2/models/simple/ready")[0] == 200


def test_explicit_mode_beyond_loopback_without_a_credential_warns(workdir):
    http_port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="brigade-auth-warn-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [BRIGADE_BIN, "serve", "--model-repository", os.path.join(workdir, "repo"),
         "--http-address", "0.0.0.0", "--http-port", str(http_port), "--allow-grpc", "false",
         *explicit_args(workdir)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None and time.monotonic() < deadline
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/v2/health/ready",
                                            timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    with open(log.name) as f:
        text = f.read()
    os.unlink(log.name)
    assert "no credential configured" in text, text


def test_brigade_bench_sends_its_token_over_http_and_grpc(workdir):
    tokens = os.path.join(workdir, "tokens")
    write_tokens(tokens, f"infer {INFER_TOKEN} app\n")
    client_token = os.path.join(workdir, "client-token")
    write_tokens(client_token, INFER_TOKEN + "\n")
    with BrigadeProcess(os.path.join(workdir, "repo"),
                        ["--auth-token-file", tokens]) as server:
        runs = [
            (["-i", "http", "-u", server.http_url, "--auth-token-file", client_token], {}),
            (["-i", "grpc", "-u", server.grpc_target], {"BRIGADE_TOKEN": INFER_TOKEN}),
        ]
        for args, env in runs:
            result = subprocess.run(
                [BRIGADE_BIN, "bench", "-m", "simple", "--requests", "20", "--warmup-requests",
                 "0", "-f", "json", "--no-progress", *args],
                capture_output=True, text=True, timeout=120, env={**os.environ, **env})
            assert result.returncode == 0, result.stdout + result.stderr
            level = json.loads(result.stdout)["levels"][0]
            assert level["ok"] == 20 and level["failed"] == 0, result.stdout
        # Without a token every request is refused.
        result = subprocess.run(
            [BRIGADE_BIN, "bench", "-m", "simple", "--requests", "5", "--warmup-requests", "0",
             "-f", "json", "--no-progress", "-u", server.http_url],
            capture_output=True, text=True, timeout=120,
            env={k: v for k, v in os.environ.items() if k != "BRIGADE_TOKEN"})
        assert result.returncode != 0 or json.loads(result.stdout)["levels"][0]["ok"] == 0


REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def test_brigade_analyze_sends_its_token_to_the_servers_it_starts(workdir):
    tokens = os.path.join(workdir, "tokens")
    write_tokens(tokens, f"infer {INFER_TOKEN} app\n")
    client_token = os.path.join(workdir, "client-token")
    write_tokens(client_token, INFER_TOKEN + "\n")

    def analyze(out, *args):
        return subprocess.run(
            [BRIGADE_BIN, "analyze", os.path.join(REPO_ROOT, "models", "fashion_mnist_onnx"),
             "--eval-inputs", f"{FASHION_MNIST}/t10k-images-idx3-ubyte.gz",
             "--eval-labels", f"{FASHION_MNIST}/t10k-labels-idx1-ubyte.gz", "--eval-limit", "64",
             "--max-batch", "1", "--concurrency", "1", "--warmup-s", "0", "--duration-s", "0.3",
             "--load-samples", "2", "--no-progress", "-o", os.path.join(workdir, out),
             "--serve-arg=--pin-threads=false", f"--serve-arg=--auth-token-file={tokens}", *args],
            capture_output=True, text=True, timeout=180,
            env={k: v for k, v in os.environ.items() if k != "BRIGADE_TOKEN"})

    result = analyze("with-token", "--auth-token-file", client_token)
    assert result.returncode == 0, result.stdout + result.stderr
    with open(os.path.join(workdir, "with-token", "analysis.json")) as f:
        analysis = json.load(f)
    # Readiness, metadata, the 64 accuracy examples and the load all went through with the token.
    assert analysis["variants"][0]["examples"] == 64, analysis["variants"]
    assert analysis["points"] and all(p["ok"] > 0 and p["failed"] == 0
                                      for p in analysis["points"]), analysis["points"]

    # Without one the servers refuse it: no point is measured, and the error says why.
    result = analyze("without-token")
    assert result.returncode != 0
    assert "401" in result.stdout + result.stderr or "token" in result.stdout + result.stderr, (
        result.stdout + result.stderr)
