# ctest driver (cmake -P) for `tessel db` and `tessel compile`: runs commands in order against a
# database made by records_fill_db and checks exit codes, messages and files.
# Inputs: TESSEL FILL WORK_DIR
set(spec "matmul:M=64,N=64,K=64")

# check(RC expected_rc MATCH regex COMMAND args...)
function(check)
  cmake_parse_arguments(C "" "RC;MATCH" "COMMAND" ${ARGN})
  execute_process(COMMAND ${C_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL C_RC)
    message(FATAL_ERROR "exit ${rc}, expected ${C_RC}: ${C_COMMAND}\n${out}${err}")
  endif()
  if(C_MATCH AND NOT "${out}${err}" MATCHES "${C_MATCH}")
    message(FATAL_ERROR "expected /${C_MATCH}/ from: ${C_COMMAND}\n${out}${err}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(db "${WORK_DIR}/cli.db")
check(RC 0 COMMAND "${FILL}" "${db}" best ${spec})

check(RC 0 MATCH "records 4 \\(3 ok\\).*compile_timeout: 1" COMMAND "${TESSEL}" db stats --db "${db}")
check(RC 0 MATCH "\"schema_version\": 1" COMMAND "${TESSEL}" db stats --db "${db}" --json)
check(RC 0 MATCH "matmul +4 " COMMAND "${TESSEL}" db list --db "${db}")
check(RC 0 MATCH "compile_timeout" COMMAND "${TESSEL}" db list --db "${db}" --workload ${spec})
check(RC 0 MATCH "record 1: median 0.0100 ms, [0-9.]+ GFLOP/s.*tile\\(fx=4" COMMAND "${TESSEL}" db best --db "${db}" --workload ${spec})
check(RC 0 MATCH "\"found\": true" COMMAND "${TESSEL}" db best --db "${db}" --workload ${spec} --json)
check(RC 1 MATCH "no usable record: no record for workload key" COMMAND "${TESSEL}" db best --db "${db}" --workload matmul:M=8,N=8,K=8)
check(RC 0 MATCH "trace [0-9a-f]+:.*tile\\(fx=4" COMMAND "${TESSEL}" db show --db "${db}" --id 1)
check(RC 0 MATCH "\"trace_hash\"" COMMAND "${TESSEL}" db show --db "${db}" --id 1 --json)
check(RC 1 MATCH "no record with id 99" COMMAND "${TESSEL}" db show --db "${db}" --id 99)
check(RC 0 MATCH "exact match; 2 ok, failed: 1 compile_timeout.*=> uses record 1"
      COMMAND "${TESSEL}" db why --db "${db}" --workload ${spec})
check(RC 0 MATCH "incompatible \\(cpu [a-z0-9-]+ != " COMMAND "${TESSEL}" db why --db "${db}" --workload ${spec})
check(RC 0 MATCH "=> default schedule: records for workload key [0-9a-f]+ exist only for other targets"
      COMMAND "${TESSEL}" db why --db "${db}" --workload ${spec} --target "llvm -mcpu=generic")

# export -> import -> distill
check(RC 0 MATCH "exported 4 record" COMMAND "${TESSEL}" db export --db "${db}" -o "${WORK_DIR}/all.jsonl")
check(RC 0 MATCH "imported 4 record.*0 already present" COMMAND "${TESSEL}" db import --db "${WORK_DIR}/copy.db" "${WORK_DIR}/all.jsonl")
check(RC 0 MATCH "imported 0 record.*4 already present" COMMAND "${TESSEL}" db import --db "${WORK_DIR}/copy.db" "${WORK_DIR}/all.jsonl")
check(RC 0 MATCH "kept 2 record" COMMAND "${TESSEL}" db distill --db "${WORK_DIR}/copy.db" --k 1 -o "${WORK_DIR}/small.db")
check(RC 0 MATCH "records 2 \\(2 ok\\)" COMMAND "${TESSEL}" db stats --db "${WORK_DIR}/small.db")
check(RC 0 MATCH "kept 2 record.*best 1 distinct schedules" COMMAND "${TESSEL}" db distill --db "${WORK_DIR}/copy.db" --k 1 --distinct -o "${WORK_DIR}/distinct.db")

# compile
check(RC 0 MATCH "mm \\(matmul\\): using record 1, median 0.01 ms.*wrote .*mm.o .*mm.so .*mm.h"
      COMMAND "${TESSEL}" compile --db "${db}" --workload ${spec} -o "${WORK_DIR}/mm")
foreach(ext o so h)
  if(NOT EXISTS "${WORK_DIR}/mm.${ext}")
    message(FATAL_ERROR "tessel compile did not write mm.${ext}")
  endif()
endforeach()
file(READ "${WORK_DIR}/mm.h" header)
if(NOT header MATCHES "int32_t mm\\(float\\* __restrict A, float\\* __restrict B, float\\* __restrict C\\)")
  message(FATAL_ERROR "unexpected header:\n${header}")
endif()
check(RC 0 MATCH "small \\(matmul\\): default schedule: no record for workload key"
      COMMAND "${TESSEL}" compile --db "${db}" --workload matmul:M=8,N=8,K=8 -o "${WORK_DIR}/small" --emit o,h)
check(RC 0 MATCH "default schedule: records for workload key .* exist only for other targets"
      COMMAND "${TESSEL}" compile --db "${db}" --workload ${spec} --target "llvm -mcpu=generic" -o "${WORK_DIR}/gen" --emit h)

# a .te file of the same computation has the same workload key: the spec's record applies
file(WRITE "${WORK_DIR}/mm.te" "input A: float32[64, 64]\ninput B: float32[64, 64]\nC[i, j] = sum(A[i, k] * B[k, j], k)\n")
check(RC 0 MATCH "mmte \\(mm\\): using record 1"
      COMMAND "${TESSEL}" compile --db "${db}" --te "${WORK_DIR}/mm.te" -o "${WORK_DIR}/mmte" --emit h)

# errors: bad flags exit 2, missing / foreign files exit 1 with a clear message
check(RC 2 MATCH "give exactly one of --workload and --te" COMMAND "${TESSEL}" compile --db "${db}" -o "${WORK_DIR}/x")
check(RC 2 MATCH "--db is required" COMMAND "${TESSEL}" compile --workload ${spec} -o "${WORK_DIR}/x")
check(RC 2 MATCH "unknown action 'frobnicate'" COMMAND "${TESSEL}" db frobnicate --db "${db}")
check(RC 2 MATCH "--db PATH is required" COMMAND "${TESSEL}" db stats)
check(RC 1 MATCH "no tessel tuning database at" COMMAND "${TESSEL}" compile --db "${WORK_DIR}/missing.db" --workload ${spec} -o "${WORK_DIR}/x")
file(WRITE "${WORK_DIR}/notes.txt" "not a database\n")
check(RC 1 MATCH "not an SQLite file.*left untouched" COMMAND "${TESSEL}" db stats --db "${WORK_DIR}/notes.txt")
file(READ "${WORK_DIR}/notes.txt" notes)
if(NOT notes STREQUAL "not a database\n")
  message(FATAL_ERROR "a refused file was modified")
endif()
message(STATUS "tessel db / compile: ok")
