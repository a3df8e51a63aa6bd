# ctest driver (cmake -P) for `tessel report`: renders a report of a database made by report_fill_db,
# opens it in headless Chromium and checks that every chart drew (canvas ids, data-charts-drawn); then
# the empty, missing, unwritable and no-Chart.js cases.
# Inputs: TESSEL FILL CHROMIUM WORK_DIR EXPECTED_CHARTS
if(NOT CHROMIUM)
  message(FATAL_ERROR "chromium was not found when tessel was configured: install Debian's chromium "
                      "(scripts/setup does) and re-run cmake")
endif()

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

# chromium(DOM_VAR args...): headless Chromium with a fresh profile; the virtual-time budget lets the
# page's scripts run before the DOM is dumped.
function(chromium out_var)
  execute_process(
    COMMAND "${CHROMIUM}" --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions
            --disable-dev-shm-usage --user-data-dir=${WORK_DIR}/chromium-profile --virtual-time-budget=5000
            --window-size=1280,4000 ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "chromium failed (${rc}): ${ARGN}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(db "${WORK_DIR}/tuning.db")
set(html "${WORK_DIR}/report.html")
check(RC 0 COMMAND "${FILL}" "${db}" full)
check(RC 0 MATCH "wrote .*report.html: 2 workload section\\(s\\), ${EXPECTED_CHARTS} chart\\(s\\)"
      COMMAND "${TESSEL}" report --db "${db}" -o "${html}")

# The page in a browser: every chart drew.
string(TIMESTAMP t_start "%s")
chromium(dom --dump-dom "file://${html}")
string(TIMESTAMP t_end "%s")
math(EXPR t_chromium "${t_end} - ${t_start}")
message(STATUS "chromium --dump-dom took about ${t_chromium} s")
file(WRITE "${WORK_DIR}/dom.html" "${dom}")
if(NOT dom MATCHES "<body[^>]* data-charts-drawn=\"([0-9]+)\"")
  message(FATAL_ERROR "no data-charts-drawn attribute on <body> in the dumped DOM (${WORK_DIR}/dom.html)")
endif()
set(drawn "${CMAKE_MATCH_1}")
if(NOT drawn EQUAL EXPECTED_CHARTS OR drawn EQUAL 0)
  message(FATAL_ERROR "${drawn} charts drew, expected ${EXPECTED_CHARTS} (${WORK_DIR}/dom.html)")
endif()
if(NOT dom MATCHES "data-charts-expected=\"${EXPECTED_CHARTS}\"")
  message(FATAL_ERROR "the page expects a different number of charts than ${EXPECTED_CHARTS}")
endif()
foreach(id s0-trials s0-time s0-errors s1-trials s1-time s1-errors n0)
  if(NOT dom MATCHES "<canvas id=\"${id}\"[^>]*data-drawn=\"1\"")
    message(FATAL_ERROR "canvas ${id} missing or blank in the dumped DOM (${WORK_DIR}/dom.html)")
  endif()
endforeach()
if(NOT dom MATCHES "${EXPECTED_CHARTS} of ${EXPECTED_CHARTS} charts drawn \\(Chart.js 3")
  message(FATAL_ERROR "the status line does not report every chart drawn (${WORK_DIR}/dom.html)")
endif()
if(dom MATCHES "<script>alert")
  message(FATAL_ERROR "an error message was not escaped (${WORK_DIR}/dom.html)")
endif()

# A screenshot (kept for people; the test only checks that it was written and is not tiny).
chromium(shot "--screenshot=${WORK_DIR}/report.png" "file://${html}")
file(SIZE "${WORK_DIR}/report.png" png_bytes)
if(png_bytes LESS 20000)
  message(FATAL_ERROR "screenshot ${WORK_DIR}/report.png is only ${png_bytes} bytes")
endif()

# An empty database: a page that says so, no charts.
set(empty "${WORK_DIR}/empty.db")
check(RC 0 COMMAND "${FILL}" "${empty}" empty)
check(RC 0 MATCH "0 workload section\\(s\\), 0 chart\\(s\\), 0 record" COMMAND "${TESSEL}" report --db "${empty}"
      -o "${WORK_DIR}/empty.html")
file(READ "${WORK_DIR}/empty.html" empty_html)
if(NOT empty_html MATCHES "has no records yet")
  message(FATAL_ERROR "the empty database's page does not say it has no records")
endif()
chromium(empty_dom --dump-dom "file://${WORK_DIR}/empty.html")
if(NOT empty_dom MATCHES "data-charts-drawn=\"0\"" OR NOT empty_dom MATCHES "0 of 0 charts drawn")
  message(FATAL_ERROR "the empty page's script did not run cleanly:\n${empty_dom}")
endif()

# Errors: exit 1 with a message naming the problem; exit 2 for bad flags.
check(RC 1 MATCH "no tessel tuning database at" COMMAND "${TESSEL}" report --db "${WORK_DIR}/missing.db" -o "${WORK_DIR}/m.html")
file(WRITE "${WORK_DIR}/garbage.db" "this is not a database, it is a text file long enough to have a header\n")
check(RC 1 MATCH "not a tessel tuning database" COMMAND "${TESSEL}" report --db "${WORK_DIR}/garbage.db" -o "${WORK_DIR}/g.html")
check(RC 1 MATCH "cannot write the report to '.*no/such/dir/r.html'"
      COMMAND "${TESSEL}" report --db "${db}" -o "${WORK_DIR}/no/such/dir/r.html")
check(RC 1 MATCH "cannot write the report to .*: it is a directory" COMMAND "${TESSEL}" report --db "${db}" -o "${WORK_DIR}")
check(RC 1 MATCH "cannot read Chart.js from --chartjs .*nope.js"
      COMMAND "${TESSEL}" report --db "${db}" -o "${WORK_DIR}/x.html" --chartjs "${WORK_DIR}/nope.js")
check(RC 2 MATCH "give -o FILE.html" COMMAND "${TESSEL}" report --db "${db}")
check(RC 2 MATCH "give --db PATH" COMMAND "${TESSEL}" report -o "${WORK_DIR}/x.html")
if(EXISTS "${WORK_DIR}/missing.db" OR EXISTS "${WORK_DIR}/x.html")
  message(FATAL_ERROR "a failed report created a file")
endif()

# Network weights: the estimated-latency section names its source.
check(RC 0 COMMAND "${TESSEL}" report --db "${db}" -o "${WORK_DIR}/weighted.html" --network resnet50)
file(READ "${WORK_DIR}/weighted.html" weighted)
if(NOT weighted MATCHES "Weights from network resnet50")
  message(FATAL_ERROR "--network did not set the weights' source")
endif()
if(NOT weighted MATCHES "[1-9][0-9]* weighted workload\\(s\\) have no records on this target")
  message(FATAL_ERROR "--network with workloads that have no records does not say so")
endif()
