import json, sys, os
out = sys.argv[1]
base = {r["name"]: r for r in json.load(open(os.path.join(out, "baselines.json")))["rows"]}
lib = {"mm1024": "matmul_1024", "mm2048": "matmul_2048", "mm4096": "matmul_4096", "softmax": "softmax_4096x4096",
       "rowsum": "rowsum_4096x4096", "layernorm": "layer_norm_4096x4096", "conv": "conv2d_nhwc_n1_56x56_64_3x3"}
print("| workload | trials | errors | tessel tuned ms | library | library ms | library / tessel |")
print("|---|---:|---|---:|---|---:|---:|")
for arg in sys.argv[2:]:
    name = arg.split("=")[0]
    try:
        t = json.load(open(os.path.join(out, name + ".json")))["tasks"][0]
    except Exception as e:
        print(f"| {name} | (no result: {e}) |"); continue
    ms = t["best_latency_s"] * 1e3
    b = base.get(lib.get(name, ""), {})
    bms = b.get("median_s", 0) * 1e3
    print(f"| {t['workload']} | {t['trials']} | {t.get('errors', {})} | {ms:.4f} | {b.get('library', '?')} | {bms:.4f} | {bms / ms if ms > 0 else 0:.3f} |")
