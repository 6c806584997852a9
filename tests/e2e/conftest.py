"""Black-box test harness: runs a real `ragd serve` on a free loopback port.

Each test module gets a server with its own data folder (so tests never share
state by accident) and the admin credentials below.
"""
import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAGD = os.environ.get("RAGD_BINARY", os.path.join(ROOT, "build", "ragd"))
ADMIN_USER = "admin"
ADMIN_PASSWORD = "correct horse battery staple"
ADMIN_KEY = "rk-test-admin-key-0123456789abcdefghijklmnop"
# The black-box tests check the server's behaviour, not answer quality: they
# run the small base model unless a test names its models (RAGD_MODELS_LLM).
# Answer quality is the evaluation gate's job (ragd eval, the answer model).
TEST_LLM = "gemma-3-270m-q4_k_m.gguf"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, data_dir, extra_args=(), env=None, ingest=None, port=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        args = [RAGD, "serve", "--port", str(self.port), "--data", data_dir, *extra_args]
        if ingest:
            args += ["--ingest-if-empty", ingest]
        full_env = dict(os.environ, RAGD_ADMIN_USER=ADMIN_USER, RAGD_ADMIN_PASSWORD=ADMIN_PASSWORD,
                        RAGD_ADMIN_API_KEY=ADMIN_KEY, RAGD_MODELS_LLM=TEST_LLM)
        full_env.update(env or {})
        self.log_path = os.path.join(data_dir, "server.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=full_env)

    def wait_ready(self, path="/readyz", timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ragd exited with {self.proc.returncode}:\n{self.output()}")
            try:
                if requests.get(self.url + path, timeout=2).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"ragd not ready after {timeout}s:\n{self.output()}")

    def output(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def headers(self, key=ADMIN_KEY):
        return {"Authorization": f"Bearer {key}"}


def abandon_stream(server, key, content="Tell a very long story.", max_tokens=400):
    """Starts a streamed chat completion on a raw socket and closes the
    connection after the first events, as a client that goes away does."""
    import json
    body = json.dumps({"messages": [{"role": "user", "content": content}], "max_tokens": max_tokens,
                       "stream": True}).encode()
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key.encode() +
              b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" +
              body)
    got = b""
    while got.count(b"data: ") < 3:
        got += s.recv(4096)
    s.close()


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-") as data:
        srv = Server(data, ingest=os.path.join(ROOT, "docs", "sample")).wait_ready()
        yield srv
        assert srv.stop() == 0, srv.output()
