#!/usr/bin/env python3
"""Crash safety of the token ledger: `ragd serve` is killed with SIGKILL
while answers stream, then restarted on the same data folder, many times;
after every restart the usage rows in app.db are held against what each
client saw streamed.

The ledger's settle points (accounts/quota.h): a request's usage row is
written at its first Report() (the prompt and the first answer token), again
every kCheckpointTokens / 2 (16) reported tokens, and at Settle or Release,
by the ledger's own thread; the answer is held back (generation_runner.cpp)
so that no token goes out while it would be more than kCheckpointTokens - 1
(31) past the row written, and the usage chunk only once the final row is
written. A kill may therefore lose at most 31 tokens that were sent, and
nothing of a finished request.

Each of --streams clients has its own user (made with `ragd user create`),
so the rows of one client are the rows of its user, in the order of its
requests (one at a time). A client sends streamed chat completions
(stream_options.include_usage, logprobs: each chunk lists the tokens it
carries, so the tokens streamed are counted exactly, the answer's end token
aside) one after another, with max_tokens drawn from --max-tokens. The
prompt's token count is measured once per prompt before the first round.
Each round the server is killed 0.2-(--kill-max) s after the clients start.

Checks after every restart, on the rows written since the round began
(read with Python's sqlite3):
- a finished request (its usage chunk reached the client) has its row with
  exactly the prompt and completion tokens of that chunk, completed = 1;
- a request cut by the kill after it streamed s >= 1 tokens has a row, and
  row prompt + completion >= prompt + s - (kCheckpointTokens - 1)
  ("shortfall" below: prompt + s - row, at most 31); one cut before its
  first token may have none;
- no row beyond those requests;
- GET /v1/usage of each user: used = the sum of that user's rows.

--hold-lock S: in each round that lasts longer than S, another connection
holds app.db's write lock (BEGIN IMMEDIATE, as another process's
transaction would) for the S seconds before the kill, so the ledger's
writer stalls; the same checks apply.

Usage: python3 bench/serve/crash_answers.py [--binary build/ragd]
       [--rounds 20] [--streams 4] [--max-tokens 48,320] [--hold-lock S] [--seed 1]
Prints one line per round and a summary; exit status 1 on any failure.
"""
import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ragd_process import RagdProcess, report_failures  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "rk-crash-admin-key-0123456789abcdefghijklmnop"
MODEL = "gemma-3-270m-q4_k_m.gguf"
CHECKPOINT_TOKENS = 32  # accounts/quota.h kCheckpointTokens
ROUTE = "/v1/chat/completions"
TOPICS = ["a lighthouse keeper", "a city under the sea", "the last train of the night", "a clockmaker's apprentice",
          "a storm over the mountains", "a lost letter", "a garden on the moon", "an old ship's cat"]


def env():
    return dict(os.environ, RAGD_ADMIN_USER="admin", RAGD_ADMIN_PASSWORD="correct horse battery staple",
                RAGD_ADMIN_API_KEY=KEY, RAGD_MODELS_LLM=MODEL)


def prompt_of(topic):
    return [{"role": "user", "content": f"Write a long story about {topic}, with many details."}]


def create_user(binary, data, name):
    out = subprocess.run([binary, "user", "--data", data, "create", name, "--no-password"], env=env(),
                         capture_output=True, text=True, timeout=120)
    for line in out.stdout.splitlines():
        if line.startswith("api key:"):
            return line.split(":", 1)[1].strip()
    raise RuntimeError(f"ragd user create {name} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")


def read_rows(data, after_id):
    db = sqlite3.connect(f"file:{os.path.join(data, 'app.db')}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute("SELECT id, user_id, route, prompt_tokens, completion_tokens, completed FROM usage "
                          "WHERE id > ? ORDER BY id", (after_id,)).fetchall()
    finally:
        db.close()


