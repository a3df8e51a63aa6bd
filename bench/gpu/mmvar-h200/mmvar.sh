#!/usr/bin/env bash
# Times every PTX in mmvar/ with bench/gpu/run_matmul_ptx.cu against cuBLAS SGEMM.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
nvcc -O2 -o /tmp/run_matmul_ptx bench/gpu/run_matmul_ptx.cu -lcuda -lcublas || exit 1
for f in "$here"/mmvar/*.ptx; do
  j="${f%.ptx}.json"
  read gx gy gz bx by bz n < <(python3 -c "import json,sys; d=json.load(open('$j')); print(*d['grid'], *d['block'], d['params'][0]['shape'][0])")
  /tmp/run_matmul_ptx "$f" mm $gx $gy $gz $bx $by $bz 0 $n $n $n 2>&1 | sed "s|^|$(basename $f .ptx) |"
done | tee $OUT/mmvar.log
