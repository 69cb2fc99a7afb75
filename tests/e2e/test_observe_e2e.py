"""End-to-end tests of observability: /metrics (checked by promtool), W3C trace context in over
HTTP headers and gRPC metadata, OTLP/HTTP JSON export received by a collector this test runs, the
JSON-lines trace file and access log, the statistics extension's stage summary, and the live
dashboard opened in headless Chromium and compared with /metrics.

The server is the real binary on loopback ports; the clients are urllib, curl, Python grpcio and
Chromium, never Brigade's own code.
"""

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import grpc
import pytest

import grpc_client_test
from brigade_process import DEMO_REPOSITORY, BrigadeProcess, free_port
from test_http_e2e import post_json

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS_DIR = os.path.dirname(HERE)
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
IDENTITY_BODY = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                             "data": [float(i) for i in range(16)]}]}


class Collector(http.server.ThreadingHTTPServer):
    """An OTLP/HTTP JSON receiver: keeps every POSTed body."""

    def __init__(self):
        self.bodies = []
        self.paths = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), CollectorHandler)

    def spans(self):
        with self.lock:
            bodies = list(self.bodies)
        out = []
        for body in bodies:
            for resource_spans in body["resourceSpans"]:
                for scope_spans in resource_spans["scopeSpans"]:
                    out.extend(scope_spans["spans"])
        return out


class CollectorHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        with self.server.lock:
            self.server.bodies.append(body)
            self.server.paths.append((self.path, self.headers.get("Content-Type")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def collector():
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def workdir():
    path = tempfile.mkdtemp(prefix="brigade-observe-e2e-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def repository(workdir):
    """Only the trivial model: these tests are about the serving path, not the model."""
    repo = os.path.join(workdir, "models")
    os.makedirs(repo)
    # Copied, not linked: a model directory linked from outside the repository is refused.
    shutil.copytree(os.path.join(DEMO_REPOSITORY, "identity"), os.path.join(repo, "identity"))
    # A router splitting its traffic over two variants (both the identity model), for the
    # dashboard's per-variant table.
    os.makedirs(os.path.join(repo, "identity_split", "1"))
    with open(os.path.join(repo, "identity_split", "config.pbtxt"), "w") as f:
        f.write('name: "identity_split"\nplatform: "brigade_router"\nrouting {\n'
                '  variant { name: "a" model_name: "identity" }\n'
                '  variant { name: "b" model_name: "identity" }\n'
                '  split { variant: "a" weight: 3 }\n  split { variant: "b" weight: 1 }\n}\n')
    # A two-step ensemble (identity twice), for the trace's span per step.
    os.makedirs(os.path.join(repo, "identity_twice", "1"))
    with open(os.path.join(repo, "identity_twice", "config.pbtxt"), "w") as f:
        f.write(IDENTITY_TWICE)
    return repo


IDENTITY_TWICE = """
name: "identity_twice"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 16 ] } ]
ensemble_scheduling {
  step [
    { model_name: "identity" model_version: -1
      input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "MID" } },
    { model_name: "identity" model_version: -1
      input_map { key: "INPUT0" value: "MID" } output_map { key: "OUTPUT0" value: "OUT" } }
  ]
}
"""


@pytest.fixture(scope="module")
def server(repository, collector, workdir):
    endpoint = f"http://127.0.0.1:{collector.server_port}/v1/traces"
    args = ["--trace-rate", "1", "--trace-otlp-endpoint", endpoint,
            "--trace-file", os.path.join(workdir, "traces.jsonl"),
            "--access-log", os.path.join(workdir, "access.jsonl")]
    with BrigadeProcess(model_repository=repository, extra_args=args) as process:
        yield process


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-grpc-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


def http_get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, dict(response.headers), response.read()


def infer_http(server, headers=()):
    args = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
            "-H", "Content-Type: application/json", "--data-binary", json.dumps(IDENTITY_BODY)]
    for header in headers:
        args += ["-H", header]
    args.append(server.http_url + "/v2/models/identity/infer")
    return int(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def infer_grpc(stubs, server, metadata=()):
    pb, stub_module = stubs
    request = pb.ModelInferRequest(model_name="identity")
    tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 16])
    tensor.contents.fp32_contents.extend(float(i) for i in range(16))
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        return stub.ModelInfer(request, metadata=list(metadata), timeout=10)


def metric_value(text, name, **labels):
    """Sum of the samples of `name` whose labels include `labels`."""
    total = 0.0
    found = False
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$", line)
        if not match or match.group(1) != name:
            continue
        sample = dict(re.findall(r'([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        if all(sample.get(k) == v for k, v in labels.items()):
            total += float(match.group(3))
            found = True
    return total if found else None


def wait_for(predicate, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


def test_metrics_pass_promtool_and_count_requests_by_protocol_and_outcome(server, stubs):
    for _ in range(5):
        assert infer_http(server) == 200
    for _ in range(3):
        infer_grpc(stubs, server)
    status, _, _ = post_json(server.http_url + "/v2/models/identity/infer", "{not json")
    assert status == 400

    status, headers, body = http_get(server.http_url + "/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    text = body.decode()
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True)
    # 0 = clean, 3 = lint findings only (1 would be a parse error). Brigade's own families must be
    # lint-clean; Triton's nv_* names are kept as Triton spells them and draw naming lints.
    assert check.returncode in (0, 3), check.stdout + check.stderr
    findings = [line for line in (check.stdout + check.stderr).splitlines() if line.strip()]
    assert all(line.startswith("nv_") for line in findings), findings

    assert metric_value(text, "brigade_requests_total", model="identity", protocol="http",
                        outcome="success") >= 5
    assert metric_value(text, "brigade_requests_total", model="identity", protocol="grpc",
                        outcome="success") >= 3
    assert metric_value(text, "brigade_requests_total", model="identity", protocol="http",
                        outcome="error") >= 1
    for stage in ("receive", "preprocess", "queue", "compute", "postprocess", "send", "total"):
        count = metric_value(text, "brigade_request_stage_duration_seconds_count",
                             model="identity", protocol="http", stage=stage)
        assert count is not None and count >= 5, stage
    assert metric_value(text, "brigade_batch_size_count", model="identity") is not None
    assert metric_value(text, "brigade_requests_in_flight", model="identity") == 0
    # Triton's families, for dashboards written against Triton.
    assert metric_value(text, "nv_inference_request_success", model="identity") >= 8


def test_triton_failure_counter_is_split_by_reason(server):
    reasons = ("REJECTED", "CANCELED", "BACKEND", "OTHER")

    def failures():
        _, _, body = http_get(server.http_url + "/metrics")
        text = body.decode()
        return {reason: metric_value(text, "nv_inference_request_failure", model="identity",
                                     version="1", reason=reason) for reason in reasons}

    before = failures()
    # Every reason has its series from the start, as Triton creates them with the model.
    assert all(value is not None for value in before.values()), before
    # OTHER: the server's validation refuses an input the model does not have.
    unknown_input = {"inputs": [dict(IDENTITY_BODY["inputs"][0], name="NOT_AN_INPUT")]}
    status, _, body = post_json(server.http_url + "/v2/models/identity/infer", unknown_input)
    assert status == 400, body
    # REJECTED: a 1 us timeout has passed before the scheduler can queue the request.
    late = dict(IDENTITY_BODY, parameters={"timeout": 1})
    status, _, _ = post_json(server.http_url + "/v2/models/identity/infer", late)
    assert status >= 400
    # Counted before the answer is sent, so the next scrape has them.
    after = failures()
    delta = {reason: after[reason] - before[reason] for reason in reasons}
    assert delta == {"REJECTED": 1, "CANCELED": 0, "BACKEND": 0, "OTHER": 1}, (before, after)


def test_statistics_extension_carries_the_stage_summary(server):
    assert infer_http(server) == 200
    status, _, body = http_get(server.http_url + "/v2/models/identity/stats")
    assert status == 200
    stats = json.loads(body)["model_stats"][0]
    assert stats["inference_stats"]["success"]["count"] >= 1
    assert stats["inference_stats"]["queue"]["ns"] >= 0
    stages = {entry["stage"]: entry for entry in stats["brigade_stage_latency"]}
    assert {"receive", "queue", "compute", "send", "total"} <= set(stages), stages
    total = stages["total"]
    assert total["count"] >= 1 and 0 < total["p50_us"] <= total["p90_us"] <= total["p99_us"]


def test_http_traceparent_is_continued_and_exported_over_otlp(server, collector):
    traceparent = f"00-{TRACE_ID}-{PARENT_SPAN}-01"
    assert infer_http(server, headers=[f"traceparent: {traceparent}",
                                       "tracestate: vendor=value"]) == 200

    def ours():
        return [s for s in collector.spans() if s["traceId"] == TRACE_ID]

    spans = wait_for(lambda: len(ours()) >= 2 and ours())
    assert spans, "no span with the client's trace id reached the collector"
    path, content_type = collector.paths[0]
    assert path == "/v1/traces" and content_type.startswith("application/json")
    roots = [s for s in spans if s.get("parentSpanId") == PARENT_SPAN]
    assert len(roots) == 1, spans
    root = roots[0]
    assert root["name"] == "infer"
    assert root["kind"] == 2  # SPAN_KIND_SERVER
    assert int(root["endTimeUnixNano"]) > int(root["startTimeUnixNano"]) > 0
    assert re.fullmatch(r"[0-9a-f]{16}", root["spanId"])
    attributes = {a["key"]: a["value"] for a in root["attributes"]}
    assert attributes["brigade.protocol"] == {"stringValue": "http"}
    children = {s["name"] for s in spans if s.get("parentSpanId") == root["spanId"]}
    assert {"queue", "compute"} <= children, children


def test_grpc_metadata_traceparent_is_continued(server, stubs, collector):
    trace_id = "0af7651916cd43dd8448eb211c80319c"
    infer_grpc(stubs, server, metadata=[("traceparent", f"00-{trace_id}-b7ad6b7169203331-01")])
    spans = wait_for(lambda: [s for s in collector.spans()
                              if s["traceId"] == trace_id and s["name"] == "infer"])
    assert spans, "the gRPC call's trace was not exported"
    attributes = {a["key"]: a["value"] for a in spans[0]["attributes"]}
    assert attributes["brigade.protocol"] == {"stringValue": "grpc"}


def test_grpc_stream_requests_are_reported_once_written(server, stubs, collector):
    pb, stub_module = stubs
    trace_id = "5b8efff798038103d269b633813fc60c"

    def count():
        _, _, body = http_get(server.http_url + "/metrics")
        return metric_value(body.decode(), "brigade_requests_total", model="identity",
                            protocol="grpc", outcome="success") or 0

    before = count()
    requests = []
    for i in range(3):
        request = pb.ModelInferRequest(model_name="identity", id=f"stream-{i}")
        tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 16])
        tensor.contents.fp32_contents.extend(float(i) for _ in range(16))
        requests.append(request)
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        responses = list(stub.ModelStreamInfer(
            iter(requests), metadata=[("traceparent", f"00-{trace_id}-b7ad6b7169203331-01")],
            timeout=10))
    assert sorted(r.infer_response.id for r in responses) == ["stream-0", "stream-1", "stream-2"]
    assert wait_for(lambda: count() >= before + 3)
    spans = wait_for(lambda: [s for s in collector.spans()
                              if s["traceId"] == trace_id and s["name"] == "infer"])
    assert len(spans) == 3, spans


def test_trace_file_and_access_log_get_json_lines(server, workdir):
    assert infer_http(server) == 200

    def lines(name):
        try:
            with open(os.path.join(workdir, name)) as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    assert wait_for(lambda: lines("traces.jsonl")), "trace file stayed empty"
    entries = wait_for(lambda: [e for e in lines("access.jsonl") if e.get("model") == "identity"])
    assert entries, "access log stayed empty"
    entry = entries[-1]
    for key in ("model", "version", "status"):
        assert key in entry, entry


def test_an_ensembles_trace_has_a_span_per_step_with_its_stages(server, workdir):
    body = {"inputs": [{"name": "IN", "datatype": "FP32", "shape": [1, 16],
                        "data": [float(i) for i in range(16)]}]}
    result = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H",
         "Content-Type: application/json", "--data-binary", json.dumps(body),
         server.http_url + "/v2/models/identity_twice/infer"],
        check=True, capture_output=True, text=True)
    assert result.stdout == "200"

    def spans():
        found = []
        try:
            with open(os.path.join(workdir, "traces.jsonl")) as f:
                for line in f:
                    for resource in json.loads(line).get("resourceSpans", []):
                        for scope in resource.get("scopeSpans", []):
                            found += scope.get("spans", [])
        except FileNotFoundError:
            pass
        return found

    def attributes(span):
        return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}

    def ensemble_root():
        for span in spans():
            if span["name"] == "infer" and attributes(span).get("model_name") == "identity_twice":
                return span
        return None

    root = wait_for(ensemble_root)
    assert root, "no trace of the ensemble"
    trace = [s for s in spans() if s["traceId"] == root["traceId"]]
    steps = [s for s in trace if s["name"] == "step" and s.get("parentSpanId") == root["spanId"]]
    assert len(steps) == 2, [s["name"] for s in trace]
    assert {attributes(s)["model_name"] for s in steps} == {"identity"}
    assert sorted(int(attributes(s)["brigade.step"]) for s in steps) == [0, 1]
    for step in steps:
        assert int(root["startTimeUnixNano"]) <= int(step["startTimeUnixNano"])
        assert int(step["endTimeUnixNano"]) <= int(root["endTimeUnixNano"])
        stages = {s["name"] for s in trace if s.get("parentSpanId") == step["spanId"]}
        assert "compute" in stages, stages


