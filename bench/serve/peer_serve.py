#!/usr/bin/env python3
"""ragd beside llama-server: the same streamed chat workload on the same GGUF.

  python3 bench/serve/peer_serve.py --llama-server PATH [--model FILE] [--clients 1,8]
                                    [--seconds 30] [--max-tokens 96] [--np 8] [--threads 2]

Starts one server at a time on a loopback port — `ragd serve` with only
--model loaded, then `llama-server -m FILE -np N -t T` — and for each client
count runs that many clients in closed loop for --seconds, each sending the
next prompt of a fixed list to POST /v1/chat/completions ("stream": true,
greedy, max_tokens). The prompts are RAG-shaped and identical for both: a
system message with answering rules, then three passages of docs/sample and a
question of tests/data/sample_questions.jsonl (about 600-900 tokens each).
Prints per server and client count: requests, errors, aggregate generated
tokens/s (completion tokens streamed inside the window / window), time to
first token p50/p95. The first --warmup seconds of each level are left out.
Standard library only; loopback only; bounded in time. Build llama-server from
the llama-cpp-python sdist's vendor/llama.cpp (see shared engine notes: with
-DGGML_NATIVE=OFF and the AVX-512 VNNI options named).
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "rk-bench-admin-key-0123456789abcdefghijklmnop"
RULES = ("Answer the question using only the numbered sources. Cite each fact like [1]. If the sources do "
         "not answer it, say that the documents do not say. Answer in the language of the question.")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prompts():
    """RAG-shaped conversations: three passages of the user guide and a question."""
    paragraphs = []
    for name in sorted(os.listdir(os.path.join(ROOT, "docs", "sample"))):
        with open(os.path.join(ROOT, "docs", "sample", name), encoding="utf-8") as f:
            paragraphs += [p.strip() for p in f.read().split("\n\n") if len(p.strip()) > 300]
    with open(os.path.join(ROOT, "tests", "data", "sample_questions.jsonl"), encoding="utf-8") as f:
        questions = [json.loads(line)["question"] for line in f if line.strip()]
    out = []
    for i, q in enumerate(questions):
        sources = "\n\n".join(f"[{n + 1}] {paragraphs[(3 * i + n) % len(paragraphs)]}" for n in range(3))
        out.append([{"role": "system", "content": RULES},
                    {"role": "user", "content": f"Sources:\n{sources}\n\nQuestion: {q}"}])
    return out


def wait_ready(port, proc, path, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit("server not ready")


def start_ragd(binary, model, threads, data):
    port = free_port()
    env = dict(os.environ, RAGD_ADMIN_API_KEY=KEY, RAGD_ADMIN_USER="admin", RAGD_ADMIN_PASSWORD="bench-password")
    proc = subprocess.Popen([binary, "serve", "--port", str(port), "--data", data, "--set", f"models.llm={model}",
                             "--set", f"inference.threads={threads}", "--set", "quota.tokens_per_period=1000000000000",
                             "--set", "quota.requests_per_minute=0", "--set", "quota.tokens_per_minute=0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wait_ready(port, proc, "/readyz")
    return proc, port


def start_llama_server(binary, model, n_parallel, threads):
    port = free_port()
    proc = subprocess.Popen([binary, "-m", model, "-np", str(n_parallel), "-c", str(4096 * n_parallel),
                             "-t", str(threads), "--port", str(port), "--host", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(port, proc, "/health")
    return proc, port


def stream_chat(port, messages, max_tokens):
    """One streamed chat completion: (ttft seconds, [token arrival times], completion tokens)."""
    body = json.dumps({"messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": True,
                       "stream_options": {"include_usage": True}})
    start = time.time()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", "/v1/chat/completions", body,
                 {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
    arrivals, usage = [], None
    for raw in resp:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if chunk.get("usage"):
            usage = chunk["usage"]["completion_tokens"]
        for choice in chunk.get("choices", []):
            if choice.get("delta", {}).get("content"):
                arrivals.append(time.time())
    conn.close()
    if not arrivals:
        raise RuntimeError("no tokens")
    return arrivals[0] - start, arrivals, usage if usage is not None else len(arrivals)


def run_level(port, convs, clients, seconds, warmup, max_tokens):
    t0 = time.time()
    window = (t0 + warmup, t0 + warmup + seconds)
    lock = threading.Lock()
    results = {"tokens": 0, "ttft": [], "requests": 0, "errors": 0}

    def client(i):
        k = i
        while time.time() < window[1]:
            started = time.time()
            try:
                ttft, arrivals, n = stream_chat(port, convs[k % len(convs)], max_tokens)
            except Exception:  # noqa: BLE001 -- counted, the run goes on
                with lock:
                    results["errors"] += 1
                continue
            k += clients
            # Tokens counted by arrival time inside the window (per-token share of the usage count).
            inside = sum(1 for t in arrivals if window[0] <= t < window[1]) * n / max(len(arrivals), 1)
            with lock:
                results["tokens"] += inside
                if window[0] <= started < window[1]:
                    results["requests"] += 1
                    results["ttft"].append(ttft)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ttft = sorted(results["ttft"]) or [float("nan")]
    p = lambda q: ttft[min(len(ttft) - 1, int(q * (len(ttft) - 1) + 0.5))]  # noqa: E731
    return results["tokens"] / seconds, p(0.5), p(0.95), results["requests"], results["errors"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ragd"))
    ap.add_argument("--llama-server", required=True)
    ap.add_argument("--model", default=os.path.join(os.environ.get("RAGD_MODELS") or
                                                    os.path.expanduser("~/.cache/ragd/models"),
                                                    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
    ap.add_argument("--clients", default="1,8")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--np", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    convs = prompts()
    levels = [int(c) for c in args.clients.split(",")]
    print(f"model {os.path.basename(args.model)}, {os.cpu_count()} cores, {args.threads} threads, "
          f"{len(convs)} prompts, max_tokens {args.max_tokens}, {args.seconds:.0f} s per level")
    print(f"{'server':>12} | {'clients':>7} | {'gen tok/s':>9} | {'TTFT p50 / p95 (s)':>18} | requests | errors")
    table = {}
    for name in ("ragd", "llama-server"):
        with tempfile.TemporaryDirectory(prefix="ragd-peer-serve-") as data:
            if name == "ragd":
                proc, port = start_ragd(args.binary, args.model, args.threads, data)
            else:
                proc, port = start_llama_server(args.llama_server, args.model, args.np, args.threads)
            try:
                for c in levels:
                    tps, p50, p95, n, err = run_level(port, convs, c, args.seconds, args.warmup, args.max_tokens)
                    table[(name, c)] = tps
                    print(f"{name:>12} | {c:>7} | {tps:9.1f} | {p50:8.2f} / {p95:7.2f} | {n:>8} | {err:>6}",
                          flush=True)
            finally:
                proc.terminate()
                proc.wait(timeout=60)
    for c in levels:
        if table.get(("llama-server", c)):
            print(f"{c} clients: ragd / llama-server = {table[('ragd', c)] / table[('llama-server', c)]:.2f}x")


if __name__ == "__main__":
    main()
