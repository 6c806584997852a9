#!/usr/bin/env python3
"""A ragd gateway in front of a pool of upstream ragd workers, on one machine.

Starts, on loopback ports: one worker with all the compute threads, two
workers with half of them each, and a gateway in front of each set (models.llm
names the workers as a pool; the gateway keeps the tokenizer, quota and
accounting). Then, for each pool, --clients clients in closed loop for
--seconds stream chat completions (greedy, --max-tokens, the end token
forbidden so every answer has the same length) and the bench prints the
aggregate completion tokens/s and the time to first token p50/p95. Last, the
latency the gateway adds: one client, a one-token non-streamed completion
asked alternately of the worker directly and through the gateway, the
difference of the medians and p95s, and the gateway's own time per request
(its logged duration less the worker's for the same request, from the two
request logs: free of the worker's noise). Both pools share the machine's cores:
two workers on N cores are two processes of N/2 threads each, not two
machines. Standard library only; loopback only; bounded in time.

  python3 bench/serve/upstream_bench.py [--binary build/ragd] [--clients 4] [--seconds 30]
                                        [--max-tokens 64] [--latency-requests 100]
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_bench import KEY, ROOT, Server, percentile  # noqa: E402

KEY_ENV = "RAGD_BENCH_UPSTREAM_KEY"
PROMPTS = ["Explain what a hash map is.", "Write a haiku about compilers.", "Describe the TCP handshake.",
           "What is a B-tree used for?", "Summarize how a garbage collector works."]


def post(port, path, body, stream=False):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    start = time.perf_counter()
    conn.request("POST", path, json.dumps(body), {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {r.read()[:200]!r}")
    if not stream:
        out = json.loads(r.read())
        conn.close()
        return time.perf_counter() - start, out
    first, usage = None, None
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        ev = json.loads(line[6:])
        if "error" in ev:
            raise RuntimeError(ev["error"]["message"])
        if ev.get("usage"):
            usage = ev["usage"]
        if first is None and any((c.get("delta") or {}).get("content") for c in ev.get("choices", [])):
            first = time.perf_counter() - start
    conn.close()
    return first, usage


def chat_body(model, prompt, max_tokens, stream, end_ids):
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "temperature": 0, "stream": stream, "logit_bias": {str(i): -100 for i in end_ids}}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


def load(port, model, clients, seconds, max_tokens, end_ids):
    """Closed loop: returns (completion tokens/s, TTFT list, errors)."""
    ttft, errors, tokens = [], [], [0]
    lock = threading.Lock()
    stop_at = time.perf_counter() + seconds

    def client(i):
        n = i
        while time.perf_counter() < stop_at:
            try:
                first, usage = post(port, "/v1/chat/completions",
                                    chat_body(model, PROMPTS[n % len(PROMPTS)], max_tokens, True, end_ids), True)
                with lock:
                    ttft.append(first)
                    tokens[0] += usage["completion_tokens"]
            except Exception as e:  # noqa: BLE001 - counted and shown
                with lock:
                    errors.append(str(e))
            n += 1

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tokens[0] / (time.perf_counter() - t0), ttft, errors


# The end-of-turn and end-of-text ids of the models this runs with, forbidden
# so that every answer runs to max_tokens.
END_IDS = {"qwen2.5": [151643, 151645], "gemma-3": [1, 106]}


def end_token_ids(model_id):
    for prefix, ids in END_IDS.items():
        if model_id.startswith(prefix):
            return ids
    raise SystemExit(f"--model: no end-token ids known for {model_id} (see END_IDS)")


def logged(server, route, n):
    """Durations (ms) of the last n requests on `route` in the server's request log."""
    with open(os.path.join(server.data, "requests.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r["duration_ms"] for r in rows if r.get("route") == route][-n:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ragd"))
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", help="the workers' GGUF")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--latency-requests", type=int, default=100)
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    model_id = os.path.basename(args.model)[:-5]
    os.environ[KEY_ENV] = KEY
    # Every request reaches a worker as the gateway's one API user: no cap on
    # that user's requests in flight (an environment key a build without it ignores).
    os.environ["RAGD_QUOTA_MAX_IN_FLIGHT"] = "0"
    worker_settings = ["models.llm=" + args.model]

    def pool(workers):
        entry = {"id": "pool", "upstream": [w.url for w in workers], "model": model_id, "api_key_env": KEY_ENV,
                 "concurrency": max(1, args.clients), "tokenizer": args.model}
        return Server(args.binary, ["models.llm=" + json.dumps(entry)])

    started = []
    try:
        one = Server(args.binary, worker_settings + [f"inference.threads={cores}"])
        started.append(one)
        two = [Server(args.binary, worker_settings + [f"inference.threads={max(1, cores // 2)}"]) for _ in range(2)]
        started += two
        gw1, gw2 = pool([one]), pool(two)
        started += [gw1, gw2]
        end_ids = end_token_ids(model_id)
        print(f"machine: {cores} cores; model {model_id}; {args.clients} clients, {args.seconds:.0f} s per pool, "
              f"{args.max_tokens} tokens per answer (streamed chat completions, greedy)")
        print("both pools share these cores: 2 workers are 2 processes of "
              f"{max(1, cores // 2)} thread(s) each, 1 worker is one process of {cores}")
        print(f"{'pool':<28}{'tok/s':>9}{'TTFT p50':>11}{'TTFT p95':>11}{'answers':>9}{'errors':>8}")
        for name, gw in [("1 worker  (gateway)", gw1), ("2 workers (gateway)", gw2)]:
            post(gw.port, "/v1/chat/completions", chat_body("pool", PROMPTS[0], 4, False, end_ids))  # warm
            tok_s, ttft, errors = load(gw.port, "pool", args.clients, args.seconds, args.max_tokens, end_ids)
            print(f"{name:<28}{tok_s:9.1f}{percentile(ttft, 50) * 1000:9.0f}ms{percentile(ttft, 95) * 1000:9.0f}ms"
                  f"{len(ttft):9d}{len(errors):8d}")
            for e in sorted(set(errors))[:3]:
                print("    error:", e)

        direct, through = [], []
        for i in range(args.latency_requests):
            body_direct = chat_body(model_id, PROMPTS[i % len(PROMPTS)], 1, False, [])
            body_pool = chat_body("pool", PROMPTS[i % len(PROMPTS)], 1, False, [])
            order = [(direct, one.port, body_direct), (through, gw1.port, body_pool)]
            for out, port, body in (order if i % 2 == 0 else reversed(order)):
                out.append(post(port, "/v1/chat/completions", body)[0])
        print(f"gateway latency, one client, {args.latency_requests} one-token chat completions each way:")
        print(f"  direct to the worker   p50 {statistics.median(direct) * 1000:7.1f} ms   "
              f"p95 {percentile(direct, 95) * 1000:7.1f} ms")
        print(f"  through the gateway    p50 {statistics.median(through) * 1000:7.1f} ms   "
              f"p95 {percentile(through, 95) * 1000:7.1f} ms")
        print(f"  added by the gateway   p50 {(statistics.median(through) - statistics.median(direct)) * 1000:7.1f} ms"
              f"   p95 {(percentile(through, 95) - percentile(direct, 95)) * 1000:7.1f} ms")
        # The same requests in both request logs: the gateway's duration less
        # the worker's is the gateway's own time, without the worker's noise.
        own = [g - w for g, w in zip(logged(gw1, "/v1/chat/completions", args.latency_requests),
                                      logged(one, "/v1/completions", args.latency_requests))]
        print(f"  gateway's own time per request (its logged duration less the worker's): "
              f"p50 {statistics.median(own):.1f} ms   p95 {percentile(own, 95):.1f} ms")
    finally:
        for s in started:
            s.stop()


if __name__ == "__main__":
    main()