def user_sums(data):
    db = sqlite3.connect(f"file:{os.path.join(data, 'app.db')}?mode=ro", uri=True, timeout=30)
    try:
        return dict(db.execute("SELECT user_id, SUM(prompt_tokens + completion_tokens) FROM usage "
                               "GROUP BY user_id").fetchall())
    finally:
        db.close()


def max_row_id(data):
    db = sqlite3.connect(f"file:{os.path.join(data, 'app.db')}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute("SELECT COALESCE(MAX(id), 0) FROM usage").fetchone()[0]
    finally:
        db.close()


def stream_one(url, key, topic, max_tokens, seed):
    """One streamed chat completion; returns what the client saw: tokens
    streamed, the usage chunk (or None), whether [DONE] came, an HTTP
    status other than 200 (or None), whether the connection was cut."""
    seen = {"topic": topic, "tokens": 0, "usage": None, "done": False, "status": None, "cut": False}
    body = {"messages": prompt_of(topic), "max_tokens": max_tokens, "stream": True, "logprobs": True,
            "stream_options": {"include_usage": True}, "temperature": 0.8, "seed": seed}
    try:
        with requests.post(url + ROUTE, json=body, headers={"Authorization": f"Bearer {key}"}, stream=True,
                           timeout=120) as r:
            if r.status_code != 200:
                seen["status"] = r.status_code
                seen["error"] = r.text[:200]
                return seen
            for line in r.iter_lines():
                if not line.startswith(b"data: "):
                    continue
                payload = line[6:]
                if payload == b"[DONE]":
                    seen["done"] = True
                    continue
                chunk = json.loads(payload)
                for choice in chunk.get("choices", []):
                    seen["tokens"] += len((choice.get("logprobs") or {}).get("content") or [])
                if chunk.get("usage"):
                    seen["usage"] = chunk["usage"]
    except (requests.RequestException, ValueError):
        seen["cut"] = True  # the server was killed with this stream open
    if not seen["done"] and seen["usage"] is None:
        seen["cut"] = True
    return seen


def client(url, key, rng, max_tokens, stop, log):
    while not stop.is_set():
        seen = stream_one(url, key, rng.choice(TOPICS), rng.randint(*max_tokens), rng.randrange(1 << 30))
        log.append(seen)
        if seen["cut"] or seen["status"] is not None:
            return


def check_round(rows_by_user, logs, prompt_tokens):
    """Problems (strings) and figures of one round's rows against what the
    clients saw."""
    problems = []
    fig = {"finished": 0, "finished_exact": 0, "cut": 0, "cut_streaming": 0, "streamed": 0, "charged": 0,
           "shortfall": None, "over": 0}
    for uid, log in logs.items():
        rows = rows_by_user.get(uid, [])
        fig["charged"] += sum(r[3] + r[4] for r in rows)
        requests_seen = [s for s in log if s["status"] is None]
        for s in log:
            if s["status"] is not None:
                problems.append(f"user {uid}: HTTP {s['status']} {s.get('error', '')}")
        finished = [s for s in requests_seen if s["usage"] is not None]
        cut = [s for s in requests_seen if s["usage"] is None]
        if any(s["usage"] is not None for s in requests_seen[len(finished):]) or len(cut) > 1:
            problems.append(f"user {uid}: a request after a cut one")
        fig["finished"] += len(finished)
        fig["cut"] += len(cut)
        fig["streamed"] += sum(s["tokens"] for s in requests_seen)
        for i, s in enumerate(finished):
            u = s["usage"]
            if i >= len(rows):
                problems.append(f"user {uid}: finished request {i + 1} ({u['prompt_tokens']}+"
                                f"{u['completion_tokens']}) has no usage row")
                continue
            r = rows[i]
            if (r[3], r[4], r[5]) == (u["prompt_tokens"], u["completion_tokens"], 1):
                fig["finished_exact"] += 1
            else:
                problems.append(f"user {uid}: finished request {i + 1} streamed usage {u['prompt_tokens']}+"
                                f"{u['completion_tokens']}, row {r[3]}+{r[4]} completed={r[5]}")
        extra = rows[len(finished):]
        for s in cut:
            want = prompt_tokens[s["topic"]] + s["tokens"]
            if s["tokens"] > 0:
                fig["cut_streaming"] += 1
            if not extra:
                if s["tokens"] > 0:
                    problems.append(f"user {uid}: cut request streamed {s['tokens']} tokens, no usage row "
                                    f"(lost {want})")
                    fig["shortfall"] = max(fig["shortfall"] or want, want)
                continue
            r = extra.pop(0)
            if r[3] != prompt_tokens[s["topic"]]:
                problems.append(f"user {uid}: cut request's row has {r[3]} prompt tokens, the prompt "
                                f"has {prompt_tokens[s['topic']]}")
            if s["tokens"] > 0:
                short = want - (r[3] + r[4])
                fig["shortfall"] = short if fig["shortfall"] is None else max(fig["shortfall"], short)
                if short >= CHECKPOINT_TOKENS:
                    problems.append(f"user {uid}: cut request streamed {s['tokens']} tokens (+{r[3]} prompt), "
                                    f"row holds {r[3]}+{r[4]}: {short} short, more than {CHECKPOINT_TOKENS - 1}")
                if r[3] + r[4] > want:
                    fig["over"] += 1  # generated, charged, not yet read by the client
        if extra:
            problems.append(f"user {uid}: {len(extra)} usage rows beyond the requests made: "
                            f"{[r[3:] for r in extra]}")
    return problems, fig


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ragd"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--streams", type=int, default=4, help="concurrent streaming clients, one user each")
    ap.add_argument("--max-tokens", default="48,320", help="range of max_tokens drawn per request")
    ap.add_argument("--kill-max", type=float, default=4.0, help="latest kill, seconds after the clients start")
    ap.add_argument("--hold-lock", type=float, default=0,
                    help="hold app.db's write lock from another connection this many seconds before each kill")
    ap.add_argument("--threads", type=int, default=1, help="the server's compute threads")
    ap.add_argument("--nice", type=int, default=10, help="niceness of this script and its servers")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the data folder (its path is printed)")
    args = ap.parse_args()
    os.nice(args.nice)
    rng = random.Random(args.seed)
    max_tokens = tuple(int(x) for x in args.max_tokens.split(","))
    server_args = ["--set", f"inference.threads={args.threads}", "--set", "quota.requests_per_minute=100000",
                   "--set", "quota.tokens_per_minute=100000000", "--set", "quota.tokens_per_period=1000000000"]

    work = tempfile.mkdtemp(prefix="ragd-crash-answers-")
    data = os.path.join(work, "data")
    os.makedirs(data)
    log_path = os.path.join(work, "server.log")
    keys, uids = {}, {}
    for i in range(args.streams):
        keys[i] = create_user(args.binary, data, f"crash-{i}")
    db = sqlite3.connect(os.path.join(data, "app.db"))
    for i in range(args.streams):
        uids[i] = db.execute("SELECT id FROM users WHERE username = ?", (f"crash-{i}",)).fetchone()[0]
    db.close()

    # The prompt's token count, measured once (a non-streamed request).
    srv = RagdProcess(args.binary, data, extra_args=server_args, env=env(), log_path=log_path).wait_ready()
    prompt_tokens = {}
    for topic in TOPICS:
        r = requests.post(srv.url + ROUTE, json={"messages": prompt_of(topic), "max_tokens": 1},
                          headers={"Authorization": f"Bearer {keys[0]}"}, timeout=120)
        r.raise_for_status()
        prompt_tokens[topic] = r.json()["usage"]["prompt_tokens"]
    print(f"{args.streams} streaming clients, one user each; max_tokens {max_tokens[0]}-{max_tokens[1]}; kill "
          f"0.2-{args.kill_max} s after they start; prompts of {min(prompt_tokens.values())}-"
          f"{max(prompt_tokens.values())} tokens; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"\n{'round':>5} {'kill at s':>9} {'finished':>8} {'cut':>4} {'streamed':>8} {'charged':>8} "
          f"{'shortfall':>9} {'restart s':>9} result")

    failures = []
    totals = {"finished": 0, "finished_exact": 0, "cut": 0, "cut_streaming": 0, "streamed": 0, "charged": 0,
              "over": 0}
    shortfalls = []
    restarts = []
    for rnd in range(1, args.rounds + 1):
        first_id = max_row_id(data)
        logs = {uids[i]: [] for i in range(args.streams)}
        stop = threading.Event()
        threads = [threading.Thread(target=client, args=(srv.url, keys[i], random.Random(rng.random()),
                                                         max_tokens, stop, logs[uids[i]]))
                   for i in range(args.streams)]
        for t in threads:
            t.start()
        kill_at = rng.uniform(0.2, args.kill_max)
        held = None
        if args.hold_lock > 0 and kill_at > args.hold_lock:
            # Another process's transaction holding app.db's write lock until
            # the kill: the ledger's rows cannot be written meanwhile.
            time.sleep(kill_at - args.hold_lock)
            held = sqlite3.connect(os.path.join(data, "app.db"), isolation_level=None, timeout=30)
            held.execute("BEGIN IMMEDIATE")
            time.sleep(args.hold_lock)
        else:
            time.sleep(kill_at)
        stop.set()
        srv.kill()
        if held is not None:
            held.execute("ROLLBACK")
            held.close()
        for t in threads:
            t.join()

        srv = RagdProcess(args.binary, data, extra_args=server_args, env=env(), log_path=log_path)
        t_start = time.time()
        srv.wait_ready()
        restart_s = time.time() - t_start
        rows_by_user = {}
        for row in read_rows(data, first_id):
            rows_by_user.setdefault(row[1], []).append(row)
        problems, fig = check_round(rows_by_user, logs, prompt_tokens)
        sums = user_sums(data)
        for i in range(args.streams):
            r = requests.get(srv.url + "/v1/usage", headers={"Authorization": f"Bearer {keys[i]}"}, timeout=60)
            used = r.json()["used"] if r.ok else None
            if used != sums.get(uids[i], 0):
                problems.append(f"user {uids[i]}: GET /v1/usage used = {used}, rows sum {sums.get(uids[i], 0)}")
        for p in problems:
            failures.append(f"round {rnd}: {p}")
        for k in totals:
            totals[k] += fig[k]
        if fig["shortfall"] is not None:
            shortfalls.append(fig["shortfall"])
        short = "-" if fig["shortfall"] is None else str(fig["shortfall"])
        print(f"{rnd:>5} {kill_at:>9.2f} {fig['finished']:>8} {fig['cut']:>4} {fig['streamed']:>8} "
              f"{fig['charged']:>8} {short:>9} {restart_s:>9.1f} "
              f"{'ok' if not problems else 'FAIL: ' + '; '.join(problems)}", flush=True)
        restarts.append(restart_s)
    rc = srv.stop()
    held_note = f" (app.db write-locked for {args.hold_lock} s before each kill)" if args.hold_lock > 0 else ""
    if rc != 0:
        failures.append(f"clean stop after the last round: exit status {rc}")

    print(f"\nsummary: {args.rounds} kills during answers{held_note}; {totals['finished']} finished requests, "
          f"{totals['finished_exact']} charged exactly as their usage chunk said; {totals['cut']} cut by the kill, "
          f"{totals['cut_streaming']} of them after streaming (the rest in prefill); {totals['streamed']} answer "
          f"tokens streamed, {totals['charged']} tokens charged (prompts included); largest shortfall of a cut stream "
          f"(prompt + streamed - row) {max(shortfalls) if shortfalls else '-'}, bound {CHECKPOINT_TOKENS - 1}; "
          f"{totals['over']} cut rows above what the client read; restart {min(restarts):.1f}-{max(restarts):.1f} s; "
          f"failures: {len(failures)}")
    return report_failures(failures, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
