#!/usr/bin/env python3
"""Soak of a real `ragd serve`: many concurrent clients on mixed routes for a
while, some of them hanging up mid-stream.

The server gets its own data folder (docs/sample ingested), the small model
and rate limits high enough that the clients measure the server, not the
limiter; the clients are spread over several users (quota.max_in_flight is
per user and stays at its default, so 429 can still happen). Each client
loops over a random route: /v1/chat/completions streamed and not,
/v1/completions, /v1/embeddings, /v1/ask streamed and not, /tokenize; a
share of the streamed requests is dropped after a few events.

Failures: any status other than 200 and the documented 429/503, a transport
error, a stream that ends without `[DONE]` (or carries an error event) when
the client did not hang up, and a seeded request whose streamed text differs
from its non-streamed text (checked idle, under load, and idle again).
Prints responses by route and status, server RSS (VmRSS) before the load and
after an idle pause, peak RSS (VmHWM), and ragd_requests_running /
ragd_requests_waiting at the end (both must be 0).

Usage: python3 bench/serve/soak.py [--binary build/ragd] [--clients 32]
       [--seconds 180] [--disconnect 0.25] [--idle 10]
Exit status 1 when a failure was seen.
"""
import argparse
import collections
import json
import os
import random
import sys
import tempfile
import threading
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ragd_process import RagdProcess  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "rk-soak-admin-key-0123456789abcdefghijklmnop"
MODEL = "gemma-3-270m-q4_k_m.gguf"
DOCUMENTED = {429, 503}
QUESTIONS = ["How do I install ragd?", "What formats can be uploaded?", "How are answers cited?",
             "What does the quota limit?", "Which models are supported?"]
PROMPTS = ["Write a short poem about the sea.", "Explain what a hash table is.", "List three colours.",
           "Tell a long story about a lighthouse keeper.", "What is 12 times 7?"]


def start_ragd(binary, data, settings):
    args = ["--ingest-if-empty", os.path.join(ROOT, "docs", "sample")]
    for s in settings:
        args += ["--set", s]
    env = dict(os.environ, RAGD_ADMIN_USER="admin", RAGD_ADMIN_PASSWORD="correct horse battery staple",
               RAGD_ADMIN_API_KEY=KEY, RAGD_MODELS_LLM=MODEL)
    return RagdProcess(binary, data, args, env).wait_ready()


def sse_events(resp):
    """Yields each `data:` payload of an event stream."""
    for line in resp.iter_lines(decode_unicode=True):
        if line and line.startswith("data: "):
            yield line[6:]


def stream_text(events, kind):
    """Collects the text of a streamed answer; returns (text, done, error)."""
    text, done, error = [], False, None
    for data in events:
        if data == "[DONE]":
            done = True
            break
        obj = json.loads(data)
        if "error" in obj and kind != "ask" or obj.get("type") == "error":
            error = obj.get("error")
            continue
        if kind == "ask":
            if obj.get("type") == "delta":
                text.append(obj.get("content", ""))
        elif kind == "chat":
            for c in obj.get("choices", []):
                text.append((c.get("delta") or {}).get("content") or "")
        else:
            for c in obj.get("choices", []):
                text.append(c.get("text") or "")
    return "".join(text), done, error


def seeded_pair(url, key, seed):
    """A sampled (temperature 0.8, fixed seed) chat answer, non-streamed then
    streamed: (same, plain text, streamed text)."""
    body = {"messages": [{"role": "user", "content": "Describe a walk in a forest."}], "max_tokens": 96,
            "temperature": 0.8, "top_p": 0.95, "seed": seed}
    h = {"Authorization": f"Bearer {key}"}
    for attempt in range(60):  # under load the queue may answer 429/503: wait and retry
        r = requests.post(url + "/v1/chat/completions", headers=h, json=body, timeout=600)
        if r.status_code not in DOCUMENTED:
            break
        time.sleep(1)
    r.raise_for_status()
    plain = r.json()["choices"][0]["message"]["content"]
    for attempt in range(60):
        r = requests.post(url + "/v1/chat/completions", headers=h, json=dict(body, stream=True), stream=True,
                          timeout=600)
        if r.status_code not in DOCUMENTED:
            break
        r.close()
        time.sleep(1)
    r.raise_for_status()
    streamed, done, error = stream_text(sse_events(r), "chat")
    r.close()
    return plain == streamed and done and error is None, plain, streamed


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.by_route = collections.defaultdict(collections.Counter)
        self.failures = []
        self.dropped = 0
        self.latency = collections.defaultdict(list)

    def add(self, route, status, seconds=None, failure=None):
        with self.lock:
            self.by_route[route][status] += 1
            if seconds is not None:
                self.latency[route].append(seconds)
            if failure:
                self.failures.append(f"{route}: {failure}")


