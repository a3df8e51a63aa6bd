#!/usr/bin/env bash
# Runs on the H200: tessel tune --target cuda at GEMM 4096^3 (local worker, PTX reference), the cuBLAS
# baselines (scripts/gpu_baselines.py), then a table; the folder beside it holds tessel.tar.xz
# (scripts/bundle), gpu_baselines.py and ../tune-h200-2026-11-30/table.py.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
t0=$(date +%s)
tar xJf "$here/tessel.tar.xz" -C /tmp && B=$(ls -d /tmp/tessel-*/bin) || exit 1
export PATH="$B:$PATH" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee $OUT/nvidia-smi.txt
echo "unpacked in $(( $(date +%s) - t0 )) s"
timeout ${TT:-270} tessel tune --target cuda --workload matmul:M=4096,N=4096,K=4096 --trials 1000 --time ${T:-180}s \
  --cost-model xgb --flush-cache --db $OUT/h200.db --json $OUT/tune4096.json > $OUT/tune4096.log 2>&1
echo "tune4096 rc=$? at $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tune4096.log
timeout 120 python3 "$here/gpu_baselines.py" --json $OUT/baselines.json > $OUT/baselines.log 2>&1
echo "baselines rc=$? at $(( $(date +%s) - t0 )) s"
grep matmul $OUT/baselines.log
python3 "$here/table.py" $OUT | tee $OUT/table.md
