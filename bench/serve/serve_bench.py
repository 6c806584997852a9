#!/usr/bin/env python3
"""Load generator for a running ragd: streaming RAG questions from N clients.

Starts its own `ragd serve` on a loopback port (sample corpus, a temporary
data folder) unless --url is given, then for each client count runs that many
clients in closed loop for --seconds (--rounds times, in turn with the other
counts, figures pooled): each asks the next question of
tests/data/sample_questions.jsonl on POST /v1/ask with "stream": true. Prints,
per client count: requests, errors, aggregate generated tokens/s, time to first
token p50/p95, inter-token latency p50/p95, and the share of prompt tokens that
came from the prefix cache. The figures are those of the steady state: the
first --warmup seconds of a level (all clients sending their first question
at the same instant) and the drain after it (clients finishing their last
answer one by one) are left out: throughput counts the tokens streamed inside
the window, latencies the requests started inside it. What the opening burst
costs is printed on a line of its own. Then compares decode speed with
speculative decoding on and off (two servers, one client asking each question
of both in turn, greedy) and prints the draft acceptance rate and the share
of the answer tokens that accepted drafts gave (the speed-up they would bring
if verifying them cost nothing). Standard
library only; loopback only; bounded in time.

  python3 bench/serve/serve_bench.py [--clients 1,4,8,16] [--seconds 40] [--rounds 1] [--warmup 5]
                                     [--max-tokens 96] [--spec-rounds 1]
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "rk-bench-admin-key-0123456789abcdefghijklmnop"


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Server:
    """A ragd child process on a free loopback port."""

    def __init__(self, binary, settings):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.data = tempfile.mkdtemp(prefix="ragd-bench-")
        args = [binary, "serve", "--port", str(self.port), "--data", self.data,
                "--ingest-if-empty", os.path.join(ROOT, "docs", "sample")]
        # One admin key plays every client: lift its per-user limits so the
        # bench measures the inference loop, not the rate limiter.
        for kv in ["quota.requests_per_minute=0", "quota.tokens_per_minute=0",
                   "quota.tokens_per_period=1000000000000", *settings]:
            args += ["--set", kv]
        env = dict(os.environ, RAGD_ADMIN_API_KEY=KEY, RAGD_ADMIN_PASSWORD="bench password 123")
        self.log = open(os.path.join(self.data, "server.log"), "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 300
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"ragd exited with {self.proc.returncode}; log in {self.data}/server.log")
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise SystemExit("ragd did not become ready")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)


def ask(url, question, max_tokens, temperature=None):
    """One streamed /v1/ask. Returns a dict of timings and counts, or raises."""
    u = urllib.parse.urlparse(url)
    body = {"question": question, "stream": True, "max_tokens": max_tokens}
    if temperature is not None:
        body["temperature"] = temperature
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    start = time.perf_counter()
    conn.request("POST", "/v1/ask", json.dumps(body),
                 {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {r.read()[:200]!r}")
    token_times, done = [], None
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        ev = json.loads(line[6:])
        if ev["type"] == "delta":
            token_times.append(time.perf_counter())
        elif ev["type"] == "done":
            done = ev
        elif ev["type"] == "error":
            raise RuntimeError(ev["error"]["message"])
    conn.close()
    if done is None:
        raise RuntimeError("stream ended without a done event")
    return {"start": start, "token_times": token_times,
            "ttft": (token_times[0] - start) if token_times else None,
            "itl": [b - a for a, b in zip(token_times, token_times[1:])],
            "usage": done["usage"], "timings": done["timings"]}


def run_level(url, questions, clients, seconds, max_tokens, offset, count=None, warmup=0.0):
    """Closed loop for `seconds` (or, with `count`, that many questions per client).

    Returns the answers, the errors and the steady-state window [start +
    warmup, start + seconds] (summarize() turns rounds of these into figures)."""
    results, errors = [], []
    lock = threading.Lock()
    t0 = time.perf_counter()
    stop_at = t0 + seconds

    def client(i):
        n = offset + i * 7
        asked = 0
        while (asked < count) if count is not None else (time.perf_counter() < stop_at):
            asked += 1
            q = questions[n % len(questions)]
            n += 1
            try:
                res = ask(url, q, max_tokens)
                with lock:
                    results.append(res)
            except Exception as e:  # noqa: BLE001 - every failure is counted and shown
                with lock:
                    errors.append(str(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if count is not None:  # a fixed set of questions: the whole run is the window
        w0, w1 = t0, time.perf_counter()
    else:
        w0, w1 = t0 + warmup, stop_at
    return {"clients": clients, "results": results, "errors": errors, "w0": w0, "w1": w1}


def summarize(runs):
    """Steady-state figures of one or more runs of a level, pooled: tokens
    streamed inside the windows per second of window, and the latencies of
    the requests started inside them; the requests started before a window
    make up the burst."""
    tokens = window = 0.0
    steady, burst, errors = [], [], []
    for run in runs:
        w0, w1 = run["w0"], run["w1"]
        window += w1 - w0
        errors += run["errors"]
        steady += [r for r in run["results"] if r["start"] >= w0]
        burst += [r for r in run["results"] if r["start"] < w0]
        # A delta can carry several tokens (accepted drafts): spread each
        # answer's completion tokens over its deltas.
        for r in run["results"]:
            if r["token_times"]:
                per = r["usage"]["completion_tokens"] / len(r["token_times"])
                tokens += per * sum(1 for t in r["token_times"] if w0 <= t <= w1)
    prompt = sum(r["usage"]["prompt_tokens"] for r in steady)
    cached = sum(r["usage"]["prompt_tokens_details"]["cached_tokens"] for r in steady)
    ttft = [r["ttft"] for r in steady if r["ttft"] is not None]
    itl = [x for r in steady for x in r["itl"]]
    burst_ttft = [r["ttft"] for r in burst if r["ttft"] is not None]
    return {"clients": runs[0]["clients"], "requests": len(steady), "errors": errors,
            "tok_s": tokens / window if window > 0 else 0.0,
            "ttft50": percentile(ttft, 50), "ttft95": percentile(ttft, 95),
            "itl50": percentile(itl, 50), "itl95": percentile(itl, 95),
            "cached": cached / prompt if prompt else 0.0,
            "burst": len(burst), "burst50": percentile(burst_ttft, 50),
            "burstmax": max(burst_ttft) if burst_ttft else float("nan"),
            "retrieval50": percentile([r["timings"]["retrieval_ms"] for r in steady], 50),
            "prefill50": percentile([r["timings"]["prompt_ms"] for r in steady], 50)}


def decode_speeds(urls, questions, max_tokens):
    """One client, each question asked of every server in turn (the order
    alternating from question to question), so that a change in the machine's
    speed meanwhile falls on all of them alike. Per server: decode tok/s from
    its timings, decode tokens, drafts proposed and accepted."""
    n, ms, drafts, accepted = ([0] * len(urls) for _ in range(4))
    for i, q in enumerate(questions):
        order = range(len(urls)) if i % 2 == 0 else reversed(range(len(urls)))
        for k in order:
            t = ask(urls[k], q, max_tokens, temperature=0)["timings"]
            n[k] += max(0, t["predicted_n"] - 1)
            ms[k] += t["predicted_ms"]
            drafts[k] += t["draft_n"]
            accepted[k] += t["draft_n_accepted"]
    return [((n[k] * 1000.0 / ms[k] if ms[k] else 0.0), n[k], drafts[k], accepted[k]) for k in range(len(urls))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ragd"))
    ap.add_argument("--url", help="an already running ragd (admin key " + KEY + "); skips the speculative comparison")
    ap.add_argument("--clients", default="1,4,8,16")
    ap.add_argument("--seconds", type=float, default=40, help="per client count and round")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the client counts in turn this many times, each count's figures pooled over its "
                         "rounds (the machine's speed drifts: rounds spread the drift over every count)")
    ap.add_argument("--warmup", type=float, default=5,
                    help="seconds at the start of each level left out of the steady-state figures")
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--set", action="append", default=[], help="extra ragd settings, key=value")
    ap.add_argument("--spec-rounds", type=int, default=1,
                    help="speculative on/off comparisons, each on two fresh servers, pooled (the machine's speed "
                         "drifts: more rounds, a steadier ratio)")
    ap.add_argument("--verbose", action="store_true", help="also print where the time to first token goes")
    ap.add_argument("--questions", default=os.path.join(ROOT, "tests", "data", "sample_questions.jsonl"),
                    help="JSON Lines file of questions (field \"question\")")
    ap.add_argument("--languages", default="",
                    help="only the questions whose \"lang\" is one of these (comma-separated; e.g. pt,fr,es,de "
                         "with tests/data/rag_eval.jsonl: questions searched through the query translation)")
    args = ap.parse_args()
    levels = [int(x) for x in args.clients.split(",")]
    if any(c < 1 or c > 64 for c in levels):
        raise SystemExit("--clients: counts between 1 and 64")
    if not 0 <= args.warmup < args.seconds:
        raise SystemExit("--warmup: at least 0 and less than --seconds")
    if not 1 <= args.rounds <= 20:
        raise SystemExit("--rounds: between 1 and 20")
    if not 1 <= args.spec_rounds <= 10:
        raise SystemExit("--spec-rounds: between 1 and 10")
    languages = {x for x in args.languages.split(",") if x}
    with open(args.questions) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    questions = [r["question"] for r in rows if not languages or r.get("lang") in languages]
    if not questions:
        raise SystemExit("--questions/--languages: no question left")

    server = None if args.url else Server(args.binary, args.set)
    url = args.url or server.url
    try:
        print(f"ragd serve bench: {os.cpu_count()} cores, {len(questions)} RAG questions "
              f"({os.path.basename(args.questions)}{' ' + args.languages if languages else ''}), "
              f"max_tokens {args.max_tokens}, {args.rounds} x {args.seconds:.0f} s per level "
              f"({args.warmup:.0f} s warm-up each), "
              f"streaming /v1/ask")
        first = ask(url, questions[0], 8)
        second = ask(url, questions[1], 8)
        print(f"prefix cache: first question {first['usage']['prompt_tokens_details']['cached_tokens']} of "
              f"{first['usage']['prompt_tokens']} prompt tokens cached, second question "
              f"{second['usage']['prompt_tokens_details']['cached_tokens']} of {second['usage']['prompt_tokens']}")
        print(f"{'clients':>7} | {'requests':>8} | {'errors':>6} | {'gen tok/s':>9} | {'TTFT p50 / p95 (ms)':>21} | "
              f"{'ITL p50 / p95 (ms)':>19} | cached prompt")

        def show(label, r):
            print(f"{label:>7} | {r['requests']:>8} | {len(r['errors']):>6} | {r['tok_s']:>9.1f} | "
                  f"{r['ttft50'] * 1000:>9.0f} / {r['ttft95'] * 1000:>9.0f} | {r['itl50'] * 1000:>8.1f} / "
                  f"{r['itl95'] * 1000:>8.1f} | {r['cached'] * 100:>5.1f} %", flush=True)
            for e in r["errors"][:3]:
                print("   error:", e)
            if r["burst"]:
                print(f"        warm-up ({r['burst']} requests started in the first {args.warmup:.0f} s of a run, left "
                      f"out above): TTFT p50 {r['burst50'] * 1000:.0f} ms, max {r['burstmax'] * 1000:.0f} ms")
            if args.verbose:
                print(f"        TTFT parts (p50): retrieval {r['retrieval50']:.0f} ms, admission to first token "
                      f"{r['prefill50']:.0f} ms")

        show("1 cold", summarize([run_level(url, questions, 1, 0, args.max_tokens, offset=2,
                                            count=len(questions))]))
        runs, rows = {c: [] for c in levels}, {}
        for r in range(args.rounds):
            for i, clients in enumerate(levels):
                runs[clients].append(run_level(url, questions, clients, args.seconds, args.max_tokens,
                                               offset=i * 5 + r * 3, warmup=args.warmup))
                if r + 1 == args.rounds:
                    rows[clients] = summarize(runs[clients])
                    show(str(clients), rows[clients])
        if 1 in rows and 8 in rows and rows[1]["tok_s"] > 0:
            print(f"8 clients vs 1: aggregate tok/s {rows[8]['tok_s'] / rows[1]['tok_s']:.2f}x (target >= 4x), "
                  f"TTFT p95 {rows[8]['ttft95'] / rows[1]['ttft95']:.2f}x (target <= 3x)")
    finally:
        if server:
            server.stop()

    if args.url:
        return
    # Per round, fresh servers (each starts without learnt drafts, as the
    # first round's did); decode time and tokens are summed over the rounds.
    off_ms = on_ms = 0.0
    off_n = decoded = drafts = accepted = 0
    for _ in range(args.spec_rounds):
        servers = []
        try:
            for on in (False, True):
                servers.append(Server(args.binary, args.set + [f"inference.speculative={'true' if on else 'false'}"]))
            (off_tps, n_off, _, _), (on_tps, n_on, d, a) = decode_speeds([s.url for s in servers], questions,
                                                                         args.max_tokens)
        finally:
            for srv in servers:
                srv.stop()
        off_ms += n_off * 1000.0 / off_tps if off_tps else 0.0
        on_ms += n_on * 1000.0 / on_tps if on_tps else 0.0
        off_n, decoded, drafts, accepted = off_n + n_off, decoded + n_on, drafts + d, accepted + a
    off_tps = off_n * 1000.0 / off_ms if off_ms else 0.0
    on_tps = decoded * 1000.0 / on_ms if on_ms else 0.0
    rate = accepted / drafts if drafts else 0.0
    print(f"speculative decoding, 1 client, {len(questions)} RAG answers x {args.spec_rounds} "
          f"(greedy, on and off interleaved): "
          f"decode {on_tps:.1f} tok/s on vs {off_tps:.1f} tok/s off = "
          f"{on_tps / off_tps if off_tps else 0:.2f}x (target >= 1.3x); "
          f"drafts {drafts}, accepted {accepted} ({rate * 100:.1f} %)")
    # Each accepted draft token saves one step at most: the speed-up that
    # these drafts would give if verifying them cost nothing.
    share = accepted / decoded if decoded else 0.0
    print(f"        accepted drafts are {share * 100:.1f} % of the {decoded} decoded tokens: "
          f"{1 / (1 - share) if share < 1 else float('inf'):.2f}x at most, were draft rows free")


if __name__ == "__main__":
    sys.exit(main())
