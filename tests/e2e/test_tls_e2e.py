"""End-to-end tests of TLS: the real binary with --http-use-ssl / --grpc-use-ssl (Triton's flag
names) and their mutual variants, Python's ssl, http.client and Debian's grpcio as clients, and
certificates made at test time with the `openssl` command: a CA, two server certificates (the
second for a rotation) and a client certificate.
"""

import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import tempfile
import time

import grpc
import pytest

import grpc_client_test
from brigade_process import BRIGADE_BIN, BrigadeProcess

ADD_SUB = """
backend: "brigade"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
parameters { key: "op" value { string_value: "add_sub" } }
"""

CLIENT_URI = "spiffe://brigade.e2e/client"

INPUT0 = list(range(16))
INPUT1 = [1] * 16


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificate(pki, name, cn, ext):
    """`name`.key and `name`.pem for `cn`, signed by the CA in `pki`."""
    with open(os.path.join(pki, name + ".ext"), "w") as f:
        f.write(ext)
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + cn, cwd=pki)
    openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", name + ".pem", "-extfile", name + ".ext",
            cwd=pki)


@pytest.fixture(scope="module")
def pki():
    path = tempfile.mkdtemp(prefix="brigade-tls-e2e-pki-")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=brigade e2e CA",
            cwd=path)
    server_ext = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
    make_certificate(path, "server", "localhost", server_ext)
    make_certificate(path, "rotated", "localhost", server_ext)
    make_certificate(path, "client", "brigade e2e client",
                     f"subjectAltName=URI:{CLIENT_URI}\nextendedKeyUsage=clientAuth\n")
    make_certificate(path, "stranger", "stranger",
                     "subjectAltName=URI:spiffe://brigade.e2e/stranger\n"
                     "extendedKeyUsage=clientAuth\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def workdir(pki):
    """A model repository and a copy of the server's certificate files (tests rotate them)."""
    path = tempfile.mkdtemp(prefix="brigade-tls-e2e-")
    os.makedirs(os.path.join(path, "repo", "simple", "1"))
    with open(os.path.join(path, "repo", "simple", "config.pbtxt"), "w") as f:
        f.write(ADD_SUB)
    for name in ("server.pem", "server.key", "ca.pem"):
        shutil.copy(os.path.join(pki, name), os.path.join(path, name))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-tls-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


def tls_args(workdir, protocol, mutual=False):
    args = [f"--{protocol}-use-ssl=true",
            f"--{protocol}-server-cert", os.path.join(workdir, "server.pem"),
            f"--{protocol}-server-key", os.path.join(workdir, "server.key")]
    if mutual:
        args += [f"--{protocol}-use-ssl-mutual=true",
                 f"--{protocol}-root-cert", os.path.join(workdir, "ca.pem")]
    return args


def client_context(pki, client_cert=False, name="client"):
    context = ssl.create_default_context(cafile=os.path.join(pki, "ca.pem"))
    if client_cert:
        context.load_cert_chain(os.path.join(pki, name + ".pem"), os.path.join(pki, name + ".key"))
    return context


def https_post(port, context, path, body="{}"):
    """POST `path` over a new TLS connection; returns (status, body)."""
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def https_infer(port, context):
    """POST /v2/models/simple/infer over a new TLS connection; returns (status, body, TLS
    version)."""
    body = json.dumps({"inputs": [
        {"name": "INPUT0", "datatype": "INT32", "shape": [1, 16], "data": INPUT0},
        {"name": "INPUT1", "datatype": "INT32", "shape": [1, 16], "data": INPUT1}]})
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        connection.request("POST", "/v2/models/simple/infer", body,
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read()), connection.sock.version()
    finally:
        connection.close()


def check_add_sub(body):
    outputs = {o["name"]: o["data"] for o in body["outputs"]}
    assert outputs["OUTPUT0"] == [a + b for a, b in zip(INPUT0, INPUT1)]
    assert outputs["OUTPUT1"] == [a - b for a, b in zip(INPUT0, INPUT1)]


def grpc_infer(stubs, channel):
    pb, stub_module = stubs
    stub = stub_module.GRPCInferenceServiceStub(channel)
    request = pb.ModelInferRequest(model_name="simple")
    for name, values in (("INPUT0", INPUT0), ("INPUT1", INPUT1)):
        request.inputs.add(name=name, datatype="INT32", shape=[1, 16])
        request.raw_input_contents.append(struct.pack("<16i", *values))
    response = stub.ModelInfer(request, timeout=10)
    return list(struct.unpack("<16i", response.raw_output_contents[0]))


def grpc_credentials(pki, client_cert=False, name="client"):
    def read(name):
        with open(os.path.join(pki, name), "rb") as f:
            return f.read()
    if client_cert:
        return grpc.ssl_channel_credentials(read("ca.pem"), read(name + ".key"),
                                            read(name + ".pem"))
    return grpc.ssl_channel_credentials(read("ca.pem"))


def secure_channel(process, credentials):
    # The certificate names localhost and 127.0.0.1; the target is the address.
    return grpc.secure_channel(process.grpc_target, credentials)


def served_certificate(port, context, alpn=None):
    """SHA-256 of the certificate the server presents to a new connection."""
    if alpn:
        context.set_alpn_protocols(alpn)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest()


def fingerprint(path):
    with open(path) as f:
        der = ssl.PEM_cert_to_DER_cert(f.read())
    return hashlib.sha256(der).hexdigest()


def replace(path, source):
    """Rotates `path` to a copy of `source` by rename, as cert-manager or a secret update does."""
    shutil.copy(source, path + ".new")
    os.replace(path + ".new", path)


def wait_for(predicate, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def start_fails(workdir, *args):
    """Runs `brigade serve` expected to refuse to start; returns its output."""
    command = [BRIGADE_BIN, "serve", "--model-repository", os.path.join(workdir, "repo"),
               "--http-port", "0", "--grpc-port", "0", "--http-address", "127.0.0.1",
               "--grpc-address", "127.0.0.1", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, result.stdout + result.stderr
    return result.stdout + result.stderr


# ---- TLS on both ports ------------------------------------------------------------------------

def test_infer_over_tls_on_both_protocols_and_plain_clients_are_refused(workdir, pki, stubs):
    args = tls_args(workdir, "http") + tls_args(workdir, "grpc")
    context = client_context(pki)
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        http_ssl_context=context) as process:
        status, body, version = https_infer(process.http_port, context)
        assert status == 200, body
        check_add_sub(body)
        assert version in ("TLSv1.2", "TLSv1.3")

        # TLS 1.2 is accepted; anything older is not.
        tls12 = client_context(pki)
        tls12.maximum_version = ssl.TLSVersion.TLSv1_2
        assert https_infer(process.http_port, tls12)[2] == "TLSv1.2"
        tls11 = client_context(pki)
        tls11.set_ciphers("DEFAULT:@SECLEVEL=0")  # so that the client really offers TLS 1.1
        tls11.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
        tls11.maximum_version = ssl.TLSVersion.TLSv1_1
        with pytest.raises((ssl.SSLError, ConnectionError)):
            https_infer(process.http_port, tls11)

        # A plain-HTTP client gets no HTTP answer: the connection closes during the handshake.
        plain = http.client.HTTPConnection("127.0.0.1", process.http_port, timeout=5)
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            plain.request("GET", "/v2/health/ready")
            plain.getresponse()
        plain.close()

        with secure_channel(process, grpc_credentials(pki)) as channel:
            assert grpc_infer(stubs, channel) == [a + b for a, b in zip(INPUT0, INPUT1)]
        with grpc.insecure_channel(process.grpc_target) as channel:
            with pytest.raises(grpc.RpcError) as refused:
                grpc_infer(stubs, channel)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE

        # The handshake failures are counted (the plain client's at least).
        metrics = urlopen_text(process.http_url + "/metrics", context)
        failures = [line for line in metrics.splitlines()
                    if line.startswith("brigade_tls_handshake_failures_total{")]
        assert failures and float(failures[0].split()[-1]) >= 1, failures
        assert process.stop() == 0


def urlopen_text(url, context):
    import urllib.request
    with urllib.request.urlopen(url, timeout=5, context=context) as response:
        return response.read().decode()


def test_a_client_that_never_handshakes_is_closed_after_the_header_timeout(workdir, pki):
    args = tls_args(workdir, "http") + ["--http-header-timeout-secs", "1"]
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        http_ssl_context=client_context(pki)) as process:
        with socket.create_connection(("127.0.0.1", process.http_port), timeout=10) as raw:
            started = time.monotonic()
            assert raw.recv(1) == b""  # closed by the server, nothing sent
            took = time.monotonic() - started
        assert 0.5 < took < 5, took


def test_a_tls_keep_alive_connection_serves_many_requests_and_shutdown_is_clean(workdir, pki):
    context = client_context(pki)
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"),
                        extra_args=tls_args(workdir, "http"), http_ssl_context=context) as process:
        connection = http.client.HTTPSConnection("127.0.0.1", process.http_port, context=context,
                                                 timeout=10)
        for _ in range(50):
            connection.request("GET", "/v2/health/ready")
            response = connection.getresponse()
            response.read()
            assert response.status == 200
        # An idle keep-alive TLS connection does not hold up the exit.
        started = time.monotonic()
        assert process.stop() == 0
        assert time.monotonic() - started < 10
        connection.close()


