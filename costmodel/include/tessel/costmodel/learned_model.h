// The shared part of the learned cost models ("xgb", "xgb-rank", "mlp"): feature rows per candidate
// (cached by workload and trace), the measured samples with per-workload normalized labels, the adaptive
// retraining rule, and the saved-file envelope (signature, model kind, kFeatureVersion, checksum).
// A concrete model implements fit / score / serialize / deserialize over feature rows only, which is also
// what offline training (from records) and the benchmark use.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessel/codegen/target.h"
#include "tessel/costmodel/code_features.h"
#include "tessel/costmodel/cost_model.h"
#include "tessel/costmodel/features.h"

namespace tessel::costmodel {

/** Features of one program: a loop-nest row per store (features.h) and, for models that read them, the
 *  features of its compiled code (code_features.h). */
struct ProgramFeatures {
  std::vector<std::vector<float>> rows;  // empty = the candidate is invalid
  std::vector<float> code;               // empty = not extracted (the model does not read them) or no code
  bool empty() const { return rows.empty(); }
};

/** One measured program: its rows, workload key (labels are normalized per workload) and throughput. */
struct Sample {
  std::shared_ptr<const ProgramFeatures> features;
  std::string workload_key;
  double throughput = 0;
};

/** Knobs shared by the learned models (read from ModelParams; model-specific keys are read by each). */
struct LearnedParams {
  uint64_t seed = 1;
  size_t min_samples = 64;      // trained() once this many samples were learned from
  double retrain_ratio = 0.2;   // retrain when the data grew by this share since the last fit ...
  size_t retrain_samples = 64;  // ... or by this many samples
  int nthread = 0;              // 0 = std::thread::hardware_concurrency()
  static LearnedParams from_json(const ModelParams& p);
};

/** Score given to candidates whose features cannot be extracted (invalid schedules): ranks them last
 *  while staying finite for strategies that subtract scores. */
constexpr double kInvalidScore = -1e30;

class LearnedModel : public CostModel {
 public:
  explicit LearnedModel(const ModelParams& params);

  std::vector<double> predict(const std::vector<Candidate>& candidates) override;
  void update(const std::vector<Candidate>& candidates, const std::vector<double>& throughput) override;
  bool trained() const override { return fitted_ || base_ != nullptr || !learns(); }
  size_t num_samples() const override { return samples_.size(); }
  void save(const std::string& path) const override;
  void load(const std::string& path) override;

  /** predict() on precomputed rows (random scores before the first fit; kInvalidScore for empty rows). */
  std::vector<double> predict_features(const std::vector<const ProgramFeatures*>& programs);
  /** update() on precomputed samples. */
  void update_samples(const std::vector<Sample>& samples);
  /** Fits on all samples now (ignores the retraining thresholds; needs at least one sample). */
  void fit_now();
  /** The features of a candidate, from the cache when seen before (shared, never null). */
  std::shared_ptr<const ProgramFeatures> features_of(const Candidate& c);
  /** features_of for many; those not cached are extracted on parallel threads when the model reads code
   *  features (a compile each). */
  std::vector<std::shared_ptr<const ProgramFeatures>> features_of(const std::vector<Candidate>& c);
  /** Code features (uses_code_features(): xgb-rank with "code_features": true) are compiled for this
   *  target; the feature cache is cleared when it changes. */
  void set_code_target(const codegen::Target& t) override {
    code_target_ = t;
    cache_.clear();
    if (fallback_) fallback_->set_code_target(t);
  }
  const codegen::Target& code_target() const { return code_target_; }

  /** Starts from a trained model (a pretrained one) of the same kind and the same use of code features
   *  (another is refused; a model that reads code features may also start from the "analytic" one): until this
   *  model has fitted its own samples it predicts with base; afterwards models that fit residuals
   *  (fits_residuals(): "xgb", "xgb-rank") learn what base gets wrong on this data and predict base + own,
   *  and the others ("mlp") predict with their own fit alone.
   *  A model with a base is not saved (save() refuses; train offline with `tessel costmodel train`). */
  void set_base(std::unique_ptr<LearnedModel> base);
  const LearnedModel* base() const { return base_.get(); }

  /** The online check of a model started from a base (a pretrained one, which may not carry over to this
   *  machine or workload): fallback is the model the run would use without it (a cold one). It learns every
   *  update too (sharing the extracted features). Each update of one workload's measurements, before either
   *  learns from them, is a test: how many of its pairs (pair_agreement) each model orders as measured. Over
   *  the last kCheckBatches updates, once they hold kCheckPairs pairs, this model predicts with the fallback
   *  when the fallback ordered kCheckMargin more of them right (and with itself again when it leads by as
   *  much). A fallback that is not trained yet (random scores) takes no test. Needs a base; same use of code
   *  features. */
  void set_fallback(std::unique_ptr<LearnedModel> fallback);
  /** Whether predictions come from the fallback now. */
  bool on_fallback() const { return on_fallback_; }
  /** Pairs the check has counted over its window: this model's right ones, the fallback's, all. */
  struct CheckCounts {
    double own = 0, fallback = 0, pairs = 0;
  };
  CheckCounts check_counts() const;
  static constexpr size_t kCheckBatches = 12;
  static constexpr double kCheckPairs = 60, kCheckMargin = 0.1;