def test_metrics_port_serves_metrics_alone(repository):
    port = free_port()
    with BrigadeProcess(model_repository=repository,
                        extra_args=["--metrics-port", str(port)]) as server:
        assert infer_http(server) == 200
        status, _, body = http_get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        assert metric_value(body.decode(), "brigade_requests_total", model="identity") >= 1
        with pytest.raises(urllib.error.HTTPError) as error:
            http_get(f"http://127.0.0.1:{port}/v2/health/ready")
        assert error.value.code == 404


def test_dashboard_page_is_served_and_matches_metrics_in_chromium(repository, workdir):
    # A server of its own: the page test compares /metrics with exactly the load it drives.
    with BrigadeProcess(model_repository=repository) as server:
        run_dashboard_test(server, workdir)


def test_dashboard_shows_a_routers_traffic_per_variant(repository, workdir):
    with BrigadeProcess(model_repository=repository) as server:
        run_dashboard_test(server, workdir, model="identity_split")


def run_dashboard_test(server, workdir, model="identity"):
    status, headers, body = http_get(server.http_url + "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b"<script" in body and b"https://" not in body  # self-contained: nothing fetched
    if not os.path.isdir(os.path.join(TESTS_DIR, "node_modules", "playwright-core")):
        pytest.fail("tests/node_modules/playwright-core is missing: run scripts/setup "
                    "(npm ci --prefix tests)")
    screenshot = os.path.join(workdir, "dashboard.png")
    result = subprocess.run(
        ["node", os.path.join(HERE, "dashboard_test.mjs"), "--url", server.http_url,
         "--model", model, "--screenshot", screenshot, "--load-seconds", "4"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.path.getsize(screenshot) > 10_000
    kept = os.environ.get("BRIGADE_E2E_ARTIFACTS")
    if kept:
        os.makedirs(kept, exist_ok=True)
        shutil.copy(screenshot, kept)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
