#!/usr/bin/env bash
# Runs on the H200: tessel tune --target cuda for the workloads given as NAME=SPEC:SECONDS, then the
# PyTorch/cuBLAS/cuDNN baselines (gpu_baselines.py) and a table (table2.py).
set -u
R=/tmp/res; mkdir -p $R
[ -n "${DB:-}" ] && gunzip -c "$DB" > $OUT/h200.db && DB=$OUT/h200.db
here="$(cd "$(dirname "$0")" && pwd)"
t0=$(date +%s)
tar xJf "$here/tessel.tar.xz" -C /tmp && B=$(ls -d /tmp/tessel-*/bin) || exit 1
export PATH="$B:$PATH" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee $R/nvidia-smi.txt
echo "unpacked in $(( $(date +%s) - t0 )) s"
timeout 150 python3 "$here/gpu_baselines.py" --json $R/baselines.json > $R/baselines.log 2>&1
echo "baselines rc=$? at $(( $(date +%s) - t0 )) s"
for arg in "$@"; do
  name="${arg%%=*}"; rest="${arg#*=}"; spec="${rest%:*}"; secs="${rest##*:}"
  timeout $((secs + 40)) tessel tune --target cuda --workload "$spec" --trials 4000 --time ${secs}s --cost-model ${CM:-xgb} \
    --flush-cache --db ${DB:-$OUT/h200.db} --json $R/$name.json > $R/$name.log 2>&1
  echo "tune $name rc=$? at $(( $(date +%s) - t0 )) s"; tail -2 $R/$name.log
  (cd $R && tar czf $OUT/results.tgz *)
done
python3 "$here/table2.py" $R "$@" | tee $OUT/table.md
