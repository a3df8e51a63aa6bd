#!/usr/bin/env bash
# ctest driver for the remote-measurement commands on 127.0.0.1: `tessel tracker`, two `tessel worker`s
# (ephemeral ports read from --port-file), `tessel tune --tracker --key --token-file` through them,
# `tessel tracker status`, and refusals (no token, wrong token). Usage: cli_test.sh TESSEL WORK_DIR
set -u
tessel="$1"
dir="$2"
rm -rf "$dir" && mkdir -p "$dir"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.log; do echo "== $f"; cat "$f"; done; exit 1; }
wait_file() { for _ in $(seq 1 1200); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }

echo "token-$$-$RANDOM" > "$dir/token"
"$tessel" tracker --listen 127.0.0.1:0 --port-file "$dir/tracker.port" --token-file "$dir/token" \
  --heartbeat-s 0.5 > "$dir/tracker.log" 2>&1 &
pids+=($!)
wait_file "$dir/tracker.port" || fail "the tracker did not start"
tracker="127.0.0.1:$(cat "$dir/tracker.port")"
for i in 1 2; do
  "$tessel" worker --tracker "$tracker" --key cpu --listen 127.0.0.1:0 --port-file "$dir/worker$i.port" \
    --token-file "$dir/token" > "$dir/worker$i.log" 2>&1 &
  pids+=($!)
  wait_file "$dir/worker$i.port" || fail "worker $i did not start"
done
ok=0
for _ in $(seq 1 600); do
  if "$tessel" tracker status --tracker "$tracker" --token-file "$dir/token" 2>&1 | grep -Eq '^cpu +2 +0 +0'; then
    ok=1; break
  fi
  sleep 0.1
done
[ $ok = 1 ] || fail "tracker status never showed 2 free cpu workers"

# Unauthenticated and wrongly authenticated clients are refused.
out="$("$tessel" tracker status --tracker "$tracker" 2>&1)" && fail "status without a token succeeded: $out"
echo "$out" | grep -q "missing token" || fail "no 'missing token' in: $out"
echo wrong > "$dir/wrong"
out="$("$tessel" tracker status --tracker "$tracker" --token-file "$dir/wrong" 2>&1)" && fail "wrong token accepted"
echo "$out" | grep -q "wrong token" || fail "no 'wrong token' in: $out"
# A server would not listen beyond loopback without authentication.
out="$("$tessel" tracker --listen 0.0.0.0:0 2>&1)" && fail "tracker listened on 0.0.0.0 without authentication"
echo "$out" | grep -q "refusing to listen" || fail "no refusal in: $out"

# Tune through the tracker and the two workers; every trial is recorded.
"$tessel" tune --workload matmul:M=64,N=64,K=64 --trials 12 --batch 6 --strategy random --db "$dir/rpc.db" \
  --tracker "$tracker" --key cpu --token-file "$dir/token" --threads 1 > "$dir/tune.log" 2>&1 \
  || fail "tessel tune through the tracker failed"
grep -q "12 trials" "$dir/tune.log" || fail "not 12 trials"
"$tessel" db stats --db "$dir/rpc.db" > "$dir/stats.log" 2>&1 || fail "db stats"
measured=$(sed -n 's/remote measurement: \([0-9]*\) candidates.*/\1/p' "$dir/tune.log")
[ "${measured:-0}" -ge 12 ] || fail "fewer than 12 candidates were measured remotely: $(cat "$dir/tune.log")"
# No record lost: every remotely measured candidate is in the database (the tuner may measure a few
# baselines beyond --trials).
grep -q "records $measured (" "$dir/stats.log" || fail "not $measured records: $(cat "$dir/stats.log")"
# The leases were released: both workers are free again.
"$tessel" tracker status --tracker "$tracker" --token-file "$dir/token" | grep -Eq '^cpu +2 +0 +0' \
  || fail "workers not free after tuning"

# A worker without a tracker, named directly with `tessel tune --worker`.
"$tessel" worker --listen 127.0.0.1:0 --port-file "$dir/direct.port" --token-file "$dir/token" > "$dir/direct.log" 2>&1 &
pids+=($!)
wait_file "$dir/direct.port" || fail "the direct worker did not start"
"$tessel" tune --workload matmul:M=64,N=64,K=64 --trials 4 --batch 4 --strategy random --db "$dir/direct.db" \
  --worker "127.0.0.1:$(cat "$dir/direct.port")" --token-file "$dir/token" --threads 1 > "$dir/tune_direct.log" 2>&1 \
  || fail "tessel tune --worker failed"
measured=$(sed -n 's/remote measurement: \([0-9]*\) candidates.*/\1/p' "$dir/tune_direct.log")
[ "${measured:-0}" -ge 4 ] || fail "fewer than 4 candidates measured by the direct worker"
"$tessel" db stats --db "$dir/direct.db" | grep -q "records $measured (" || fail "not $measured records (direct)"
echo "rpc cli test passed"
