"""A `ragd serve` child process for the Python benchmarks: started on a free
loopback port with a data folder and the admin credentials given, waited
for, measured (/proc/<pid>/status, /metrics), stopped or killed."""
import os
import shutil
import signal
import socket
import subprocess
import time

import requests


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memory_kib(pid):
    """(VmRSS, VmHWM) of process `pid` in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


class RagdProcess:
    def __init__(self, binary, data, extra_args=(), env=None, log_path=None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path or os.path.join(data, "server.log")
        self.log = open(self.log_path, "a")
        args = [binary, "serve", "--port", str(self.port), "--data", data, *extra_args]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def wait_ready(self, path="/readyz", timeout=600):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ragd exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if requests.get(self.url + path, timeout=2).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"ragd not ready after {timeout} s; see {self.log_path}")

    def memory_kib(self):
        """(VmRSS, VmHWM) in KiB."""
        return memory_kib(self.proc.pid)

    def metrics(self, *names):
        """Each named metric, summed over its labels."""
        text = requests.get(self.url + "/metrics", timeout=10).text
        return {n: sum(float(line.split()[-1]) for line in text.splitlines()
                       if line.startswith(n + " ") or line.startswith(n + "{")) for n in names}

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def stop(self):
        """SIGTERM, then the exit status."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        return self.proc.returncode


def report_failures(failures, work, keep):
    """Prints each failure; keeps the work folder when asked or when
    something failed (for its data and server log), else removes it.
    Returns the exit status: 1 on any failure."""
    for f in failures:
        print("FAILURE:", f)
    if keep or failures:
        print(f"data folder and server log kept in {work}")
    else:
        shutil.rmtree(work)
    return 1 if failures else 0
