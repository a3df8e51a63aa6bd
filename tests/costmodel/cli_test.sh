#!/usr/bin/env bash
# ctest driver for `tessel costmodel train | eval | cv | features` end to end: two tiny workloads tuned for real
# (random schedules, measured on this machine), a model trained on one and evaluated on the other
# (text, --json and --scores), cross-validation over both, the features CSV (checked against the analytic
# model's scores), and refusals (a damaged model file, a database without records). Usage: cli_test.sh TESSEL WORK_DIR
set -u
tessel="$1"
dir="$2"
rm -rf "$dir" && mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }

for spec in matmul:M=32,N=32,K=32 matmul:M=48,N=32,K=64; do
  db="$dir/${spec//[:=,]/_}.db"
  "$tessel" tune --workload "$spec" --strategy random --cost-model random --trials 24 --threads 1 --seed 3 \
    --db "$db" > "$dir/tune.log" 2>&1 || { cat "$dir/tune.log"; fail "tune $spec"; }
done
a="$dir/matmul_M_32_N_32_K_32.db"
b="$dir/matmul_M_48_N_32_K_64.db"

"$tessel" costmodel train --db "$a" --model xgb-rank -o "$dir/m.model" > "$dir/train.log" 2>&1 ||
  { cat "$dir/train.log"; fail "train"; }
grep -q "trained xgb-rank on" "$dir/train.log" || fail "train did not report: $(cat "$dir/train.log")"
head -1 "$dir/m.model" | grep -qx "TESSEL-COSTMODEL" || fail "model file has no signature"

out="$("$tessel" costmodel eval --model "$dir/m.model" --db "$b" 2>&1)" || fail "eval: $out"
echo "$out" | grep -Eq "^overall: pairwise accuracy (0|1)\.[0-9]{3}, recall@30 " || fail "eval text: $out"
echo "$out" | grep -q "among good candidates" || fail "eval text has no good-pairs line: $out"

"$tessel" costmodel eval --model "$dir/m.model" --db "$b" --json --scores "$dir/scores.csv" > "$dir/eval.json" ||
  fail "eval --json --scores"
python3 - "$dir/eval.json" "$dir/scores.csv" <<'PY' || fail "eval JSON or scores CSV is wrong"
import csv, json, sys
j = json.load(open(sys.argv[1]))
assert j["workloads"] and len(j["workloads"]) == 1, j
w = j["workloads"][0]
for k in ("pairwise_accuracy", "pairwise_accuracy_good", "recall_at_30", "top1_score"):
    assert 0.0 <= j[k] <= 1.0 and 0.0 <= w[k] <= 1.0, (k, j)
rows = list(csv.DictReader(open(sys.argv[2])))
assert list(rows[0].keys()) == ["workload", "trace_hash", "gflops", "aborted", "score"], rows[0].keys()
assert len(rows) == w["candidates"], (len(rows), w["candidates"])
assert len({r["trace_hash"] for r in rows}) == len(rows)
assert all(float(r["gflops"]) > 0 and r["aborted"] in ("0", "1") for r in rows)
assert len({r["score"] for r in rows}) > 1, "every candidate got the same score"
assert all(r["workload"].startswith("matmul:M=48") for r in rows)
PY

out="$("$tessel" costmodel cv --db "$a" --db "$b" --model xgb --json 2>&1)" || fail "cv: $out"
echo "$out" | python3 -c "import json,sys; j=json.load(sys.stdin); assert len(j['workloads']) == 2, j" ||
  fail "cv JSON: $out"
# several --params share one extraction (code features too, when one setting reads them): each setting's
# report equals that of a cv run with it alone
p1='{"num_rounds":20}'
p2='{"num_rounds":30,"code_features":true}'
out="$("$tessel" costmodel cv --db "$a" --db "$b" --model xgb-rank --params "$p1" --params "$p2" --json 2>&1)" ||
  fail "cv with two --params: $out"
one="$("$tessel" costmodel cv --db "$a" --db "$b" --model xgb-rank --params "$p1" --json 2>&1)" || fail "cv p1: $one"
two="$("$tessel" costmodel cv --db "$a" --db "$b" --model xgb-rank --params "$p2" --json 2>&1)" || fail "cv p2: $two"
python3 - "$out" "$one" "$two" <<'PY' || fail "cv with two --params differs from the single runs: $out"
import json, sys
both, one, two = (json.loads(a) for a in sys.argv[1:])
assert isinstance(both, list) and len(both) == 2, both
for got, want in zip(both, (one, two)):
    assert len(got["workloads"]) == 2, got
    for k in ("pairwise_accuracy", "recall_at_30", "top1_score"):
        assert abs(got[k] - want[k]) < 1e-12, (k, got[k], want[k])
assert '"num_rounds":30' in both[1]["model"], both[1]["model"]
PY

# features: one row per candidate with the loop-nest and code features; the analytic model's score is a
# function of its columns (the roofline, the L2 traffic, and the hot loop's FMA, arithmetic, chain and
# FLOPs-per-load features), so it is recomputed from the CSV and compared with eval's.
"$tessel" costmodel features --db "$b" -o "$dir/features.csv" > "$dir/features.log" 2>&1 ||
  { cat "$dir/features.log"; fail "features"; }
"$tessel" costmodel eval --model analytic --db "$b" --scores "$dir/analytic.csv" > /dev/null 2>&1 || fail "eval analytic"
python3 - "$dir/features.csv" "$dir/analytic.csv" "$dir/scores.csv" <<'PY' || fail "features CSV is wrong"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = list(rows[0].keys())
assert cols[:8] == ["workload", "trace_hash", "gflops", "aborted", "traffic_l1_per_flop", "traffic_l2_per_flop",
                    "traffic_l3_per_flop", "hot_loop_flops_per_cycle"], cols[:8]
assert "code.hot_fma" in cols and "nest.float_mul" in cols and "nest.traffic_l1" in cols, cols
assert len(rows) == len(list(csv.DictReader(open(sys.argv[3])))), "not one row per candidate"
for r in rows:
    assert float(r["hot_loop_flops_per_cycle"]) > 0, r["trace_hash"]
    assert all(float(r[k]) >= 0 for k in cols[4:7]), r["trace_hash"]
    assert float(r["nest.float_mul"]) + float(r["nest.float_mad"]) > 0, r["trace_hash"]
assert len({r["traffic_l1_per_flop"] for r in rows}) > 1, "every candidate has the same L1 traffic"
scores = {r["trace_hash"]: float(r["score"]) for r in csv.DictReader(open(sys.argv[2]))}
count = lambda r, k: 2 ** float(r["code." + k]) - 1  # the code features are log2(1 + x)
def slack(r):  # log2 of the FMA pipes' cycles over the longest chain's latency, in [-2, 2]
    chain, arith = count(r, "hot_chain"), count(r, "hot_fma") + count(r, "hot_vector_arith")
    return 0 if chain <= 0 or arith <= 0 else min(2, max(-2, math.log2(arith / 2 / (4 * chain))))
assert len({slack(r) for r in rows}) > 1, "every candidate has the same latency slack"
for r in rows:
    mine = (math.log2(float(r["hot_loop_flops_per_cycle"]) + 1 / 64) - 0.1 * float(r["traffic_l2_per_flop"]) +
            0.1 * slack(r) + 0.1 * float(r["code.flops_per_load"]))
    assert abs(mine - scores[r["trace_hash"]]) < 1e-3 * max(1, abs(mine)), (r["trace_hash"], mine, scores[r["trace_hash"]])
PY
out="$("$tessel" costmodel features --db "$b" 2>&1)" && fail "features without -o"
echo "$out" | grep -q "give -o FILE.csv" || fail "features without -o: $out"

# A damaged model file is refused with what to do; training from a database that does not exist writes no model.
head -c 300 "$dir/m.model" > "$dir/cut.model"
out="$("$tessel" costmodel eval --model "$dir/cut.model" --db "$b" 2>&1)" && fail "a truncated model was loaded"
echo "$out" | grep -qi "save the model again" || fail "truncated model message: $out"
out="$("$tessel" costmodel train --db "$dir/nonexistent.db" -o "$dir/x.model" 2>&1)" && fail "train on a missing database"
[ ! -e "$dir/x.model" ] || fail "a model was written from a missing database"
echo "costmodel CLI: ok"