 protected:
  /** Fits the model on samples with labels (throughput / best throughput of the sample's workload).
   *  offsets: null, or the base model's score of each sample, to be added to this model's output (only
   *  passed to models whose fits_residuals() is true). */
  virtual void fit(const std::vector<Sample>& samples, const std::vector<float>& labels,
                   const std::vector<float>* offsets) = 0;
  /** Whether fit() honours offsets (its scores are on the base model's scale and add to them). */
  virtual bool fits_residuals() const { return false; }
  /** False for a model that scores without data ("analytic"): trained() from the start, samples ignored,
   *  nothing to save. */
  virtual bool learns() const { return true; }
  /** Scores of valid (non-empty) programs after a fit or load. */
  virtual std::vector<double> score(const std::vector<const ProgramFeatures*>& programs) = 0;
  /** The fitted state as bytes, and back (throw UserError on malformed bytes). */
  virtual std::string serialize() const = 0;
  virtual void deserialize(const std::string& bytes) = 0;

  LearnedParams params_;
  std::mt19937_64 rng_;
  /** The code feature version this model reads (kCodeFeatureVersion, or an earlier one when loaded from
   *  a file trained on it): the first code_feature_length_of(code_version_) features of each program. */
  int code_version_ = kCodeFeatureVersion;

 private:
  void maybe_fit();
  /** predict_features with this model's own fit (or base), whether or not it is on its fallback. */
  std::vector<double> own_predict(const std::vector<const ProgramFeatures*>& programs);
  /** The check of set_fallback on one workload's measured batch (before either model learns from it). */
  void check(const std::vector<Sample>& batch);
  /** Rows (and code features when the model reads them) of a candidate (workload and trace set), not cached. */
  ProgramFeatures extract(const Candidate& c) const;
  /** Whether p can be scored and learned from (rows, and code features when the model reads them). */
  bool usable(const ProgramFeatures& p) const { return !p.empty() && (!uses_code_features() || !p.code.empty()); }

  std::vector<Sample> samples_;
  size_t fitted_at_ = 0;  // samples_.size() at the last fit
  bool fitted_ = false;
  std::unordered_map<std::string, std::shared_ptr<const ProgramFeatures>> cache_;
  std::unique_ptr<LearnedModel> base_;
  std::unique_ptr<LearnedModel> fallback_;  // set_fallback
  std::deque<CheckCounts> checks_;          // the last kCheckBatches tests
  bool on_fallback_ = false;
  codegen::Target code_target_ = codegen::Target::host();
};

/** make_cost_model for the learned models ("xgb", "xgb-rank", "mlp"), with their feature-level API. */
std::unique_ptr<LearnedModel> make_learned_model(const std::string& name, const ModelParams& params = {});

/** Loads a saved learned model of whatever kind the file says (xgb, xgb-rank, mlp; with code features when
 *  the file was trained on them). Throws UserError with what to do for an unreadable, foreign, damaged or
 *  mismatched (feature version) file. */
std::unique_ptr<LearnedModel> load_cost_model(const std::string& path, const ModelParams& params = {});

/** A fresh model of the file's kind that starts from the saved model as its base (set_base): what
 *  `tessel tune --cost-model FILE` uses, so that the run keeps the pretrained knowledge while it learns
 *  the workload at hand. Errors as load_cost_model. */
std::unique_ptr<LearnedModel> make_pretrained_model(const std::string& path, const ModelParams& params = {});

/** The pretrained model shipped with tessel for x86-64 CPUs (costmodel/pretrained/, trained by
 *  scripts/train-costmodel): $TESSEL_PRETRAINED_MODEL when set, else the model of the CPU named `cpu`
 *  (LLVM's name, codegen::Target::cpu: cpu-x86_64-znver4.model) when one is shipped, else the one of the
 *  closest CPU shipped (similar_cpus), else the default cpu-x86_64.model; each looked for in share/tessel/
 *  next to the running binary's bin/ (installed), then in the source tree (build tree). Throws UserError naming the places it looked when there is none.
 *  `tessel tune --cost-model pretrained` (and auto) starts from the one of the run's target CPU. */
std::string pretrained_model_path(const std::string& cpu = "");
/** The CPUs (LLVM names) whose shipped models stand in for `cpu`'s when it has none, closest first: those
 *  of its vendor and vector width (znver1: znver3, znver2), then other vendors' of the same width (AVX2 or
 *  AVX-512). Empty for a CPU tessel does not know. */
std::vector<std::string> similar_cpus(const std::string& cpu);
/** The shipped pretrained xgb-rank model that reads code features (cpu-x86_64[-CPU].code.model, the
 *  refine stage of `tessel tune`; scripts/train-costmodel): $TESSEL_PRETRAINED_CODE_MODEL when set, else
 *  found like pretrained_model_path. Throws UserError naming the places it looked when there is none. */
std::string pretrained_code_model_path(const std::string& cpu = "");
/** The best measured records of the workloads the shipped models were trained on (cpu-x86_64[-CPU].records.jsonl,
 *  `tessel db export` of their best 4 per workload; scripts/train-costmodel): $TESSEL_PRETRAINED_RECORDS when
 *  set, else found like pretrained_model_path. `tessel tune --transfer-from pretrained` (and auto, with the
 *  shipped cost model) proposes them, carried into the task's space, first. Throws UserError like the others. */
std::string pretrained_records_path(const std::string& cpu = "");

/** Signature on the first line of every saved cost-model file; the format version follows it. */
constexpr const char* kModelFileSignature = "TESSEL-COSTMODEL";
constexpr int kModelFileFormat = 1;

}  // namespace tessel::costmodel
