#!/usr/bin/env python3
"""The accounts store on SQLite and on PostgreSQL, through a real `ragd serve`
(no model): the latency of routes that read or write it, one client and
several at once.

For each store a fresh server (and, for PostgreSQL, a private PostgreSQL 15
from tests/support/postgres-fixture on a Unix socket) is started; a user with
an API key and a session is made; then:
  me/key     GET /v1/me with the API key (key lookup, user row, quota status)
  me/cookie  GET /v1/me with the session cookie (session lookup, user row)
  conv/new   POST /v1/conversations (an INSERT ... RETURNING)
  conv/list  GET /v1/conversations (the user's conversations with their counts)
each `--requests` times from one client (p50/p95/max in ms), and GET /v1/me
from `--clients` clients at once (requests per second).

  python3 bench/serve/accounts_store_bench.py --binary build/ragd
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ragd_process import RagdProcess  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests", "support", "postgres-fixture")
ADMIN_KEY = "rk-bench-admin-key-0123456789abcdefghijklmnop"


def timed(session, method, url, n, **kw):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = session.request(method, url, timeout=30, **kw)
        times.append((time.perf_counter() - t0) * 1000)
        if r.status_code >= 300:
            raise RuntimeError(f"{method} {url}: {r.status_code} {r.text}")
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.95)], times[-1]


def throughput(url, headers, clients, seconds):
    done = [0] * clients
    stop = time.time() + seconds

    def client(i):
        s = requests.Session()
        while time.time() < stop:
            if s.get(url, headers=headers, timeout=30).status_code != 200:
                raise RuntimeError("GET /v1/me failed")
            done[i] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) / seconds


def measure(binary, store_args, label, args):
    with tempfile.TemporaryDirectory(prefix="ragd-bench-accounts-") as data:
        env = dict(os.environ, RAGD_ADMIN_API_KEY=ADMIN_KEY, RAGD_ADMIN_PASSWORD="bench-admin-password")
        extra = ["--set", "models.llm=absent.gguf", "--set", "quota.requests_per_minute=0",
                 "--set", "quota.max_in_flight=0", *store_args]
        srv = RagdProcess(binary, data, extra, env=env).wait_ready("/healthz")
        try:
            admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
            made = requests.post(srv.url + "/v1/users", headers=admin, timeout=30,
                                 json={"username": "bench", "password": "bench-password"})
            made.raise_for_status()
            key = {"Authorization": "Bearer " + made.json()["api_key"]}
            login = requests.post(srv.url + "/v1/auth/login", timeout=30,
                                  json={"username": "bench", "password": "bench-password"})
            login.raise_for_status()
            cookie = {"Cookie": login.headers["Set-Cookie"].split(";")[0]}
            s = requests.Session()
            timed(s, "GET", srv.url + "/v1/me", 50, headers=key)  # warm up
            rows = {
                "me/key": timed(s, "GET", srv.url + "/v1/me", args.requests, headers=key),
                "me/cookie": timed(s, "GET", srv.url + "/v1/me", args.requests, headers=cookie),
                "conv/new": timed(s, "POST", srv.url + "/v1/conversations", args.requests, headers=key,
                                  json={"title": "bench"}),
                "conv/list": timed(s, "GET", srv.url + "/v1/conversations", args.requests, headers=key),
            }
            rate = throughput(srv.url + "/v1/me", key, args.clients, args.seconds)
        finally:
            srv.stop()
    for name, (p50, p95, worst) in rows.items():
        print(f"{label:10} {name:10} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  max {worst:7.2f} ms")
    print(f"{label:10} me/key x{args.clients} clients: {rate:7.0f} requests/s")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "ragd"))
    p.add_argument("--requests", type=int, default=500, help="requests per route, one client")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=5)
    args = p.parse_args()
    measure(args.binary, [], "sqlite", args)
    folder = tempfile.mkdtemp(prefix="ragd-pg-bench-", dir="/tmp")
    url = subprocess.run([FIXTURE, "start", folder], check=True, capture_output=True, text=True).stdout.strip()
    try:
        measure(args.binary, ["--set", "storage.postgres_url=" + url], "postgres", args)
    finally:
        subprocess.run([FIXTURE, "stop", folder], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
