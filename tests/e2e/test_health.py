"""Liveness, readiness, clean shutdown, unknown routes."""
import os
import signal
import tempfile

import requests

from conftest import Server


def test_healthz_and_readyz(server):
    r = requests.get(server.url + "/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}
    r = requests.get(server.url + "/readyz")
    assert r.status_code == 200


def test_unknown_route_is_json_404(server):
    r = requests.get(server.url + "/no/such/route")
    assert r.status_code == 404
    err = r.json()["error"]
    assert err["code"] == 404 and err["type"] == "not_found_error"


def test_sigint_shuts_down_cleanly():
    with tempfile.TemporaryDirectory() as data:
        srv = Server(data).wait_ready(path="/healthz")
        srv.proc.send_signal(signal.SIGINT)
        assert srv.proc.wait(timeout=30) == 0
        assert "shutting down" in srv.output()


def test_two_servers_two_data_folders():
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        s1 = Server(a).wait_ready(path="/healthz")
        s2 = Server(b).wait_ready(path="/healthz")
        try:
            assert requests.get(s1.url + "/healthz").ok and requests.get(s2.url + "/healthz").ok
        finally:
            assert s1.stop() == 0 and s2.stop() == 0


def test_port_in_use_is_a_clear_error():
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        s1 = Server(a).wait_ready(path="/healthz")
        try:
            import subprocess
            from conftest import RAGD
            r = subprocess.run([RAGD, "serve", "--port", str(s1.port), "--data", b],
                               capture_output=True, text=True, timeout=30)
            assert r.returncode == 1
            assert "cannot listen" in r.stderr
        finally:
            s1.stop()


def test_upload_past_the_request_limit_is_413():
    """A body past server.max_upload_bytes is refused while it arrives."""
    import socket
    import time
    with tempfile.TemporaryDirectory() as data:
        srv = Server(data, extra_args=["--set", "server.max_upload_bytes=65536",
                                       "--set", "server.max_json_bytes=32768"]).wait_ready(path="/healthz")
        try:
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                      b"Content-Length: 1048576\r\n\r\n")
            s.settimeout(0.2)
            got, deadline = b"", time.time() + 30
            while b"\r\n\r\n" not in got and time.time() < deadline:
                try:
                    s.sendall(b"x" * 8192)
                except OSError:
                    pass
                try:
                    got += s.recv(4096)
                except (socket.timeout, BlockingIOError):
                    pass
            assert got.startswith(b"HTTP/1.1 413"), got[:100]
            s.close()
            assert requests.get(srv.url + "/healthz").status_code == 200
        finally:
            assert srv.stop() == 0