def one_request(url, session, key, rng, tally, disconnect_share):
    h = {"Authorization": f"Bearer {key}"}
    route = rng.choice(["chat", "chat-stream", "chat-stream", "completions", "completions-stream", "embeddings",
                        "ask", "ask-stream", "tokenize"])
    max_tokens = rng.choice([16, 48, 128, 256])
    sample = {"temperature": rng.choice([0, 0.7, 1.0]), "seed": rng.randrange(1 << 30)}
    if route.startswith("chat"):
        path, kind = "/v1/chat/completions", "chat"
        body = dict(sample, messages=[{"role": "user", "content": rng.choice(PROMPTS)}], max_tokens=max_tokens)
    elif route.startswith("completions"):
        path, kind = "/v1/completions", "completions"
        body = dict(sample, prompt=rng.choice(PROMPTS), max_tokens=max_tokens)
    elif route.startswith("ask"):
        path, kind = "/v1/ask", "ask"
        body = {"question": rng.choice(QUESTIONS), "max_tokens": max_tokens}
    elif route == "embeddings":
        path, kind = "/v1/embeddings", "embeddings"
        body = {"input": [rng.choice(PROMPTS) for _ in range(rng.randint(1, 8))]}
    else:
        path, kind = "/tokenize", "tokenize"
        body = {"content": rng.choice(PROMPTS) * rng.randint(1, 50)}
    streamed = route.endswith("-stream")
    if streamed:
        body["stream"] = True
    t0 = time.time()
    try:
        r = session.post(url + path, headers=h, json=body, stream=streamed, timeout=600)
    except requests.RequestException as e:
        tally.add(route, "transport error", failure=f"{type(e).__name__}: {e}")
        return
    if r.status_code != 200:
        failure = None if r.status_code in DOCUMENTED else f"{r.status_code} {r.text[:200]}"
        tally.add(route, r.status_code, failure=failure)
        r.close()
        return
    if not streamed:
        try:
            r.json()
        except ValueError:
            tally.add(route, "bad body", failure=f"200 with a body that is not JSON: {r.text[:200]}")
            return
        tally.add(route, 200, time.time() - t0)
        return
    if rng.random() < disconnect_share:
        # Hang up after a few events, as a client that goes away does.
        wanted, seen = rng.randint(0, 6), 0
        try:
            for _ in sse_events(r):
                seen += 1
                if seen > wanted:
                    break
        except requests.RequestException as e:
            tally.add(route, "transport error", failure=f"before the hang-up: {e}")
            r.close()
            return
        r.close()
        with tally.lock:
            tally.dropped += 1
        tally.add(route, "200, dropped by the client")
        return
    try:
        _, done, error = stream_text(sse_events(r), kind)
    except (requests.RequestException, ValueError) as e:
        tally.add(route, "transport error", failure=f"mid-stream: {type(e).__name__}: {e}")
        r.close()
        return
    r.close()
    if error is not None:
        documented = isinstance(error, dict) and error.get("code") in DOCUMENTED
        tally.add(route, f"200, error event {error.get('code') if isinstance(error, dict) else error}",
                  failure=None if documented else f"error event {error}")
    elif not done:
        tally.add(route, "200, no [DONE]", failure="stream ended without [DONE]")
    else:
        tally.add(route, 200, time.time() - t0)


