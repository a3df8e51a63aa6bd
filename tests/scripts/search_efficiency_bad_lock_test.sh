#!/bin/bash
# bench/search-efficiency: a --measure-lock that cannot be opened is refused up front with a message and
# exit status 2 (it used to abort with an uncaught exception from the first tuning run's runner).
# Usage: search_efficiency_bad_lock_test.sh BENCH_BINARY
bench=$1
out=$("$bench" --csv "/tmp/tessel_bad_lock_$$.csv" --only matmul --modes random --trials 8 --random-trials 8 \
  --seeds 1 --measure-lock /nonexistent-dir/x.lock 2>&1)
rc=$?
rm -f "/tmp/tessel_bad_lock_$$.csv" "/tmp/tessel_bad_lock_$$-runs.csv"
echo "$out"
if [ $rc -ne 2 ]; then echo "FAIL: exit status $rc, expected 2"; exit 1; fi
if ! grep -q "cannot open the measure lock /nonexistent-dir/x.lock" <<<"$out"; then echo "FAIL: no clear message"; exit 1; fi
echo "ok"
