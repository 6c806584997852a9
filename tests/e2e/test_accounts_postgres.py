"""The accounts store on PostgreSQL (storage.postgres_url): two ragd replicas
with their own data folders on one private PostgreSQL 15 share users, keys,
sessions and one token budget per user, and a restarted replica finds them all.

Most of these tests need no model, so the servers run without one (/healthz
only); those that spend tokens run the small model.
"""
import concurrent.futures
import os
import subprocess
import tempfile
import time
import types

import pytest
import requests

from conftest import ADMIN_KEY, RAGD, ROOT, Server

FIXTURE = os.path.join(ROOT, "tests", "support", "postgres-fixture")


@pytest.fixture(scope="module")
def postgres():
    folder = tempfile.mkdtemp(prefix="ragd-pg-e2e-", dir="/tmp")  # short: it holds the Unix socket
    started = subprocess.run([FIXTURE, "start", folder], capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr
    yield types.SimpleNamespace(url=started.stdout.strip(), folder=folder)
    subprocess.run([FIXTURE, "stop", folder], timeout=120)


def replica(data, url):
    return Server(data, extra_args=["--set", "models.llm=absent.gguf", "--set", "storage.postgres_url=" + url])


def call(server, method, path, key=ADMIN_KEY, **kw):
    return requests.request(method, server.url + path, headers={"Authorization": f"Bearer {key}"}, timeout=60, **kw)


def test_replicas_share_users_keys_and_sessions_across_a_restart(postgres):
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-a-") as data_a, \
            tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-b-") as data_b:
        a = replica(data_a, postgres.url).wait_ready("/healthz")
        b = replica(data_b, postgres.url).wait_ready("/healthz")
        try:
            # The bootstrap admin was made once, by whichever came first; its key works on both.
            assert call(a, "GET", "/v1/me").status_code == 200
            assert call(b, "GET", "/v1/me").status_code == 200
            r = call(a, "POST", "/v1/users", json={"username": "pia", "password": "password-pia"})
            assert r.status_code == 201, r.text
            uid, key = r.json()["user"]["id"], r.json()["api_key"]
            me = call(b, "GET", "/v1/me", key)
            assert me.status_code == 200 and me.json()["username"] == "pia", me.text

            # A session opened on B works on A; signing out on A ends it on B.
            login = requests.post(b.url + "/v1/auth/login", json={"username": "pia", "password": "password-pia"},
                                  timeout=60)
            assert login.status_code == 200, login.text
            cookie = login.headers["Set-Cookie"].split(";")[0]
            assert requests.get(a.url + "/v1/me", headers={"Cookie": cookie}, timeout=60).status_code == 200

            # A replica restarted finds the user, the key and the session.
            assert a.stop() == 0, a.output()
            a = replica(data_a, postgres.url).wait_ready("/healthz")
            users = call(a, "GET", "/v1/users")
            assert users.status_code == 200, users.text
            assert "pia" in [u["username"] for u in users.json()["users"]]
            assert call(a, "GET", "/v1/me", key).status_code == 200
            assert requests.get(a.url + "/v1/me", headers={"Cookie": cookie}, timeout=60).status_code == 200
            assert not os.path.exists(os.path.join(data_a, "app.db"))  # the accounts live in PostgreSQL only

            # Disabled on the restarted A: the key is refused on B at once.
            assert call(a, "PATCH", f"/v1/users/{uid}", json={"disabled": True}).status_code == 200
            assert call(b, "GET", "/v1/me", key).status_code == 401
        finally:
            assert a.stop() == 0, a.output()
            assert b.stop() == 0, b.output()


def test_an_unreachable_database_is_named_at_start(postgres):
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-down-") as data:
        srv = replica(data, "host=" + data + " dbname=ragd connect_timeout=2")
        code = srv.proc.wait(timeout=60)
        srv.log.close()
        assert code != 0
        assert "postgres" in srv.output().lower(), srv.output()


def test_tokens_used_survive_a_restart(postgres):
    """The usage ledger's rows live in PostgreSQL: what a user spent is still
    spent after the server restarts (the small model answers)."""
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-used-") as data:
        srv = Server(data, extra_args=["--set", "storage.postgres_url=" + postgres.url]).wait_ready()
        try:
            r = call(srv, "POST", "/v1/users", json={"username": "tomas", "token_quota": 100000})
            assert r.status_code == 201, r.text
            key = r.json()["api_key"]
            answer = call(srv, "POST", "/v1/chat/completions", key,
                          json={"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8})
            assert answer.status_code == 200, answer.text
            spent = answer.json()["usage"]["total_tokens"]
            assert spent > 0
            assert call(srv, "GET", "/v1/usage", key).json()["used"] == spent
            assert srv.stop() == 0, srv.output()
            srv = Server(data, extra_args=["--set", "storage.postgres_url=" + postgres.url]).wait_ready()
            usage = call(srv, "GET", "/v1/usage", key).json()
            assert usage["used"] == spent, usage
            assert usage["remaining"] == 100000 - spent, usage

            # An outage of the database: /readyz says so (a load balancer stops
            # sending requests here), and the replica recovers once it is back.
            subprocess.run([FIXTURE, "pause", postgres.folder], check=True, timeout=120)
            ready = requests.get(srv.url + "/readyz", timeout=30)
            assert ready.status_code == 503, ready.text
            assert ready.json()["error"]["message"] == "the accounts database is unreachable; try again"
            subprocess.run([FIXTURE, "resume", postgres.folder], check=True, timeout=120)
            deadline = time.time() + 30
            while requests.get(srv.url + "/readyz", timeout=30).status_code != 200:
                assert time.time() < deadline, srv.output()
                time.sleep(0.2)
            assert call(srv, "GET", "/v1/usage", key).json()["used"] == spent
        finally:
            assert srv.stop() == 0, srv.output()


def test_an_app_db_moves_to_postgres(postgres):
    """`ragd user import-app-db` copies a single server's accounts into an
    empty PostgreSQL database, once."""
    created = subprocess.run(["psql", postgres.url, "-qc", "CREATE DATABASE moved"], capture_output=True, text=True)
    assert created.returncode == 0, created.stderr
    url = postgres.url.replace("dbname=postgres", "dbname=moved")
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-move-") as data:
        def user(*args, store=True):
            extra = ["--set", "storage.postgres_url=" + url] if store else []
            return subprocess.run([RAGD, "user", "--data", data, *args, *extra], capture_output=True, text=True,
                                  timeout=120)

        made = user("create", "sam", "--no-password", store=False)  # in <data>/app.db
        assert made.returncode == 0, made.stderr
        key = made.stdout.split("api key: ")[1].split()[0]
        moved = user("import-app-db")
        assert moved.returncode == 0, moved.stderr
        assert "users 1" in moved.stdout, moved.stdout
        listed = user("list")
        assert listed.returncode == 0 and "sam" in listed.stdout, listed.stdout + listed.stderr
        again = user("import-app-db")
        assert again.returncode != 0 and "already holds 1 user" in again.stderr, again.stderr

        srv = replica(data, url).wait_ready("/healthz")
        try:
            assert call(srv, "GET", "/v1/me", key).json()["username"] == "sam"
        finally:
            assert srv.stop() == 0, srv.output()


def test_two_replicas_hold_one_budget_under_200_parallel_requests(postgres):
    """200 requests of one user at once, split across two replicas: together
    they never spend past the user's budget, and the ledger holds exactly what
    the answers' usage blocks said (accounts/quota.h, Shared budget)."""
    budget = 900
    # Rate limits, the in-flight cap and the queue are per replica and not
    # what this test is about: wide open, so that only the budget refuses.
    wide_open = ["--set", "storage.postgres_url=" + postgres.url, "--set", "quota.requests_per_minute=100000",
                 "--set", "quota.tokens_per_minute=100000000", "--set", "quota.max_in_flight=0",
                 "--set", "server.max_connections_per_address=0", "--set", "inference.max_queue=512"]
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-ra-") as data_a, \
            tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-rb-") as data_b:
        a = Server(data_a, extra_args=wide_open).wait_ready()
        b = Server(data_b, extra_args=wide_open).wait_ready()
        try:
            r = call(a, "POST", "/v1/users", json={"username": "ines", "token_quota": budget})
            assert r.status_code == 201, r.text
            key = r.json()["api_key"]

            def ask(i):
                replica_ = (a, b)[i % 2]
                return i % 2, call(replica_, "POST", "/v1/chat/completions", key,
                                   json={"messages": [{"role": "user", "content": f"Say hello to number {i}."}],
                                         "max_tokens": 6})

            with concurrent.futures.ThreadPoolExecutor(max_workers=200) as pool:
                results = list(pool.map(ask, range(200)))
            spent, answered, refused = 0, [0, 0], 0
            for side, r in results:
                if r.status_code == 200:
                    spent += r.json()["usage"]["total_tokens"]
                    answered[side] += 1
                else:
                    assert r.status_code == 429 and r.json()["error"]["type"] == "quota_exceeded", r.text
                    refused += 1
            assert answered[0] > 0 and answered[1] > 0 and refused > 0, (answered, refused)
            assert 0 < spent <= budget, spent
            # The ledger, as either replica reads it, equals the usage blocks.
            for srv in (a, b):
                usage = call(srv, "GET", "/v1/usage", key).json()
                assert usage["used"] == spent and usage["reserved"] == 0, usage
                days = usage["days"]
                assert sum(d["prompt_tokens"] + d["completion_tokens"] for d in days) == spent, usage
                assert sum(d["requests"] for d in days) == answered[0] + answered[1], usage
        finally:
            assert a.stop() == 0, a.output()
            assert b.stop() == 0, b.output()


def test_two_replicas_draw_from_one_rate_limit(postgres):
    """The per-minute buckets live in PostgreSQL: a user allowed 10 requests a
    minute gets 10 across both replicas, not 10 on each."""
    limits = ["--set", "storage.postgres_url=" + postgres.url, "--set", "quota.requests_per_minute=10",
              "--set", "quota.max_in_flight=0"]
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-la-") as data_a, \
            tempfile.TemporaryDirectory(prefix="ragd-e2e-pg-lb-") as data_b:
        a = Server(data_a, extra_args=limits).wait_ready()
        b = Server(data_b, extra_args=limits).wait_ready()
        try:
            r = call(a, "POST", "/v1/users", json={"username": "lea"})
            assert r.status_code == 201, r.text
            key = r.json()["api_key"]

            def ask(i):
                return call((a, b)[i % 2], "POST", "/v1/chat/completions", key,
                            json={"messages": [{"role": "user", "content": "Hi."}], "max_tokens": 1})

            with concurrent.futures.ThreadPoolExecutor(max_workers=30) as pool:
                results = list(pool.map(ask, range(30)))
            answered = [i % 2 for i, r in enumerate(results) if r.status_code == 200]
            for r in results:
                if r.status_code != 200:
                    assert r.status_code == 429 and r.json()["error"]["type"] == "rate_limit_error", r.text
                    assert int(r.headers["Retry-After"]) >= 1
            assert len(answered) == 10, [r.status_code for r in results]
        finally:
            assert a.stop() == 0, a.output()
            assert b.stop() == 0, b.output()
