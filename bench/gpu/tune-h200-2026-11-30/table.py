"""Prints tessel's best tuned GEMM (tune*.json) against cuBLAS SGEMM (baselines.json), as markdown."""
import glob, json, os, sys
out = sys.argv[1]
base = {}
if os.path.exists(os.path.join(out, "baselines.json")):
    b = json.load(open(os.path.join(out, "baselines.json")))
    base = {r["name"]: r["median_s"] for r in b["rows"]}
    print(f"\n{b['device']}, torch {b['torch']}, CUDA {b['cuda']}; fp32, TF32 off, L2 flushed, medians\n")
print("| workload | how measured | trials | errors | tessel best (ms) | GFLOP/s | cuBLAS (ms) | cuBLAS / tessel |")
print("|---|---|---:|---|---:|---:|---:|---:|")
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    j = json.load(open(path))
    if "tasks" not in j:
        continue
    for t in j["tasks"]:
        n = t["workload"].split("M=")[1].split(",")[0]
        lib = base.get(f"matmul_{n}")
        best = t.get("best_latency_s")
        how = "RPC worker (key h200)" if "rpc" in path else "local worker"
        print(f"| {t['workload']} | {how} | {t['trials']} | {t['errors']} | "
              f"{best * 1e3 if best else float('nan'):.4f} | {t['best_gflops']:.0f} | "
              f"{lib * 1e3 if lib else float('nan'):.4f} | {lib / best if lib and best else float('nan'):.2f} |")
for k, v in base.items():
    if k.startswith("matmul"):
        print(f"cuBLAS {k}: {v * 1e3:.4f} ms ({2 * int(k.split('_')[1]) ** 3 / v * 1e-9:.0f} GFLOP/s)")