# ---- mutual TLS ---------------------------------------------------------------------------------

def test_mutual_tls_refuses_clients_without_a_certificate(workdir, pki, stubs):
    args = tls_args(workdir, "http", mutual=True) + tls_args(workdir, "grpc", mutual=True)
    with_cert = client_context(pki, client_cert=True)
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        http_ssl_context=with_cert) as process:
        status, body, _ = https_infer(process.http_port, with_cert)
        assert status == 200, body
        check_add_sub(body)
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.RemoteDisconnected)):
            https_infer(process.http_port, client_context(pki))

        with secure_channel(process, grpc_credentials(pki, client_cert=True)) as channel:
            assert grpc_infer(stubs, channel)[0] == INPUT0[0] + INPUT1[0]
        with secure_channel(process, grpc_credentials(pki)) as channel:
            with pytest.raises(grpc.RpcError) as refused:
                grpc_infer(stubs, channel)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_client_certificate_from_another_ca_is_refused(workdir, pki):
    other = tempfile.mkdtemp(prefix="brigade-tls-e2e-other-")
    try:
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "client.key", "-out", "client.pem", "-days", "2",
                "-subj", "/CN=stranger", cwd=other)
        args = tls_args(workdir, "http", mutual=True)
        with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                            http_ssl_context=client_context(pki, client_cert=True)) as process:
            stranger = client_context(pki)
            stranger.load_cert_chain(os.path.join(other, "client.pem"),
                                     os.path.join(other, "client.key"))
            with pytest.raises((ssl.SSLError, ConnectionError, http.client.RemoteDisconnected)):
                https_infer(process.http_port, stranger)
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_a_client_certificate_named_in_the_token_file_has_its_scopes(workdir, pki, stubs):
    tokens = os.path.join(workdir, "tokens")
    with open(tokens, "w") as f:
        f.write(f"infer,admin cert:{CLIENT_URI} ops\n")
    os.chmod(tokens, 0o600)
    args = (tls_args(workdir, "http", mutual=True) + tls_args(workdir, "grpc", mutual=True)
            + ["--auth-token-file", tokens])
    named, stranger = client_context(pki, True), client_context(pki, True, name="stranger")
    pb, stub_module = stubs
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        http_ssl_context=named) as process:
        # HTTP: the named certificate reaches an admin endpoint and infers, without a token.
        status, body = https_post(process.http_port, named, "/v2/repository/index")
        assert status == 200, body
        assert b'"simple"' in body
        status, body, _ = https_infer(process.http_port, named)
        assert status == 200, body
        # Another certificate of the same CA is verified but named nowhere: it needs a token.
        status, body = https_post(process.http_port, stranger, "/v2/repository/index")
        assert status == 401, body

        # gRPC, the same.
        with secure_channel(process, grpc_credentials(pki, True)) as channel:
            stub = stub_module.GRPCInferenceServiceStub(channel)
            index = stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10)
            assert [m.name for m in index.models] == ["simple"]
            assert grpc_infer(stubs, channel)[0] == 1
        with secure_channel(process, grpc_credentials(pki, True, name="stranger")) as channel:
            with pytest.raises(grpc.RpcError) as refused:
                grpc_infer(stubs, channel)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert process.stop() == 0


