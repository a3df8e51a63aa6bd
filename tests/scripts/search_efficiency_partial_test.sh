#!/usr/bin/env bash
# ctest bench_search_efficiency_partial: scripts/bench search-efficiency writes its CSVs (and --curves)
# after each workload finishes, so a run stopped part-way keeps the workloads it finished. Runs two tiny
# workloads, stops the benchmark once the first one is in the CSV, and checks what it left.
set -euo pipefail
bench="$1"
tmp="$(mktemp -d)"
pid=""
cleanup() {
  [ -n "$pid" ] && kill -- -"$pid" 2>/dev/null || true
  [ -n "$pid" ] && rm -rf "/tmp/tessel-bench-se-$pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
csv="$tmp/se.csv"
# The held-out list has batch_matmul before matmul 512^3; "matmul:M" names the latter only.
setsid "$bench" --csv "$csv" --curves "$tmp/curves.csv" --trials 8 --random-trials 8 --seeds 1 --extra-seeds 0 \
  --remeasure-top 1 --remeasure-rounds 1 --only batch_matmul,matmul:M >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1200); do
  grep -q '^"batch_matmul' "$csv" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/err" >&2; fail "the benchmark ended before writing the first workload"; }
  sleep 0.25
done
grep -q '^"batch_matmul' "$csv" || fail "no batch_matmul row after 300 s"
kill -- -"$pid"
wait "$pid" 2>/dev/null || true
grep -q '^"matmul' "$csv" && fail "matmul finished too: the run was not stopped part-way (test timing)"
head -1 "$csv" | grep -q '^workload,best_gflops,' || fail "CSV header: $(head -1 "$csv")"
grep -q '^geometric mean' "$csv" || fail "the CSV has no geometric-mean row"
runs="${csv%.csv}-runs.csv"
for mode in random guided pretrained; do
  grep -q "^\"batch_matmul[^\"]*\",$mode,101," "$runs" || fail "no $mode run of batch_matmul in $runs"
done
[ "$(grep -c '^workload,mode,seed,trial,gflops$' "$tmp/curves.csv")" = 1 ] || fail "the curves header is not there once"
n="$(grep -c '^"batch_matmul' "$tmp/curves.csv")"
[ "$n" = 24 ] || fail "curves: $n batch_matmul lines, expected 24 (3 runs of 8 trials)"
echo "ok: the stopped run kept batch_matmul's rows, runs and curves"
