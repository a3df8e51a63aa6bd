# ctest driver (cmake -P): installs tessel into a scratch prefix, then configures, builds and runs
# examples/tuned_matmul against the installed package -- with a database holding a good record (the
# "best record" path), with an empty one (the default schedule), and again after records were added
# to the empty one (the kernel is regenerated because it depends on the database file).
# Inputs: BUILD_DIR SOURCE_DIR WORK_DIR FILL (records_fill_db) GENERATOR MAKE_PROGRAM CXX_COMPILER
set(spec "matmul:M=64,N=64,K=64")

function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected /${regex}/ in:\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
run(out ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
foreach(f bin/tessel lib/libtessel_runtime.a lib/cmake/tessel/tesselConfig.cmake include/tessel/runtime/c_runtime.h)
  if(NOT EXISTS "${WORK_DIR}/prefix/${f}")
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()
run(out "${FILL}" "${WORK_DIR}/tuned.db" best ${spec})
run(out "${FILL}" "${WORK_DIR}/empty.db" empty)

foreach(kind tuned empty)
  set(b "${WORK_DIR}/build-${kind}")
  run(out ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/tuned_matmul" -B "${b}" -G "${GENERATOR}"
      "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DTUNED_DB=${WORK_DIR}/${kind}.db")
  run(out ${CMAKE_COMMAND} --build "${b}" -- -v)
  if(kind STREQUAL "tuned")
    expect("${out}" "matmul_64 \\(matmul\\): using record [0-9]+, median" "build with a tuned database")
  else()
    expect("${out}" "matmul_64 \\(matmul\\): default schedule: no record for workload key" "build with an empty database")
  endif()
  run(out "${b}/tuned_matmul")
  expect("${out}" "tuned_matmul: ok" "running the ${kind} example")
endforeach()

# New records in the database regenerate the kernel on the next build.
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1)
run(out "${FILL}" "${WORK_DIR}/empty.db" best ${spec})
run(out ${CMAKE_COMMAND} --build "${WORK_DIR}/build-empty")
expect("${out}" "using record [0-9]+" "rebuild after adding records")
run(out "${WORK_DIR}/build-empty/tuned_matmul")
expect("${out}" "tuned_matmul: ok" "running the rebuilt example")
message(STATUS "example project: ok")