# ---- rotation -----------------------------------------------------------------------------------

def test_a_rotated_certificate_is_served_without_a_restart_and_a_bad_one_is_not(workdir, pki,
                                                                                  stubs):
    args = (tls_args(workdir, "http") + tls_args(workdir, "grpc") + ["--tls-reload-secs", "1"])
    context = client_context(pki)
    cert, key = os.path.join(workdir, "server.pem"), os.path.join(workdir, "server.key")
    first, second = fingerprint(cert), fingerprint(os.path.join(pki, "rotated.pem"))
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        http_ssl_context=context) as process:
        assert served_certificate(process.http_port, client_context(pki)) == first
        assert served_certificate(process.grpc_port, client_context(pki), ["h2"]) == first
        # A long-lived gRPC channel made before the rotation.
        channel = secure_channel(process, grpc_credentials(pki))
        assert grpc_infer(stubs, channel)[0] == 1

        # Key first, then certificate: in between the pair does not match and is refused.
        replace(key, os.path.join(pki, "rotated.key"))
        replace(cert, os.path.join(pki, "rotated.pem"))
        assert wait_for(lambda: served_certificate(process.http_port, client_context(pki))
                        == second), process.logs()
        assert wait_for(lambda: served_certificate(process.grpc_port, client_context(pki), ["h2"])
                        == second), process.logs()
        status, body, _ = https_infer(process.http_port, context)
        assert status == 200, body
        assert grpc_infer(stubs, channel)[0] == 1
        with secure_channel(process, grpc_credentials(pki)) as fresh:
            assert grpc_infer(stubs, fresh)[0] == 1
        channel.close()

        # A broken rotation keeps the certificate in force and says why.
        mark = len(process.logs())
        with open(cert + ".new", "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
        os.replace(cert + ".new", cert)
        kept = "certificate files changed; keeping the certificate in force"
        assert wait_for(lambda: f"the --http {kept}" in process.logs()[mark:]
                        and f"the --grpc {kept}" in process.logs()[mark:]), process.logs()
        time.sleep(1.5)  # past gRPC's own re-read of its copy
        assert served_certificate(process.http_port, client_context(pki)) == second
        assert served_certificate(process.grpc_port, client_context(pki), ["h2"]) == second
        assert https_infer(process.http_port, context)[0] == 200
        assert process.stop() == 0


@pytest.mark.parametrize("reload_args", [["--tls-reload-secs", "3600"], []],
                         ids=["looked_at_hourly", "never_looked_at"])
def test_sighup_reloads_the_certificates_at_once(workdir, pki, reload_args):
    # The files are looked at only hourly, or never (the default): what happens within seconds
    # is SIGHUP's doing.
    args = tls_args(workdir, "http") + tls_args(workdir, "grpc") + reload_args
    cert, key = os.path.join(workdir, "server.pem"), os.path.join(workdir, "server.key")
    second = fingerprint(os.path.join(pki, "rotated.pem"))
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        http_ssl_context=client_context(pki)) as process:
        replace(key, os.path.join(pki, "rotated.key"))
        replace(cert, os.path.join(pki, "rotated.pem"))
        time.sleep(1.5)
        assert served_certificate(process.http_port, client_context(pki)) != second
        process.proc.send_signal(signal.SIGHUP)
        assert wait_for(lambda: served_certificate(process.http_port, client_context(pki))
                        == second), process.logs()
        assert wait_for(lambda: served_certificate(process.grpc_port, client_context(pki), ["h2"])
                        == second), process.logs()
        assert process.stop() == 0


