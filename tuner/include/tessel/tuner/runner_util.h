// Pieces every Runner shares (the local runner and the RPC runner): reference builds cached per
// workload, the worker-protocol request of a built candidate, and a worker response as a MeasureResult.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tessel/tuner/measure.h"
#include "tessel/tuner/worker_protocol.h"

namespace tessel::tuner {

/** The reference build of each workload (build_reference for target: a shared library, or PTX + its
 *  launch description for a cuda target), built once into work_dir; the files are removed with this
 *  object. */
class ReferenceBuilds {
 public:
  explicit ReferenceBuilds(std::string work_dir, std::string target = "host")
      : work_dir_(std::move(work_dir)), target_(std::move(target)) {}
  ~ReferenceBuilds();
  ReferenceBuilds(const ReferenceBuilds&) = delete;
  ReferenceBuilds& operator=(const ReferenceBuilds&) = delete;
  /** Builds (first time) and returns the reference of w; error_kind tells whether the build failed. */
  const BuildResult& get(const workload::Workload& w);

 private:
  std::string work_dir_;
  std::string target_;
  std::map<std::string, BuildResult> refs_;  // workload key -> reference build
};

/** The "measure" request of a built candidate b of workload w against its reference ref. A PTX build
 *  (candidate or reference) is sent as artifact_kind "ptx"; a PTX reference also carries its launch
 *  description (read from the PATH.json beside it) as ref_launch. Throws std::runtime_error when that
 *  file cannot be read. */
WorkerRequest make_measure_request(const workload::Workload& w, const BuildResult& b, const BuildResult& ref,
                                   const MeasureOptions& opt, double best_so_far_s);

/** A worker's response as a MeasureResult (unknown kinds and ok-without-times become worker_lost; times
 *  are kept only for successes and early aborts). */
MeasureResult measure_result_from(const WorkerResponse& resp);

/** Deletes a built artifact: the shared library, or the PTX and the launch description beside it. */
void remove_artifact(const std::string& path);

/** Lowers *best_s (0 = none yet) to r's median if r succeeded faster. */
void note_best(const MeasureResult& r, double* best_s);

/** Whether a candidate just measured at r waits for rechecks (MeasureOptions::recheck_*): it succeeded and
 *  its median is within recheck_ratio x best_s (the best known so far, this result's included; 0 = none). */
bool wants_recheck(const MeasureResult& r, const MeasureOptions& opt, double best_s);

/** Of the candidates waiting (waiting[i] != 0), those to measure again now that the batch's first round
 *  is done: still within recheck_ratio x best_s, the fastest recheck_max of them, in batch order. */
std::vector<size_t> recheck_set(const std::vector<MeasureResult>& results, const std::vector<char>& waiting,
                                const MeasureOptions& opt, double best_s);

/** Folds a recheck into r: with opt.recheck_merge "fastest" the faster round's times are kept (slow phases
 *  only ever slow a kernel down), with "pooled" both rounds' times (the median is then the median of every
 *  round's timed runs: a lucky round counts no more than a slow one); wall times add up and rounds counts it. A wrong answer or a crash replaces r (a kernel that misbehaves
 *  once is not correct, and stays so in later rounds); other failures (timeouts, a lost worker, an early
 *  abort) are the machine's and leave r's times. */
void merge_recheck(MeasureResult& r, const MeasureResult& again, const MeasureOptions& opt);

/** A MeasureResult holding only an error. */
MeasureResult measure_error(MeasureErrorKind kind, std::string message);

}  // namespace tessel::tuner
