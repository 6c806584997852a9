#!/usr/bin/env python3
"""Abuse figures of a real `ragd serve` (no model loaded: sign-in, the HTTP
boundary and connection handling do not need one).

1. Sign-in storm: 100 parallel sign-ins with wrong passwords (Argon2id on
   the password pool) while /healthz is timed every 20 ms: p50 and max ms.
2. A 1 GiB body to every route: each is sent until the server answers or
   closes; prints the bytes the server took before refusing, its answer, and
   the server's resident memory (VmRSS now, VmHWM peak).
3. 10,000 idle connections (the script raises its own and the server's
   RLIMIT_NOFILE): from one address (the per-address cap refuses all but
   128), then spread over 100 loopback addresses (server.max_connections
   raised to 20000 for it); /healthz from another address is timed meanwhile.

Usage: python3 bench/serve/abuse_bench.py [--binary build/ragd] [--part N]
Prints figures with units and the core count; asserts nothing.
"""
import argparse
import concurrent.futures
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ragd_process  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "rk-bench-admin-key-0123456789abcdefghijklmnop"
ROUTES = [("POST", "/v1/auth/login"), ("POST", "/v1/auth/logout"), ("GET", "/v1/me"), ("POST", "/v1/users"),
          ("GET", "/v1/users"), ("POST", "/v1/chat/completions"), ("POST", "/v1/completions"),
          ("POST", "/v1/embeddings"), ("POST", "/v1/ask"), ("POST", "/tokenize"), ("POST", "/detokenize"),
          ("GET", "/v1/models"), ("POST", "/v1/documents"), ("GET", "/v1/documents"),
          ("DELETE", "/v1/documents/1"), ("GET", "/healthz"), ("GET", "/metrics"), ("GET", "/"),
          ("PUT", "/nowhere")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raise_fd_limit(want=65536):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class Ragd:
    def __init__(self, binary, *settings):
        self.port = free_port()
        self.tmp = tempfile.TemporaryDirectory(prefix="ragd-abuse-")
        args = [binary, "serve", "--port", str(self.port), "--data", self.tmp.name,
                "--set", "models.llm=absent.gguf"]
        for s in settings:
            args += ["--set", s]
        env = dict(os.environ, RAGD_ADMIN_USER="admin", RAGD_ADMIN_PASSWORD="correct horse battery staple",
                   RAGD_ADMIN_API_KEY=KEY)
        self.log = open(os.path.join(self.tmp.name, "server.log"), "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 60
        while time.time() < deadline:
            if request(self.port, "GET", "/healthz")[0] == 200:
                return
            time.sleep(0.1)
        raise RuntimeError("ragd did not start")

    def memory_kib(self):
        return ragd_process.memory_kib(self.proc.pid)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()
        self.tmp.cleanup()


def request(port, method, path, body=b"", headers=None, source="127.0.0.1", timeout=10):
    """(status, seconds) of one request on a fresh connection; status 0 when it failed."""
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    for k, v in (headers or {}).items():
        head += f"{k}: {v}\r\n"
    started = time.perf_counter()
    try:
        with socket.socket() as s:
            s.settimeout(timeout)
            s.bind((source, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(head.encode() + b"\r\n" + body)
            got = b""
            while b"\r\n" not in got:
                chunk = s.recv(4096)
                if not chunk:
                    return 0, time.perf_counter() - started
                got += chunk
            return int(got.split(b" ", 2)[1]), time.perf_counter() - started
    except OSError:
        return 0, time.perf_counter() - started


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


class HealthProbe:
    """Times /healthz every 20 ms from `source` until stopped."""

    def __init__(self, port, source="127.0.0.1"):
        self.port, self.source, self.times, self.failures = port, source, [], 0
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.stop_flag.is_set():
            status, seconds = request(self.port, "GET", "/healthz", source=self.source)
            if status == 200:
                self.times.append(seconds * 1000)
            else:
                self.failures += 1
            time.sleep(0.02)

    def stop(self):
        self.stop_flag.set()
        self.thread.join()
        t = self.times or [float("nan")]
        return (f"/healthz p50 {statistics.median(t):.1f} ms, p99 {percentile(t, 99):.1f} ms, "
                f"max {max(t):.1f} ms over {len(self.times)} probes, {self.failures} failed")


def sign_in_storm(binary):
    srv = Ragd(binary)
    try:
        idle = HealthProbe(srv.port)
        time.sleep(2)
        print("  baseline:", idle.stop())
        probe = HealthProbe(srv.port)
        body = lambda i: json.dumps({"username": f"user{i % 10}", "password": "wrong password"}).encode()
        started = time.time()
        with concurrent.futures.ThreadPoolExecutor(100) as pool:
            statuses = list(pool.map(lambda i: request(srv.port, "POST", "/v1/auth/login", body(i),
                                                       {"Content-Type": "application/json"}, timeout=120)[0],
                                     range(100)))
        took = time.time() - started
        print(f"  100 parallel wrong sign-ins in {took:.1f} s, answers",
              {s: statuses.count(s) for s in sorted(set(statuses))})
        print("  during:", probe.stop())
    finally:
        srv.stop()


def huge_bodies(binary):
    srv = Ragd(binary)
    try:
        rss, peak = srv.memory_kib()
        print(f"  before: VmRSS {rss / 1024:.1f} MiB, VmHWM {peak / 1024:.1f} MiB")
        chunk = b"\0" * (1 << 20)
        for method, path in ROUTES:
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {1 << 30}\r\n\r\n".encode())
            s.setblocking(False)
            sent, answer, started = 0, b"", time.time()
            while sent < (1 << 30) and time.time() - started < 10:
                try:
                    answer += s.recv(65536)
                    if answer:
                        break
                except BlockingIOError:
                    pass
                except OSError:
                    break
                try:
                    sent += s.send(chunk)
                except BlockingIOError:
                    time.sleep(0.001)
                except OSError:
                    break
            s.close()
            status = answer.split(b"\r\n", 1)[0].decode(errors="replace") or "(closed, no answer)"
            rss, peak = srv.memory_kib()
            print(f"  {method:6} {path:22} took {sent / (1 << 20):7.1f} MiB before: {status:38} "
                  f"VmRSS {rss / 1024:.1f} MiB")
        time.sleep(1)
        rss, peak = srv.memory_kib()
        print(f"  after: VmRSS {rss / 1024:.1f} MiB, VmHWM (peak) {peak / 1024:.1f} MiB")
    finally:
        srv.stop()


def hold(port, n, sources):
    held, refused = [], 0
    for i in range(n):
        s = socket.socket()
        s.bind((sources[i % len(sources)], 0))
        try:
            s.connect(("127.0.0.1", port))
            held.append(s)
        except OSError:
            refused += 1
            s.close()
    return held, refused


def still_open(s):
    s.setblocking(False)
    try:
        while s.recv(65536):
            pass
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def idle_connections(binary):
    limit = raise_fd_limit()
    print(f"  RLIMIT_NOFILE {limit}")
    for label, settings, sources in [
            ("one address", [], ["127.0.0.1"]),
            ("100 addresses", ["server.max_connections=20000"], [f"127.0.1.{i}" for i in range(1, 101)])]:
        srv = Ragd(binary, *settings)
        try:
            probe = HealthProbe(srv.port, source="127.0.0.2")
            started = time.time()
            held, failed = hold(srv.port, 10000, sources)
            time.sleep(3)
            alive = sum(still_open(s) for s in held)  # the server closes those over a cap after its 503
            rss, _ = srv.memory_kib()
            print(f"  {label}: 10000 opened in {time.time() - started:.1f} s ({failed} connect errors), "
                  f"{alive} still open after 3 s; server VmRSS {rss / 1024:.1f} MiB")
            print("   ", probe.stop())
            for s in held:
                s.close()
        finally:
            srv.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "ragd"))
    parser.add_argument("--part", type=int, choices=[1, 2, 3], help="run one part only")
    args = parser.parse_args()
    raise_fd_limit()  # inherited by the servers started below
    print(f"ragd abuse figures, {os.cpu_count()} cores, {args.binary}")
    parts = [(1, "sign-in storm", sign_in_storm), (2, "1 GiB bodies", huge_bodies),
             (3, "10,000 idle connections", idle_connections)]
    for n, name, run in parts:
        if args.part in (None, n):
            print(f"{n}. {name}")
            run(args.binary)


if __name__ == "__main__":
    main()