def test_a_killed_server_leaves_no_key_behind_and_the_next_start_clears_its_links(workdir, pki):
    tmp = os.path.join(workdir, "tmp")
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(workdir, "server.key"), "rb") as f:
        key = f.read()
    args = tls_args(workdir, "grpc")
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        env={"TMPDIR": tmp}) as process:
        copies = [d for d in os.listdir(tmp) if d.startswith("brigade-grpc-tls-")]
        assert len(copies) == 1, copies
        process.proc.kill()
        process.proc.wait()
    left = os.path.join(tmp, copies[0])
    assert os.path.isdir(left)
    for root, _, files in os.walk(left):
        for name in files:
            path = os.path.join(root, name)
            assert os.path.islink(path), path
            # Into the server's own in-memory files, gone with it.
            assert os.readlink(path).startswith("/proc/self/fd/"), path
    for root, _, files in os.walk(tmp):
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                with open(path, "rb") as f:
                    assert key not in f.read(), path
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        env={"TMPDIR": tmp}) as process:
        assert not os.path.exists(left)
        assert len([d for d in os.listdir(tmp) if d.startswith("brigade-grpc-tls-")]) == 1
        assert process.stop() == 0
    assert not [d for d in os.listdir(tmp) if d.startswith("brigade-grpc-tls-")]


