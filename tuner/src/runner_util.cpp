// Pieces shared by the local and the RPC runner (tessel/tuner/runner_util.h).
#include "tessel/tuner/runner_util.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "measure_internal.h"
#include "tessel/codegen/target.h"

namespace tessel::tuner {

namespace fs = std::filesystem;

namespace {

bool is_ptx(const std::string& path) { return fs::path(path).extension() == ".ptx"; }

}  // namespace

void remove_artifact(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  fs::remove(path, ec);
  if (is_ptx(path)) fs::remove(fs::path(path).replace_extension(".json"), ec);
}

ReferenceBuilds::~ReferenceBuilds() {
  for (auto& [key, b] : refs_) remove_artifact(b.artifact_path);
}

const BuildResult& ReferenceBuilds::get(const workload::Workload& w) {
  auto it = refs_.find(w.key);
  if (it != refs_.end()) return it->second;
  std::error_code ec;
  fs::create_directories(work_dir_, ec);
  std::string ext = codegen::Target::parse(target_).is_cuda() ? ".ptx" : ".so";
  std::string path =
      (fs::path(work_dir_) / ("ref_" + detail::safe_key(w.key) + "_" + std::to_string(getpid()) + ext)).string();
  BuildResult r = build_reference(w, path, detail::kReferenceFunction, target_);
  return refs_.emplace(w.key, std::move(r)).first->second;
}

WorkerRequest make_measure_request(const workload::Workload& w, const BuildResult& b, const BuildResult& ref,
                                   const MeasureOptions& opt, double best_so_far_s) {
  WorkerRequest req;
  req.op = "measure";
  req.artifact = b.artifact_path;
  req.function = b.function_name.empty() ? detail::kCandidateFunction : b.function_name;
  if (is_ptx(b.artifact_path))
    req.artifact_kind = "ptx";  // a GPU build: PTX + PATH.json; the worker runs it on the CUDA device
  else
    req.function += "_packed";
  req.ref_artifact = ref.artifact_path;
  req.ref_function = ref.function_name;
  if (is_ptx(ref.artifact_path)) {  // a GPU reference; its launch travels in the request (RPC workers too)
    req.ref_artifact_kind = "ptx";
    std::string side = fs::path(ref.artifact_path).replace_extension(".json").string();
    std::ifstream in(side);
    if (!in.is_open()) throw std::runtime_error("cannot read the reference's launch description " + side);
    std::stringstream text;
    text << in.rdbuf();
    req.ref_launch = nlohmann::json::parse(text.str());
  } else {
    req.ref_function += "_packed";
  }
  req.ref_key = w.key;
  req.args = detail::worker_args(w);
  req.options = opt.to_json();
  req.best_so_far_s = best_so_far_s;
  return req;
}

void note_best(const MeasureResult& r, double* best_s) {
  if (r.ok() && (*best_s <= 0 || r.median_s() < *best_s)) *best_s = r.median_s();
}

bool wants_recheck(const MeasureResult& r, const MeasureOptions& opt, double best_s) {
  if (opt.recheck_rounds <= 0 || opt.recheck_max <= 0 || !r.ok()) return false;
  return best_s <= 0 || r.median_s() <= opt.recheck_ratio * best_s;
}

std::vector<size_t> recheck_set(const std::vector<MeasureResult>& results, const std::vector<char>& waiting,
                                const MeasureOptions& opt, double best_s) {
  std::vector<size_t> out;
  for (size_t i = 0; i < results.size() && i < waiting.size(); ++i)
    if (waiting[i] && wants_recheck(results[i], opt, best_s)) out.push_back(i);
  if (out.size() > size_t(opt.recheck_max)) {  // wants_recheck is false unless recheck_max > 0
    std::stable_sort(out.begin(), out.end(),
                     [&](size_t a, size_t b) { return results[a].median_s() < results[b].median_s(); });
    out.resize(size_t(opt.recheck_max));
    std::sort(out.begin(), out.end());
  }
  return out;
}

void merge_recheck(MeasureResult& r, const MeasureResult& again, const MeasureOptions& opt) {
  double wall = r.run_s + again.run_s;
  int rounds = r.rounds + 1;
  if (!r.ok()) {  // it misbehaved in an earlier round: that stands
    r.run_s = wall;
    r.rounds = rounds;
    return;
  }
  bool misbehaves =
      again.error_kind == MeasureErrorKind::kWrongAnswer || again.error_kind == MeasureErrorKind::kRuntimeError;
  if (!misbehaves && again.ok() && opt.recheck_merge == "pooled") {
    r.run_times_s.insert(r.run_times_s.end(), again.run_times_s.begin(), again.run_times_s.end());
  } else if (misbehaves || (again.ok() && again.median_s() < r.median_s())) {
    double build = r.build_s;
    r = again;
    r.build_s = build;
  }
  r.run_s = wall;
  r.rounds = rounds;
}

MeasureResult measure_error(MeasureErrorKind kind, std::string message) {
  MeasureResult r;
  r.error_kind = kind;
  r.error_message = std::move(message);
  return r;
}

MeasureResult measure_result_from(const WorkerResponse& resp) {
  auto kind = records::error_kind_from_name(resp.error_kind);
  MeasureResult r;
  r.error_kind = kind ? *kind : MeasureErrorKind::kWorkerLost;
  r.error_message = kind ? resp.message : "unknown error kind '" + resp.error_kind + "': " + resp.message;
  r.run_times_s = resp.times;
  if (r.error_kind == MeasureErrorKind::kNone && r.run_times_s.empty())
    return measure_error(MeasureErrorKind::kWorkerLost, "tessel-worker returned no run times");
  if (r.error_kind != MeasureErrorKind::kNone && r.error_kind != MeasureErrorKind::kEarlyAborted) r.run_times_s.clear();
  return r;
}

}  // namespace tessel::tuner