def client(url, key, seed, deadline, tally, disconnect_share):
    rng = random.Random(seed)
    with requests.Session() as session:
        while time.time() < deadline:
            one_request(url, session, key, rng, tally, disconnect_share)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ragd"))
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--users", type=int, default=8, help="users the clients are spread over")
    ap.add_argument("--disconnect", type=float, default=0.25, help="share of streams dropped mid-way")
    ap.add_argument("--phases", type=int, default=1,
                    help="load periods of --seconds each, on the same server, with RSS after each (growth "
                         "that stops is a high-water mark, growth that goes on a leak)")
    ap.add_argument("--idle", type=float, default=10, help="seconds of idle before the 'after' figures")
    ap.add_argument("--set", action="append", default=[], help="extra ragd settings, key=value")
    args = ap.parse_args()

    settings = ["quota.requests_per_minute=1000000", "quota.tokens_per_minute=1000000000",
                "quota.tokens_per_period=1000000000000", *args.set]
    failures = []
    with tempfile.TemporaryDirectory(prefix="ragd-soak-") as data:
        srv = start_ragd(args.binary, data, settings)
        try:
            h = {"Authorization": f"Bearer {KEY}"}
            keys = []
            for i in range(args.users):
                r = requests.post(srv.url + "/v1/users", headers=h, timeout=30,
                                  json={"username": f"soak{i}", "password": f"soak password {i}", "role": "user",
                                        "token_quota": 1000000000000})
                r.raise_for_status()
                keys.append(r.json()["api_key"])
            # Warm every route once so "before" holds the models and caches.
            warm = Tally()
            for seed in range(20):
                one_request(srv.url, requests, keys[0], random.Random(seed), warm, 0)
            same_idle, plain, streamed = seeded_pair(srv.url, keys[0], 1234)
            if not same_idle:
                failures.append(f"seeded request, idle: plain {plain!r} != streamed {streamed!r}")
            rss_before, _ = srv.memory_kib()
            caches_before = srv.metrics("ragd_kv_cache_bytes", "ragd_prefix_cache_bytes")

            tally = Tally()
            elapsed, per_phase = 0.0, []
            for phase in range(args.phases):
                deadline = time.time() + args.seconds
                threads = [threading.Thread(target=client, args=(srv.url, keys[i % len(keys)], 1000 * (phase + 1) + i,
                                                                 deadline, tally, args.disconnect))
                           for i in range(args.clients)]
                t0 = time.time()
                for t in threads:
                    t.start()
                if phase == 0:
                    time.sleep(min(args.seconds / 2, 60))
                    same_load, plain_l, streamed_l = seeded_pair(srv.url, keys[-1], 99)
                    if not same_load:
                        failures.append(f"seeded request, under load: plain {plain_l!r} != streamed {streamed_l!r}")
                for t in threads:
                    t.join()
                elapsed += time.time() - t0
                time.sleep(args.idle)
                m = srv.metrics("ragd_requests_running", "ragd_requests_waiting", "ragd_kv_cache_bytes",
                                "ragd_prefix_cache_bytes")
                per_phase.append((srv.memory_kib()[0], m["ragd_prefix_cache_bytes"]))
            rss_after, rss_peak = srv.memory_kib()
            same_after, plain_a, streamed_a = seeded_pair(srv.url, keys[0], 1234)
            if not same_after:
                failures.append(f"seeded request, idle after: plain {plain_a!r} != streamed {streamed_a!r}")
            if same_after and plain_a != plain:
                failures.append(f"seeded request gave another text after the load: {plain!r} then {plain_a!r}")
            if m["ragd_requests_running"] != 0 or m["ragd_requests_waiting"] != 0:
                failures.append(f"slots held after the load: {m}")
            alive = srv.proc.poll() is None
            if not alive:
                failures.append(f"server exited with {srv.proc.returncode}")
        finally:
            rc = srv.stop()
        if rc != 0:
            failures.append(f"server's exit status on SIGTERM: {rc}")
        failures = tally.failures + failures

    total = sum(sum(c.values()) for c in tally.by_route.values())
    print(f"ragd soak: {args.clients} clients over {args.users} users, {elapsed:.0f} s in {args.phases} period(s), model {MODEL}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    print(f"\n{'route':<20} {'status':<32} {'count':>7} {'p50 s':>7} {'p95 s':>7}")
    for route in sorted(tally.by_route):
        lat = sorted(tally.latency.get(route, []))
        for status, n in sorted(tally.by_route[route].items(), key=lambda kv: str(kv[0])):
            p50 = f"{lat[len(lat) // 2]:.2f}" if status == 200 and lat else ""
            p95 = f"{lat[min(len(lat) - 1, int(len(lat) * 0.95))]:.2f}" if status == 200 and lat else ""
            print(f"{route:<20} {str(status):<32} {n:>7} {p50:>7} {p95:>7}")
    by_status = collections.Counter()
    for c in tally.by_route.values():
        for status, n in c.items():
            by_status[status] += n
    print(f"\n{'figure':<56} value")
    print(f"{'responses':<56} {total} ({total / elapsed:.1f}/s)")
    for status, n in sorted(by_status.items(), key=lambda kv: str(kv[0])):
        print(f"{'  ' + str(status):<56} {n}")
    print(f"{'streams dropped by the client mid-way':<56} {tally.dropped}")
    print(f"{'failures (not 200/429/503, or a broken stream)':<56} {len(tally.failures)}")
    print(f"{'server RSS before the load (warm)':<56} {rss_before / 1024:.1f} MiB")
    print(f"{'server RSS after the load + ' + str(int(args.idle)) + ' s idle':<56} {rss_after / 1024:.1f} MiB "
          f"({(rss_after - rss_before) / 1024:+.1f} MiB)")
    if len(per_phase) > 1:
        for i, (rss, prefix) in enumerate(per_phase):
            print(f"{'  after load period ' + str(i + 1) + ': RSS, prefix cache':<56} {rss / 1024:.1f} MiB, "
                  f"{prefix / 2**20:.1f} MiB")
    print(f"{'server peak RSS (VmHWM)':<56} {rss_peak / 1024:.1f} MiB")
    print(f"{'prefix cache (KV kept for prompt prefixes) before/after':<56} "
          f"{caches_before['ragd_prefix_cache_bytes'] / 2**20:.1f} / {m['ragd_prefix_cache_bytes'] / 2**20:.1f} MiB")
    print(f"{'RSS growth not explained by the prefix cache':<56} "
          f"{(rss_after - rss_before) / 1024 - (m['ragd_prefix_cache_bytes'] - caches_before['ragd_prefix_cache_bytes']) / 2**20:+.1f} MiB")
    print(f"{'KV cache of running answers at the end':<56} {m['ragd_kv_cache_bytes'] / 2**20:.1f} MiB")
    print(f"{'ragd_requests_running / _waiting at the end':<56} {m['ragd_requests_running']:.0f} / "
          f"{m['ragd_requests_waiting']:.0f}")
    print(f"{'seeded request, streamed == non-streamed':<56} idle {same_idle}, under load {same_load}, "
          f"after {same_after}")
    print(f"{'server exit status on SIGTERM':<56} {rc}")
    for f in failures[:30]:
        print("FAILURE:", f)
    if len(failures) > 30:
        print(f"... and {len(failures) - 30} more failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
