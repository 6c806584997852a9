"""`cmake --install` into a temporary prefix, then the installed ragd: its
version, the files it installs, the systemd unit, and a server started from
the installed binary answering /healthz and serving the installed pages (not
the source tree's)."""
import os
import re
import subprocess
import tempfile

import pytest
import requests

import conftest

BUILD = os.path.dirname(os.path.abspath(conftest.RAGD))
INSTALLED_FILES = [
    "bin/ragd",
    "share/ragd/web/index.html",
    "share/ragd/web/login.html",
    "share/ragd/web/admin.html",
    "share/ragd/web/static/chat.js",
    "etc/ragd/ragd.jsonc",
    "lib/systemd/system/ragd.service",
    "lib/sysusers.d/ragd.conf",
    "share/doc/ragd/LICENSE",
    "share/doc/ragd/README.md",
    "share/doc/ragd/guide/configuration.md",
]
UNIT_OPTIONS = ["User=ragd", "StateDirectory=ragd", "NoNewPrivileges=yes", "ProtectSystem=strict",
                "ProtectHome=yes", "PrivateTmp=yes", "PrivateDevices=yes", "CapabilityBoundingSet="]


@pytest.fixture(scope="module")
def prefix():
    with tempfile.TemporaryDirectory(prefix="ragd-install-") as tmp:
        done = subprocess.run(["cmake", "--install", BUILD, "--prefix", tmp], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        yield tmp


@pytest.mark.parametrize("path", INSTALLED_FILES)
def test_installs(prefix, path):
    assert os.path.isfile(os.path.join(prefix, path))


def test_version_is_the_project_version(prefix):
    with open(os.path.join(conftest.ROOT, "CMakeLists.txt")) as f:
        version = re.search(r"project\(ragd VERSION (\S+)", f.read()).group(1)
    out = subprocess.run([os.path.join(prefix, "bin/ragd"), "--version"], capture_output=True, text=True)
    assert out.returncode == 0
    assert re.fullmatch(rf"ragd {re.escape(version)}( \([0-9a-zA-Z.\-]+\))?\n", out.stdout), out.stdout


def test_unit_runs_the_installed_binary_confined(prefix):
    with open(os.path.join(prefix, "lib/systemd/system/ragd.service")) as f:
        lines = f.read().splitlines()
    assert (f"ExecStart={prefix}/bin/ragd serve --config {prefix}/etc/ragd/ragd.jsonc "
            "--data ${STATE_DIRECTORY}") in lines
    for option in UNIT_OPTIONS:
        assert option in lines


def test_unit_is_valid_for_systemd(prefix):
    unit = os.path.join(prefix, "lib/systemd/system/ragd.service")
    done = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True)
    # Unknown keys, bad values and a missing ExecStart binary are all reported.
    assert done.returncode == 0 and "ragd.service" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_installed_server_serves_its_own_pages(prefix, monkeypatch):
    # Marked copies: a server that read the source tree's pages would miss the marks.
    marks = {}
    for page, name in [("/", "index.html"), ("/login", "login.html"), ("/static/chat.js", "static/chat.js")]:
        path = os.path.join(prefix, "share/ragd/web", name)
        marks[page] = "/* installed copy */" if name.endswith(".js") else "<!-- installed copy -->"
        with open(path, "a") as f:
            f.write(marks[page])
    monkeypatch.setattr(conftest, "RAGD", os.path.join(prefix, "bin/ragd"))
    with tempfile.TemporaryDirectory(prefix="ragd-install-data-") as data:
        server = conftest.Server(data, extra_args=["--config", os.path.join(prefix, "etc/ragd/ragd.jsonc")])
        try:
            server.wait_ready(path="/healthz", timeout=60)
            for page, mark in marks.items():
                r = requests.get(server.url + page, timeout=10)
                assert r.status_code == 200, page
                assert r.text.endswith(mark), page
        finally:
            assert server.stop() == 0, server.output()
