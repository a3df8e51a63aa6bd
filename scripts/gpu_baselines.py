#!/usr/bin/env python3
"""Library baselines for tessel's GPU kernels, timed the way tessel-worker times candidates.

Runs on the GPU machine (its python3 has PyTorch). fp32 throughout with TF32 off, so the matrix
products are cuBLAS SGEMM (CUBLAS_DEFAULT_MATH, no tensor cores) and the convolution is cuDNN's fp32
path. Each operation: warm-up, then repeats between CUDA events, the L2 cleared before each repeat
(a buffer of twice the L2 zeroed, as tessel-worker does), median reported. Every result is checked
against float64 on the same inputs (relative Frobenius error). Names match tessel-gpu-selftest --bench.

usage: python3 scripts/gpu_baselines.py [--json FILE] [--repeats N]
"""
import argparse
import json
import statistics
import sys

import torch


def setup():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest fp32 algorithm (after warm-up)


def bench(fn, repeats, flush):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3)
    return statistics.median(times), len(times)


def rel_err(got, want):
    got, want = got.double(), want.double()
    return float((got - want).norm() / want.norm())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="")
    ap.add_argument("--repeats", type=int, default=50)
    a = ap.parse_args()
    setup()
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    flush = torch.empty(max(2 * l2, 64 << 20) // 4, dtype=torch.float32, device=dev)
    print(f"device: {props.name}, {props.multi_processor_count} SMs, L2 {l2 >> 20} MiB; torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}; TF32 off")
    g = torch.Generator(device=dev).manual_seed(5)

    def rand(*shape):
        return torch.rand(*shape, generator=g, device=dev) * 2 - 1

    rows = []

    def add(name, lib, fn, want_fn, flop, nbytes):
        out = fn()
        err = rel_err(out, want_fn())
        t, n = bench(fn, a.repeats, flush)
        rows.append({"name": name, "library": lib, "median_s": t, "repeats": n, "rel_err_vs_fp64": err,
                     "flop": flop, "bytes": nbytes})
        print(f"  {name:30s} {lib:28s} {t * 1e3:10.4f} ms {flop / t * 1e-9:10.1f} GFLOP/s "
              f"{nbytes / t * 1e-9:8.1f} GB/s  err {err:.1e}", flush=True)

    for s in (1024, 2048, 4096):
        A, B = rand(s, s), rand(s, s)
        C = torch.empty(s, s, device=dev)
        add(f"matmul_{s}", "cuBLAS SGEMM (torch.mm)", lambda: torch.mm(A, B, out=C), lambda: A.double() @ B.double(),
            2.0 * s ** 3, 3.0 * 4 * s * s)
    X = rand(4096, 4096)
    add("softmax_4096x4096", "torch.softmax", lambda: torch.softmax(X, dim=-1),
        lambda: torch.softmax(X.double(), dim=-1), 5.0 * 4096 * 4096, 2.0 * 4 * 4096 * 4096)
    add("rowsum_4096x4096", "torch.sum", lambda: X.sum(dim=-1), lambda: X.double().sum(dim=-1),
        1.0 * 4096 * 4096, 4.0 * 4096 * 4097)
    G, Bt = rand(4096), rand(4096)
    add("layer_norm_4096x4096", "torch layer_norm", lambda: torch.nn.functional.layer_norm(X, (4096,), G, Bt, 1e-5),
        lambda: torch.nn.functional.layer_norm(X.double(), (4096,), G.double(), Bt.double(), 1e-5),
        8.0 * 4096 * 4096, 2.0 * 4 * 4096 * 4096)
    for n in (1, 32):
        In = rand(n, 64, 56, 56).to(memory_format=torch.channels_last)  # NHWC in memory
        W = rand(64, 64, 3, 3).to(memory_format=torch.channels_last)
        conv = lambda In=In, W=W: torch.nn.functional.conv2d(In, W, padding=1)
        want = lambda In=In, W=W: torch.nn.functional.conv2d(In.double(), W.double(), padding=1)
        add(f"conv2d_nhwc_n{n}_56x56_64_3x3", "cuDNN fp32 (channels_last)", conv, want,
            2.0 * n * 56 * 56 * 64 * 64 * 9, 4.0 * (2 * n * 56 * 56 * 64 + 9 * 64 * 64))
    va, vb = rand(1 << 20), rand(1 << 20)
    add("vecadd_1m", "torch.add", lambda: va + vb, lambda: va.double() + vb.double(), 1.0 * (1 << 20), 12.0 * (1 << 20))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": props.name, "torch": torch.__version__, "cuda": torch.version.cuda, "rows": rows}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
