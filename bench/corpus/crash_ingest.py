#!/usr/bin/env python3
"""Crash safety of ingestion: `ragd serve` is killed with SIGKILL while
documents are being uploaded, then restarted on the same data folder, many
times; after every restart the store is checked.

Documents: Markdown files built from docs/sample (each distinct, 3-40 KB).
The chunk count each gives is taken first from a fresh `ragd ingest` of all
of them into another data folder. Each round: start the server on the
crash folder, check the store (below), upload not-yet-acknowledged documents
on two connections through POST /v1/documents, and SIGKILL the server at a
random moment (0.3-8 s after the first upload was sent).

Checks after every restart (SQLite read through Python's sqlite3; the FAISS
file's vector count read from its header, `<data>/vectors.faiss`):
- no half document: every document has its chunks, ordinals 0..n-1 without a
  gap, every chunk an embedding, and as many chunks as the fresh ingest of
  the same bytes gave; no chunk without its document;
- the FTS5 index holds one row per chunk;
- FAISS holds as many vectors as SQLite holds chunks with embeddings;
- every upload answered 201/200 before the kill is present (by sha256);
- GET /v1/documents lists what SQLite holds.

Usage: python3 bench/corpus/crash_ingest.py [--binary build/ragd]
       [--rounds 20] [--docs 60] [--seed 1]
Prints one line per round and a summary; exit status 1 on any failure.
"""
import argparse
import hashlib
import os
import random
import re
import sqlite3
import struct
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


def env():
    return dict(os.environ, RAGD_ADMIN_USER="admin", RAGD_ADMIN_PASSWORD="correct horse battery staple",
                RAGD_ADMIN_API_KEY=KEY, RAGD_MODELS_LLM=MODEL)


def make_documents(folder, count, seed):
    """Writes `count` distinct Markdown files from the sample documents'
    paragraphs; returns {name: bytes}."""
    paragraphs = []
    sample = os.path.join(ROOT, "docs", "sample")
    for name in sorted(os.listdir(sample)):
        with open(os.path.join(sample, name), encoding="utf-8") as f:
            paragraphs += [p.strip() for p in f.read().split("\n\n") if p.strip()]
    rng = random.Random(seed)
    docs = {}
    for i in range(count):
        target = rng.choice([3000, 6000, 10000, 20000, 40000])
        parts = [f"# Crash document {i}\n\nThis is document number {i} of the crash test, serial {rng.random()}."]
        size = len(parts[0])
        while size < target:
            p = rng.choice(paragraphs)
            parts.append(p)
            size += len(p) + 2
        data = ("\n\n".join(parts) + "\n").encode()
        name = f"crash-{i:03d}.md"
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        docs[name] = data
    return docs


def faiss_count(path):
    """ntotal from a faiss::IndexIDMap2 file: fourcc, int32 d, int64 ntotal."""
    with open(path, "rb") as f:
        head = f.read(16)
    fourcc, _dim, ntotal = struct.unpack("<4siq", head)
    if fourcc not in (b"IxM2", b"IxMp"):
        raise ValueError(f"{path}: unexpected index type {fourcc!r}")
    return ntotal


def read_store(data):
    db = sqlite3.connect(f"file:{os.path.join(data, 'corpus.db')}?mode=ro", uri=True, timeout=30)
    try:
        docs = {row[0]: {"sha": row[1], "name": row[2]} for row in
                db.execute("SELECT id, sha256, source_name FROM documents")}
        per_doc = {row[0]: row[1:] for row in db.execute(
            "SELECT document_id, count(*), min(ordinal), max(ordinal), sum(embedding IS NULL) "
            "FROM chunks GROUP BY document_id")}
        chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        embedded = db.execute("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()[0]
        fts = db.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0]
        orphans = db.execute(
            "SELECT count(*) FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)").fetchone()[0]
    finally:
        db.close()
    return docs, per_doc, chunks, embedded, fts, orphans


