// tessel-builder: builds one candidate in its own process, so that the tuner can stop a compile that
// exceeds its time limit (an LLVM compile cannot be interrupted inside a process).
//   tessel-builder --workload W.json --trace T.json --out C.so --function NAME [--target T]
// (with a cuda target --out is C.ptx, and C.json is written beside it)
// Prints one JSON line {"error_kind": "...", "message": "..."} and exits 0 (built) or 1 (not built).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tessel/records/record.h"
#include "tessel/schedule/step.h"
#include "tessel/tuner/measure.h"
#include "tessel/workload/workload.h"

namespace {
nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}
int answer(tessel::records::MeasureErrorKind kind, const std::string& msg) {
  std::cout << nlohmann::json{{"error_kind", tessel::records::error_kind_name(kind)}, {"message", msg}}.dump()
            << std::endl;
  return kind == tessel::records::MeasureErrorKind::kNone ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  std::string workload_path, trace_path, out, function = "kernel", target = "host";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--workload") workload_path = v;
    else if (k == "--trace") trace_path = v;
    else if (k == "--out") out = v;
    else if (k == "--function") function = v;
    else if (k == "--target") target = v;
    else return answer(tessel::records::MeasureErrorKind::kCompileError, "tessel-builder: unknown flag " + k);
  }
  if (workload_path.empty() || trace_path.empty() || out.empty())
    return answer(tessel::records::MeasureErrorKind::kCompileError,
                  "usage: tessel-builder --workload W.json --trace T.json --out C.so [--function NAME]");
  try {
    tessel::tuner::MeasureInput in;
    in.workload = std::make_shared<tessel::workload::Workload>(tessel::workload::from_json(read_json(workload_path)));
    in.trace = tessel::schedule::trace_from_json(read_json(trace_path));
    tessel::tuner::BuildResult r = tessel::tuner::build_candidate(in, out, function, target);
    return answer(r.error_kind, r.error_message);
  } catch (const std::exception& e) {
    return answer(tessel::records::MeasureErrorKind::kInvalidSchedule, e.what());
  }
}
