#!/usr/bin/env python3
"""Side-by-side speed of ragd's engine and llama.cpp on the same GGUF file.

  /tmp/venv-peer/bin/python bench/engine/peer.py [--model PATH] [--threads 1,2]
      [--bench build/bench/engine/bench_engine] [--prompt 512] [--decode 128]

Measures llama.cpp through llama-cpp-python (prefill of one --prompt-token
prompt in one batch, then --decode greedy single-token steps), runs ragd's
bench_engine with the same settings, and prints tok/s of both and the ratio
ragd / llama.cpp. Run by hand on an idle machine; numbers depend on the load.

llama-cpp-python compiles llama.cpp for the build machine (GGML_NATIVE); on
virtual machines that report AMX but do not run it, that build dies with
SIGILL. Building it for the AVX-512 VNNI set explicitly works:
  python3 -m venv /tmp/venv-peer && CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON
  -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON"
  /tmp/venv-peer/bin/pip install numpy llama-cpp-python
"""
import argparse
import os
import re
import subprocess
import sys
import time

TEXT = ("The history of the city begins with a small settlement on the river bank, where traders met to exchange "
        "grain, salt and cloth. Over the centuries it grew into a market town, then a port, and finally the capital "
        "of a province whose roads and canals connected it to the rest of the country. ")


def default_model():
    base = os.environ.get("RAGD_MODELS") or os.path.expanduser("~/.cache/ragd/models")
    return os.path.join(base, "gemma-3-270m-q4_k_m.gguf")


def measure_llama_cpp(model, threads, n_prompt, n_decode):
    import numpy as np
    from llama_cpp import Llama

    llm = Llama(model_path=model, n_ctx=n_prompt + n_decode + 16, n_batch=n_prompt, n_ubatch=n_prompt,
                n_threads=threads, n_threads_batch=threads, verbose=False)
    words = llm.tokenize(TEXT.encode(), add_bos=False, special=False)
    prompt = [llm.token_bos()]
    while len(prompt) < n_prompt:
        prompt += words[: n_prompt - len(prompt)]
    n_vocab = llm.n_vocab()
    llm.reset()
    t0 = time.perf_counter()
    llm.eval(prompt)
    prefill_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(n_decode):
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,))
        tok = int(np.argmax(logits))
        llm.eval([tok])
    decode_s = time.perf_counter() - t0
    del llm
    return n_prompt / prefill_s, n_decode / decode_s


def measure_ragd(binary, model, threads, n_prompt, n_decode):
    out = subprocess.run([binary, "--model", model, "--threads", str(threads), "--prompt", str(n_prompt),
                          "--decode", str(n_decode)], check=True, capture_output=True, text=True).stdout
    m = re.search(r"prefill ([0-9.]+) tok/s.*decode ([0-9.]+) tok/s.*\(peak ([0-9.]+) MiB\)", out)
    if not m:
        sys.exit("cannot parse bench_engine output:\n" + out)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=default_model())
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--bench", default="build/bench/engine/bench_engine")
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--decode", type=int, default=128)
    args = ap.parse_args()
    print(f"model {args.model}, {os.cpu_count()} cores, prompt {args.prompt} tokens, decode {args.decode} tokens")
    print(f"{'threads':>7} | {'prefill tok/s ragd / llama.cpp = ratio':>40} | {'decode tok/s ragd / llama.cpp = ratio':>40}")
    for t in [int(x) for x in args.threads.split(",")]:
        rp, rd, rss = measure_ragd(args.bench, args.model, t, args.prompt, args.decode)
        lp, ld = measure_llama_cpp(args.model, t, args.prompt, args.decode)
        print(f"{t:>7} | {rp:>9.1f} / {lp:>9.1f} = {rp / lp:5.2f}x{'':>10} | {rd:>9.1f} / {ld:>9.1f} = {rd / ld:5.2f}x"
              f"   (ragd peak RSS {rss:.0f} MiB)")


if __name__ == "__main__":
    main()
