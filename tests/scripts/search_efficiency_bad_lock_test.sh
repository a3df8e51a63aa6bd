#!/bin/bash
# bench/search-efficiency: a --measure-lock that cannot be opened is refused up front with a message and
# exit status 2 (it used to abort with an uncaught exception from the first tuning run's runner). A lock
# file whose directory is removed while the benchmark runs (another run's private lock, shared through
# --measure-lock, goes when that run ends) fails the workload with the message and exit status 1, after
# the tables are written (it used to end in "terminate called ...").
# Usage: search_efficiency_bad_lock_test.sh BENCH_BINARY
bench=$1
out=$("$bench" --csv "/tmp/tessel_bad_lock_$$.csv" --only matmul --modes random --trials 8 --random-trials 8 \
  --seeds 1 --measure-lock /nonexistent-dir/x.lock 2>&1)
rc=$?
rm -f "/tmp/tessel_bad_lock_$$.csv" "/tmp/tessel_bad_lock_$$-runs.csv"
echo "$out"
if [ $rc -ne 2 ]; then echo "FAIL: exit status $rc, expected 2"; exit 1; fi
if ! grep -q "cannot open the measure lock /nonexistent-dir/x.lock" <<<"$out"; then echo "FAIL: no clear message"; exit 1; fi
echo "ok: a lock that cannot be opened is refused up front"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/lockdir"
# The random run (64 trials) opens the lock; the guided run after it opens it again, once the directory is gone.
"$bench" --csv "$tmp/se.csv" --only batch_matmul --modes random,guided --trials 8 --random-trials 64 --seeds 1 \
  --remeasure-top 1 --remeasure-rounds 1 --measure-lock "$tmp/lockdir/x.lock" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 600); do
  grep -q "random seed 101: trials 8 " "$tmp/err" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
grep -q "random seed 101: trials 8 " "$tmp/err" || { cat "$tmp/err"; echo "FAIL: no progress line from the random run"; exit 1; }
grep -q "guided seed" "$tmp/err" && { echo "FAIL: the guided run started before the lock went (test timing)"; exit 1; }
rm -rf "$tmp/lockdir"
wait "$pid"
rc=$?
cat "$tmp/err" "$tmp/out"
if [ $rc -ne 1 ]; then echo "FAIL: exit status $rc after the lock went, expected 1"; exit 1; fi
grep -q "terminate called" "$tmp/err" && { echo "FAIL: ended by an uncaught exception"; exit 1; }
grep -q "search-efficiency: batch_matmul.*cannot open the measure lock $tmp/lockdir/x.lock" "$tmp/err" \
  || { echo "FAIL: no message naming the workload and the lock"; exit 1; }
[ -f "$tmp/se.csv" ] || { echo "FAIL: no CSV written"; exit 1; }
echo "ok: a lock removed mid-run fails the workload with a message"
