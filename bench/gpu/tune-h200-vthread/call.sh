#!/usr/bin/env bash
# Device call: mmvar (hand configurations vs cuBLAS), then tessel tune at GEMM 4096^3 in a fresh database.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
t0=$(date +%s)
R=/tmp/res; mkdir -p $R
tar xJf "$here/tessel.tar.xz" -C /tmp && B=$(ls -d /tmp/tessel-*/bin) || exit 1
export PATH="$B:$PATH" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee $R/nvidia-smi.txt
echo "unpacked in $(( $(date +%s) - t0 )) s"
OUT=$R bash "$here/mmvar.sh" > /dev/null 2>&1
echo "mmvar done at $(( $(date +%s) - t0 )) s"
sed 's/.*mm \([0-9x]*\):.*tessel \([0-9.]*\) ms.*cuBLAS \([0-9.]*\) ms.*ratio \([0-9.]*\)/&/' $R/mmvar.log | awk '{print $1, $NF}' | sort -k2 -n -r | head -40
cp $R/mmvar.log $OUT/
for spec in ${SPECS:-}; do
  name="${spec%%:*}"; rest="${spec#*:}"; secs="${rest##*@}"; w="${rest%@*}"
  timeout $((secs + 40)) tessel tune --target cuda --workload "$w" --trials 4000 --time ${secs}s --cost-model ${CM:-xgb} \
    --flush-cache --db $R/h200.db --json $R/$name.json > $R/$name.log 2>&1
  echo "tune $name rc=$? at $(( $(date +%s) - t0 )) s"; tail -2 $R/$name.log
  tessel db best --db $R/h200.db > $R/best.txt 2>&1
  (cd $R && tar czf $OUT/results.tgz *)
done
