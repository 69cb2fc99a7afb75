"""Starts the real `brigade serve` binary on free loopback ports for end-to-end tests.

Every test talks to the server only through independent clients (curl, urllib, Python grpcio),
never through Brigade's own client code. The process is always stopped (SIGTERM, then SIGKILL
after a timeout) and its exit status checked by the tests that care.
"""

import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BRIGADE_BIN = os.environ.get("BRIGADE_BIN", os.path.join(ROOT, "build", "brigade"))
DEMO_REPOSITORY = os.path.join(ROOT, "models")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class BrigadeProcess:
    """One `brigade serve` process. Use as a context manager."""

    def __init__(self, model_repository=DEMO_REPOSITORY, extra_args=(), ready_timeout_s=120,
                 http_ssl_context=None, env=None):
        """`http_ssl_context`: an ssl.SSLContext when the HTTP port serves TLS (readiness is
        then polled over https with it). `env`: variables added to the server's environment."""
        self.env = dict(os.environ, **env) if env else None
        self.model_repository = model_repository
        self.http_ssl_context = http_ssl_context
        self.extra_args = list(extra_args)
        self.ready_timeout_s = ready_timeout_s
        self.http_port = free_port()
        self.grpc_port = free_port()
        self.proc = None
        self.log = tempfile.NamedTemporaryFile(prefix="brigade-e2e-", suffix=".log", delete=False)

    @property
    def http_url(self):
        scheme = "https" if self.http_ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.http_port}"

    @property
    def grpc_target(self):
        return f"127.0.0.1:{self.grpc_port}"

    def start(self):
        args = [BRIGADE_BIN, "serve", "--model-repository", self.model_repository,
                "--http-address", "127.0.0.1", "--http-port", str(self.http_port),
                "--grpc-address", "127.0.0.1", "--grpc-port", str(self.grpc_port)]
        # No drain delay unless a test asks for one: every test stops its server, and the
        # default delay (seconds of serving while unready) would add to each.
        if "--drain-delay-secs" not in self.extra_args:
            args += ["--drain-delay-secs", "0"]
        args += self.extra_args
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"brigade exited with {self.proc.returncode}:\n{self.logs()}")
            try:
                with urllib.request.urlopen(self.http_url + "/v2/health/ready", timeout=1,
                                            context=self.http_ssl_context) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"brigade did not become ready:\n{self.logs()}")

    def stop(self, timeout_s=30):
        """Sends SIGTERM and returns the exit code (SIGKILL after `timeout_s`)."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return -9

    def logs(self):
        self.log.flush()
        with open(self.log.name, "r", errors="replace") as f:
            return f.read()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass
