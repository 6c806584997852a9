"""Helpers shared by the test_hardening_*.py modules."""
import os
import tempfile
import time

import requests

from conftest import ADMIN_KEY, Server


def start_modelless(*settings, env=None, data_dir=None):
    """A server without a model (/healthz answers, /readyz does not), with
    `settings` as --set KEY=VALUE; stop it with stop()."""
    args = ["--set", "models.llm=absent-secret-name.gguf"]
    for s in settings:
        args += ["--set", s]
    tmp = tempfile.TemporaryDirectory(prefix="ragd-e2e-hardening-")
    srv = Server(data_dir(tmp.name) if data_dir else tmp.name, extra_args=args, env=env).wait_ready("/healthz")
    srv.tmp = tmp
    return srv


def stop(srv):
    assert srv.stop() == 0, srv.output()
    srv.tmp.cleanup()


def post(server, path, body, key=ADMIN_KEY, **kw):
    return requests.post(server.url + path, headers={"Authorization": f"Bearer {key}"}, json=body, timeout=300, **kw)


def make_user(server, name, quota=None):
    body = {"username": name, "password": "password-" + name, "role": "user"}
    if quota is not None:
        body["token_quota"] = quota
    r = post(server, "/v1/users", body)
    assert r.status_code == 201, r.text
    return r.json()["api_key"]


def metric(server, name):
    """A metric's value, summed over its labels."""
    values = [float(line.split()[1]) for line in requests.get(server.url + "/metrics").text.splitlines()
              if line.startswith(name + " ") or line.startswith(name + "{")]
    assert values, f"{name} not in /metrics"
    return sum(values)


def wait_for(predicate, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
