#!/usr/bin/env bash
# Writes the hand-written configurations of call 1 (PTX + JSON) into DIR/mmvar/ for mmvar.sh:
#   bench/gpu/tune-h200-vthread/gen.sh DIR   (after building tessel_bench_gen_matmul_ptx)
set -eu
G=${GEN:-build/bench/tessel_bench_gen_matmul_ptx}
mkdir -p "$1/mmvar"
for n in 4096 2048 1024; do
  for a in "64 64 16 8 4 4 1 0 1" "128 128 8 8 8 4 1 0 2" "128 128 8 8 8 4 1 2 2" "128 128 16 8 8 4 1 0 2" \
           "128 128 8 8 8 4 0 0 2" "128 64 8 8 8 4 1 0 2" "128 64 16 8 8 4 1 0 2" "64 128 8 8 8 4 1 0 2" \
           "64 64 16 8 8 4 1 0 2" "128 128 16 8 8 4 1 2 2" "64 64 8 8 8 4 1 0 2"; do
    set -- $a
    "$G" "$1/mmvar/mm${n}_${1}x${2}x${3}_${4}x${5}_p${7}_m${8}_vt${9}" $n $n $n $a
  done
done
