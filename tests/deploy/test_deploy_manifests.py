"""Checks Brigade's packaging without a cluster or a container engine.

* tests/deploy/validate.mjs passes on deploy/ (Kubernetes OpenAPI schemas, KServe structural
  schemas, cross-references, PromQL through promtool) and fails on broken copies of it;
* every metric the Grafana dashboard and the prometheus-adapter rules read is exported by the real
  server's /metrics on the demo repository;
* the runtime image's file tree (deploy/docker/collect-runtime: the binary and its ldd libraries)
  runs on its own: under chroot it prints --help and serves the demo models, and the Dockerfile's
  HEALTHCHECK command tells ready from not.

Needs node with tests/node_modules (scripts/setup runs `npm ci`), promtool, and root for chroot
and unshare (CI runs as root).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY, ROOT, BrigadeProcess, free_port  # noqa: E402

VALIDATOR = os.path.join(ROOT, "tests", "deploy", "validate.mjs")
IDENTITY_REQUEST = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                                           "data": list(range(16))}]}).encode()


def run_validator(root=ROOT, metrics_out=None):
    args = ["node", VALIDATOR, "--root", root]
    if metrics_out:
        args += ["--metrics-out", metrics_out]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    print(result.stdout, result.stderr)
    return result


def post(url, body, timeout=10):
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, json.loads(response.read())


def exported_families(metrics_text):
    """Metric family name -> type, from the exposition's `# TYPE` lines."""
    families = {}
    for line in metrics_text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            families[name] = kind
    return families


def test_validator_passes_on_the_deploy_files(tmp_path):
    result = run_validator(metrics_out=str(tmp_path / "metrics.json"))
    assert result.returncode == 0, result.stdout
    assert re.search(r"^validate: \d+ passed, 0 failed$", result.stdout, re.M)


@pytest.fixture
def deploy_copy(tmp_path):
    """A copy of the repository's deploy/ (and tests/deploy, for the validator's schemas)."""
    shutil.copytree(os.path.join(ROOT, "deploy"), tmp_path / "deploy")
    return tmp_path


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("file, old, new, expected", [
    # Kubernetes' own schema: a port must be an integer.
    ("kubernetes/deployment.yaml", "containerPort: 8000", "containerPort: eight-thousand",
     "containerPort must be integer"),
    # A Service whose target port no container declares.
    ("kubernetes/service.yaml", "targetPort: grpc", "targetPort: grpcs",
     "targetPort 'grpcs' is not a container port"),
    # A misspelt KServe field (the structural schema is closed).
    ("kserve/clusterservingruntime.yaml", "protocolVersions:", "protocolVersion:",
     "must NOT have additional properties 'protocolVersion'"),
    # An HPA metric no adapter rule publishes.
    ("kubernetes/horizontalpodautoscaler.yaml", "name: brigade_queue_length",
     "name: brigade_queue_depth", "'brigade_queue_depth' is not published"),
    # A dashboard query that is not PromQL.
    ("grafana/brigade.json", "sum by (pod) (brigade_queue_length", "sum by (pod) (brigade_queue_length(",
     "promtool check rules"),
])
def test_validator_fails_on_a_broken_copy(deploy_copy, file, old, new, expected):
    edit(deploy_copy / "deploy" / file, old, new)
    result = run_validator(root=str(deploy_copy))
    assert result.returncode == 1
    failures = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert any(expected in line for line in failures), failures


def test_every_metric_the_dashboard_and_adapter_read_is_exported(tmp_path):
    used_file = tmp_path / "metrics.json"
    assert run_validator(metrics_out=str(used_file)).returncode == 0
    used = json.loads(used_file.read_text())
    assert "brigade_queue_length" in used  # the HPA's metric, through the adapter
    with BrigadeProcess() as server:
        # One answered request, so per-request series exist as well as their families.
        assert post(server.http_url + "/v2/models/identity/infer", IDENTITY_REQUEST)[0] == 200
        with urllib.request.urlopen(server.http_url + "/metrics", timeout=10) as response:
            text = response.read().decode()
    families = exported_families(text)
    missing = []
    for name in used:
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if name in families or (base != name and families.get(base) == "histogram"):
            continue
        missing.append(name)
    assert not missing, f"read by deploy/ but not exported: {missing}"


