#!/usr/bin/env bash
# Runs on the H200: tessel tune --target cuda (local worker 1024^3 and 2048^3, over RPC 1024^3), cuBLAS baselines, a table.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
t0=$(date +%s)
tar xJf "$here/tessel.tar.xz" -C /tmp && B=$(ls -d /tmp/tessel-*/bin) || exit 1
export PATH="$B:$PATH" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee $OUT/nvidia-smi.txt
echo "unpacked in $(( $(date +%s) - t0 )) s"
tune() {  # NAME SIZE SECONDS [extra flags]
  local name=$1 n=$2 s=$3; shift 3
  timeout $((s + 60)) tessel tune --target cuda --workload matmul:M=$n,N=$n,K=$n --trials 1000 --time ${s}s \
    --cost-model xgb --flush-cache --db $OUT/h200.db --json $OUT/$name.json "$@" > $OUT/$name.log 2>&1
  echo "$name rc=$? at $(( $(date +%s) - t0 )) s"; tail -4 $OUT/$name.log
}
tune tune1024 1024 ${T1:-130}
tessel tracker --listen 127.0.0.1:9190 > $OUT/rpc.log 2>&1 &
sleep 1
tessel worker --tracker 127.0.0.1:9190 --key h200 --listen 127.0.0.1:9191 --advertise 127.0.0.1:9191 >> $OUT/rpc.log 2>&1 &
sleep 2
tune rpc1024 1024 ${T2:-50} --tracker 127.0.0.1:9190 --key h200 --seed 7
tune tune2048 2048 ${T3:-120}
timeout 120 python3 "$here/gpu_baselines.py" --json $OUT/baselines.json > $OUT/baselines.log 2>&1
echo "baselines rc=$? at $(( $(date +%s) - t0 )) s"
python3 "$here/table.py" $OUT | tee $OUT/table.md
