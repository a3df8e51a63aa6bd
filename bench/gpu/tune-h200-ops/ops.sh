#!/usr/bin/env bash
# Runs on the H200: tessel tune --target cuda for softmax, a row reduction and the ResNet-50 3x3 conv
# (NHWC), then the PyTorch/cuDNN baselines (gpu_baselines.py), then a table.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
t0=$(date +%s)
tar xJf "$here/tessel.tar.xz" -C /tmp && B=$(ls -d /tmp/tessel-*/bin) || exit 1
export PATH="$B:$PATH" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/nvidia-smi.txt
i=0
for w in softmax:M=4096,N=4096 reduce:D0=4096,D1=4096,op=sum,axes=1 conv2d_nhwc:N=1,H=56,W=56,CI=64,CO=64,KH=3,KW=3,stride=1,pad=1; do
  i=$((i+1))
  timeout 130 tessel tune --target cuda --workload $w --trials 1000 --time ${T:-80}s --cost-model xgb --flush-cache \
    --db $OUT/ops.db --json $OUT/tune$i.json > $OUT/tune$i.log 2>&1
  echo "tune $w rc=$? at $(( $(date +%s) - t0 )) s"; tail -3 $OUT/tune$i.log
done
timeout 120 python3 "$here/gpu_baselines.py" --json $OUT/baselines.json > $OUT/baselines.log 2>&1
echo "baselines rc=$? at $(( $(date +%s) - t0 )) s"
grep -E "softmax|rowsum|conv2d" $OUT/baselines.log
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
base = {r["name"]: r["median_s"] for r in json.load(open(os.path.join(out, "baselines.json")))["rows"]}
pairs = [("tune1.json", "softmax_4096x4096"), ("tune2.json", "rowsum_4096x4096"), ("tune3.json", "conv2d_nhwc_n1_56x56_64_3x3")]
print("| workload | trials | errors | tessel tuned ms | library ms | library / tessel |")
print("|---|---:|---|---:|---:|---:|")
for f, b in pairs:
    t = json.load(open(os.path.join(out, f)))["tasks"][0]
    ms = t["best_latency_s"] * 1e3
    print(f"| {t['workload']} | {t['trials']} | {t.get('errors', {})} | {ms:.4f} | {base[b]*1e3:.4f} | {base[b]*1e3/ms if ms > 0 else 0:.2f} |")
PY