def reference_counts(binary, folder):
    """sha256 -> chunk count from a fresh `ragd ingest` of the folder."""
    with tempfile.TemporaryDirectory(prefix="ragd-crash-ref-") as ref:
        out = subprocess.run([binary, "ingest", "--data", ref, folder], env=env(), capture_output=True,
                             text=True, timeout=3600)
        if out.returncode != 0:
            raise RuntimeError(f"ragd ingest failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
        docs, per_doc, *_ = read_store(ref)
        return {d["sha"]: per_doc.get(i, (0,))[0] for i, d in docs.items()}


def start_ragd(binary, data, log_path):
    return RagdProcess(binary, data, env=env(), log_path=log_path)


def check(data, srv, reference, acknowledged):
    """Problems found in the store (a list of strings) and a summary."""
    problems = []
    docs, per_doc, chunks, embedded, fts, orphans = read_store(data)
    for doc_id, d in docs.items():
        n, lo, hi, missing = per_doc.get(doc_id, (0, None, None, 0))
        want = reference.get(d["sha"])
        if n == 0:
            problems.append(f"document {doc_id} ({d['name']}) has no chunks")
        elif lo != 0 or hi != n - 1:
            problems.append(f"document {doc_id} ({d['name']}): ordinals {lo}..{hi} for {n} chunks")
        if missing:
            problems.append(f"document {doc_id} ({d['name']}): {missing} chunks without an embedding")
        if want is None:
            problems.append(f"document {doc_id} ({d['name']}): bytes not among the test documents")
        elif n != want:
            problems.append(f"document {doc_id} ({d['name']}): {n} chunks, a fresh ingest gives {want}")
    if orphans:
        problems.append(f"{orphans} chunks without their document")
    if fts != chunks:
        problems.append(f"FTS5 holds {fts} rows for {chunks} chunks")
    index_path = os.path.join(data, "vectors.faiss")
    vectors = faiss_count(index_path) if os.path.exists(index_path) else 0
    if vectors != embedded:
        problems.append(f"FAISS holds {vectors} vectors, SQLite {embedded} embedded chunks")
    present = {d["sha"] for d in docs.values()}
    lost = sorted(name for sha, name in acknowledged.items() if sha not in present)
    if lost:
        problems.append(f"acknowledged uploads missing: {', '.join(lost)}")
    listed = requests.get(srv.url + "/v1/documents", headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
    if listed.status_code != 200 or len(listed.json()["documents"]) != len(docs):
        problems.append(f"GET /v1/documents: {listed.status_code}, "
                        f"{len(listed.json().get('documents', [])) if listed.ok else '?'} listed, {len(docs)} stored")
    return problems, {"documents": len(docs), "chunks": chunks, "vectors": vectors}


def uploader(srv, docs, pending, lock, acknowledged, outcome, stop):
    h = {"Authorization": f"Bearer {KEY}"}
    while not stop.is_set():
        with lock:
            if not pending:
                return
            name = pending.pop(0)
        data = docs[name]
        try:
            r = requests.post(srv.url + "/v1/documents", headers=h, files={"file": (name, data, "text/markdown")},
                              timeout=600)
        except requests.RequestException:
            with lock:
                outcome["cut"] += 1
            return  # the server was killed with this upload in flight
        with lock:
            if r.status_code in (200, 201):
                acknowledged[hashlib.sha256(data).hexdigest()] = name
                outcome["acked"] += 1
                sent = r.json().get("document", {})
                if sent.get("chunks") is not None:
                    outcome.setdefault("acked_chunks", {})[hashlib.sha256(data).hexdigest()] = sent["chunks"]
            elif r.status_code == 503:
                pending.append(name)
                outcome["503"] += 1
            else:
                outcome["other"].append(f"{name}: {r.status_code} {r.text[:200]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ragd"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--docs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the data folder (its path is printed)")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    work = tempfile.mkdtemp(prefix="ragd-crash-")
    folder = os.path.join(work, "docs")
    data = os.path.join(work, "data")
    os.makedirs(folder)
    docs = make_documents(folder, args.docs, args.seed)
    t0 = time.time()
    reference = reference_counts(args.binary, folder)
    print(f"fresh ingest of {len(docs)} documents ({sum(map(len, docs.values())) // 1024} KiB): "
          f"{sum(reference.values())} chunks in {time.time() - t0:.0f} s; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    missing_ref = [n for n, b in docs.items() if hashlib.sha256(b).hexdigest() not in reference]
    if missing_ref:
        print(f"note: the fresh ingest does not hold {len(missing_ref)} documents ({missing_ref[:3]}...)")

    acknowledged = {}
    failures = []
    log_path = os.path.join(work, "server.log")
    print(f"\n{'round':>5} {'kill at s':>9} {'acked':>5} {'cut':>4} {'503':>4} {'docs':>5} {'chunks':>7} "
          f"{'vectors':>7} {'restart s':>9} {'index on open':<40} result")
    for rnd in range(1, args.rounds + 1):
        srv = start_ragd(args.binary, data, log_path)
        t_start = time.time()
        srv.wait_ready()
        restart_s = time.time() - t_start
        with open(log_path, errors="replace") as f:
            notes = re.findall(r"vector index (?:rebuilt|repaired)[^\n]*", f.read())
        with open(log_path, errors="replace") as f:
            log_now = f.read()
        note = ""
        if rnd > 1 and notes and log_now.rfind(notes[-1]) > log_now.rfind("==== round"):
            note = notes[-1][:40]
        problems, summary = check(data, srv, reference, acknowledged)
        for p in problems:
            failures.append(f"round {rnd - 1} kill -> restart: {p}")
        if rnd > 1:
            print(f"{prev} {summary['documents']:>5} {summary['chunks']:>7} {summary['vectors']:>7} "
                  f"{restart_s:>9.1f} {note:<40} {'ok' if not problems else 'FAIL: ' + '; '.join(problems)}",
                  flush=True)
        with open(log_path, "a") as f:
            f.write(f"\n==== round {rnd}\n")
        srv.log.flush()

        pending = [n for n in docs if hashlib.sha256(docs[n]).hexdigest() not in acknowledged]
        rng.shuffle(pending)
        if not pending:
            print("every document acknowledged; no more to upload")
            srv.stop()
            break
        lock = threading.Lock()
        outcome = {"acked": 0, "cut": 0, "503": 0, "other": []}
        stop = threading.Event()
        threads = [threading.Thread(target=uploader, args=(srv, docs, pending, lock, acknowledged, outcome, stop))
                   for _ in range(2)]
        for t in threads:
            t.start()
        kill_at = rng.uniform(0.3, 8.0)
        time.sleep(kill_at)
        stop.set()
        srv.kill()
        for t in threads:
            t.join()
        for o in outcome["other"]:
            failures.append(f"round {rnd}: upload answered {o}")
        for sha, n in outcome.get("acked_chunks", {}).items():
            if reference.get(sha) is not None and n != reference[sha]:
                failures.append(f"round {rnd}: {acknowledged[sha]} acknowledged with {n} chunks, fresh ingest "
                                f"{reference[sha]}")
        prev = f"{rnd:>5} {kill_at:>9.2f} {outcome['acked']:>5} {outcome['cut']:>4} {outcome['503']:>4}"

    # Final restart and check after the last kill.
    srv = start_ragd(args.binary, data, log_path)
    t_start = time.time()
    srv.wait_ready()
    restart_s = time.time() - t_start
    problems, summary = check(data, srv, reference, acknowledged)
    for p in problems:
        failures.append(f"round {rnd} kill -> final restart: {p}")
    with open(log_path, errors="replace") as f:
        log_now = f.read()
    notes = re.findall(r"vector index (?:rebuilt|repaired)[^\n]*", log_now)
    note = notes[-1][:40] if notes and log_now.rfind(notes[-1]) > log_now.rfind("==== round") else ""
    rc = srv.stop()
    print(f"{prev} {summary['documents']:>5} {summary['chunks']:>7} {summary['vectors']:>7} {restart_s:>9.1f} "
          f"{note:<40} {'ok' if not problems else 'FAIL: ' + '; '.join(problems)}")
    print(f"\nsummary: {args.rounds} kills during ingestion; {len(acknowledged)} uploads acknowledged, all "
          f"checked after each restart; store at the end {summary['documents']} documents, {summary['chunks']} "
          f"chunks, {summary['vectors']} FAISS vectors; clean stop exit status {rc}; failures: {len(failures)}")
    return report_failures(failures, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
