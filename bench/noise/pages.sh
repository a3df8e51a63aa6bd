#!/usr/bin/env bash
# dense's first batch (8 schedules, one measurement each in a fresh worker) measured N times per page
# backing, alternating: plain (4 KiB pages), thp (thp_shim.so), stag (thp_shim_staggered.so).
# usage: bench/noise/pages.sh OUTDIR N   (build/ built; writes OUTDIR/MODE_I.jsonl)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$1"; n="$2"; mkdir -p "$out"
t="$root/build/tools/tessel"
gcc -O2 -shared -fPIC -o "$out/thp_shim.so" "$root/bench/noise/thp_shim.c" -ldl
gcc -O2 -shared -fPIC -o "$out/thp_shim_staggered.so" "$root/bench/noise/thp_shim_staggered.c" -ldl
for i in $(seq 1 "$n"); do
  for mode in plain thp stag; do
    pre=()
    [ "$mode" = thp ] && pre=(env "LD_PRELOAD=$out/thp_shim.so")
    [ "$mode" = stag ] && pre=(env "LD_PRELOAD=$out/thp_shim_staggered.so")
    db="$out/${mode}_$i.db"; rm -f "$db"
    before=$(awk '/thp_fault_alloc/ {print $2}' /proc/vmstat)
    "${pre[@]}" taskset -c 0 "$t" tune --workload dense:M=128,N=2304,K=768,bias=1,activation=none --trials 8 \
      --batch 8 --seed 101 --recheck-rounds 0 --threads 1 -j 1 --db "$db" >/dev/null
    after=$(awk '/thp_fault_alloc/ {print $2}' /proc/vmstat)
    "$t" db export --db "$db" -o "$out/${mode}_$i.jsonl" >/dev/null
    echo "$mode $i huge-page faults: $((after - before))"
  done
done