# ---- the runtime image's file tree ---------------------------------------------------------

def healthcheck_command():
    """The Dockerfile's HEALTHCHECK CMD (shell form, continuation lines joined)."""
    with open(os.path.join(ROOT, "deploy", "docker", "Dockerfile")) as f:
        text = f.read().replace("\\\n", " ")
    match = re.search(r"^HEALTHCHECK .*? CMD (.*)$", text, re.M)
    assert match, "no HEALTHCHECK ... CMD line in the Dockerfile"
    return match.group(1).strip()


def run_healthcheck(port):
    env = dict(os.environ, BRIGADE_HTTP_PORT=str(port))
    return subprocess.run(["/bin/sh", "-c", healthcheck_command()], env=env, timeout=10,
                          capture_output=True).returncode


@pytest.fixture(scope="module")
def runtime_tree():
    if os.geteuid() != 0:
        pytest.fail("the runtime-tree tests need root (chroot, unshare); CI runs as root")
    tree = tempfile.mkdtemp(prefix="brigade-runtime-")
    try:
        subprocess.run([os.path.join(ROOT, "deploy", "docker", "collect-runtime"), BRIGADE_BIN,
                        DEMO_REPOSITORY, tree], check=True, timeout=300)
        yield tree
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def in_tree(tree, *command):
    """The command as the image would run it: the tree as /, with the kernel's /proc and /sys
    (a container has both; libtorch's cpuinfo reads them), in a mount namespace of its own so the
    mounts vanish with the process."""
    script = ('set -e; mkdir -p "$1/proc" "$1/sys"; mount --bind /proc "$1/proc"; '
              'mount --bind /sys "$1/sys"; root=$1; shift; exec chroot "$root" "$@"')
    return ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
            tree, *command]


def test_runtime_tree_holds_only_the_binary_libraries_and_models(runtime_tree):
    top = sorted(os.listdir(runtime_tree))
    assert top == ["lib", "lib64", "models", "tmp", "usr"] or top == ["lib", "models", "tmp", "usr"], top
    result = subprocess.run(in_tree(runtime_tree, "/usr/local/bin/brigade", "--help"),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "serve" in result.stdout


def test_runtime_tree_serves_the_demo_models_and_the_healthcheck_reads_ready(runtime_tree):
    http_port, grpc_port = free_port(), free_port()
    assert run_healthcheck(http_port) != 0  # nothing listens yet
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(in_tree(runtime_tree, "/usr/local/bin/brigade", "serve",
                                    "--model-repository", "/models", "--http-address", "127.0.0.1",
                                    "--http-port", str(http_port), "--grpc-address", "127.0.0.1",
                                    "--grpc-port", str(grpc_port)),
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while run_healthcheck(http_port) != 0:
            assert proc.poll() is None, "the server exited before it was ready"
            assert time.monotonic() < deadline, "not ready within 120 s"
            time.sleep(0.2)
        status, answer = post(f"http://127.0.0.1:{http_port}/v2/models/identity/infer",
                              IDENTITY_REQUEST)
        assert status == 200 and answer["outputs"][0]["data"] == list(range(16))
        image = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                             "data": [0.5] * 784}]}
        status, answer = post(f"http://127.0.0.1:{http_port}/v2/models/fashion_mnist_onnx/infer",
                              json.dumps(image).encode())
        assert status == 200 and answer["outputs"][0]["shape"] == [1, 10]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.seek(0)
        print(log.read().decode(errors="replace")[-4000:])