# ---- bad files at start -------------------------------------------------------------------------

def test_bad_certificate_files_stop_the_start_with_the_flag_named(workdir, pki):
    repo_cert = os.path.join(workdir, "server.pem")
    output = start_fails(workdir, "--http-use-ssl=true", "--http-server-cert", repo_cert,
                         "--http-server-key", os.path.join(workdir, "absent.key"))
    assert "--http-server-key" in output and "absent.key" in output, output

    garbage = os.path.join(workdir, "garbage.pem")
    with open(garbage, "w") as f:
        f.write("garbage\n")
    output = start_fails(workdir, "--grpc-use-ssl=true", "--grpc-server-cert", garbage,
                         "--grpc-server-key", os.path.join(workdir, "server.key"))
    assert "--grpc-server-cert" in output and "no PEM certificate" in output, output

    output = start_fails(workdir, "--grpc-use-ssl=true", "--grpc-server-cert", repo_cert,
                         "--grpc-server-key", os.path.join(pki, "client.key"))
    assert "--grpc-server-key" in output and "does not match" in output, output

    output = start_fails(workdir, "--http-use-ssl-mutual=true", "--http-server-cert", repo_cert,
                         "--http-server-key", os.path.join(workdir, "server.key"))
    assert "--http-root-cert" in output, output

    # Certificate flags without TLS switched on would serve plain text: refused.
    output = start_fails(workdir, "--http-server-cert", repo_cert)
    assert "--http-use-ssl" in output, output


# ---- Brigade's own client: brigade bench ------------------------------------------------------

def bench(*args):
    return subprocess.run([BRIGADE_BIN, "bench", "-m", "simple", "--requests", "20",
                           "--warmup-requests", "0", "-f", "json", "--no-progress", *args],
                          capture_output=True, text=True, timeout=120)


def test_brigade_bench_speaks_tls_and_mutual_tls_on_both_protocols(workdir, pki):
    args = tls_args(workdir, "http", mutual=True) + tls_args(workdir, "grpc", mutual=True)
    client = ["--root-cert", os.path.join(pki, "ca.pem"),
              "--client-cert", os.path.join(pki, "client.pem"),
              "--client-key", os.path.join(pki, "client.key")]
    with BrigadeProcess(model_repository=os.path.join(workdir, "repo"), extra_args=args,
                        http_ssl_context=client_context(pki, client_cert=True)) as process:
        for protocol_args in (["-i", "http", "-u", process.http_url],
                              ["-i", "grpc", "-u", process.grpc_target, "--ssl"]):
            result = bench(*protocol_args, *client)
            assert result.returncode == 0, result.stdout + result.stderr
            level = json.loads(result.stdout)["levels"][0]
            assert level["ok"] == 20 and level["failed"] == 0, result.stdout
        # Without the client certificate the server refuses every request.
        result = bench("-i", "http", "-u", process.http_url,
                       "--root-cert", os.path.join(pki, "ca.pem"))
        assert result.returncode != 0 or json.loads(result.stdout)["levels"][0]["ok"] == 0
        # Plain HTTP against the TLS port fails too.
        result = bench("-i", "http", "-u", f"127.0.0.1:{process.http_port}")
        assert result.returncode != 0 or json.loads(result.stdout)["levels"][0]["ok"] == 0
