// The XGBoost models (the only file that includes xgboost/c_api.h).
//
// Guide:
//   XgbBase       booster lifetime, common parameters (tree_method=hist, nthread), in-place prediction of
//                 row-major float rows, payload = the booster as UBJSON (XGBoosterSaveModelToBuffer)
//   XgbPackSum    "xgb": one row per store; a program's score is the sum of its rows' outputs. Trained with
//                 Ansor's pack-sum squared error as a custom objective: every round predicts the rows'
//                 margins, sums them per program and boosts with grad = w * (sum - y), hess = w for each row
//                 of the program (w = max(y, 0.05): good programs weigh more, as Ansor weights by y).
//   XgbRank       "xgb-rank": one row per program (the sum of its store rows, then the code features of
//                 code_features.h with "code_features": true), rank:pairwise with one query
//                 group per workload; labels are normalized throughput. Fine-tunes on top of a pretrained
//                 xgb-rank base through base_margin (the base's scores), as XgbPackSum through its offsets.
#include <xgboost/c_api.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "tessel/costmodel/learned_model.h"
#include "tessel/support/error.h"

namespace tessel::costmodel {

namespace {

// Never produced by the features (they are >= 0): XGBoost sees no missing values.
constexpr float kMissing = -3.0e38f;

void xgb_check(int rc, const char* what) {
  TESSEL_CHECK(rc == 0) << "XGBoost " << what << " failed: " << XGBGetLastError();
}

/** Owns a DMatrix. */
struct DMatrix {
  DMatrixHandle h = nullptr;
  DMatrix(const std::vector<float>& data, size_t rows, size_t width) {
    xgb_check(XGDMatrixCreateFromMat(data.data(), rows, width, kMissing, &h), "XGDMatrixCreateFromMat");
  }
  ~DMatrix() {
    if (h) XGDMatrixFree(h);
  }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  void set_float(const char* field, const std::vector<float>& v) {
    xgb_check(XGDMatrixSetFloatInfo(h, field, v.data(), v.size()), field);
  }
};

class XgbBase : public LearnedModel {
 public:
  explicit XgbBase(const ModelParams& p) : LearnedModel(p) {
    if (p.is_object()) {
      num_rounds_ = int(count_param(p, "num_rounds", num_rounds_));
      max_depth_ = int(count_param(p, "max_depth", max_depth_));
      eta_ = number_param(p, "eta", eta_);
      // More of XGBoost's tree parameters, passed through when given (offline training, cv): fractions in
      // (0, 1], the others >= 0.
      for (const char* k : {"subsample", "colsample_bytree", "min_child_weight", "lambda", "gamma"}) {
        if (!p.contains(k)) continue;
        double v = number_param(p, k, 0);
        bool fraction = std::string(k) == "subsample" || std::string(k) == "colsample_bytree";
        TESSEL_CHECK(fraction ? v > 0 && v <= 1 : v >= 0)
            << "cost model xgb: " << k << " must be " << (fraction ? "in (0, 1]" : ">= 0") << ", not " << v;
        tree_params_.emplace_back(k, std::to_string(v));
      }
    }
    TESSEL_CHECK(num_rounds_ > 0 && max_depth_ > 0 && eta_ > 0)
        << "cost model "
        << "xgb: num_rounds, max_depth and eta must be positive";
  }
  ~XgbBase() override { reset(); }

 protected:
  void reset() {
    if (booster_) XGBoosterFree(booster_);
    booster_ = nullptr;
  }
  /** A fresh booster on dtrain (may be null for load) with the parameters every model shares. */
  void create(DMatrixHandle dtrain) {
    reset();
    xgb_check(XGBoosterCreate(dtrain ? &dtrain : nullptr, dtrain ? 1 : 0, &booster_), "XGBoosterCreate");
    set("tree_method", "hist");
    set("nthread", std::to_string(params_.nthread));
    set("seed", std::to_string(params_.seed % 2147483647));
    set("max_depth", std::to_string(max_depth_));
    set("eta", std::to_string(eta_));
    for (auto& [k, v] : tree_params_) set(k.c_str(), v);
    set("verbosity", "0");
  }
  void set(const char* k, const std::string& v) { xgb_check(XGBoosterSetParam(booster_, k, v.c_str()), k); }
  /** A model's own default of a tree parameter, unless the params gave it (tree_params_). */
  void set_default(const char* k, const std::string& v) {
    for (auto& [name, given] : tree_params_)
      if (name == k) return;
    set(k, v);
  }

  /** Raw margins of rows (row-major, width floats each). */
  std::vector<float> predict_rows(const std::vector<float>& data, size_t rows, size_t width) const {
    if (rows == 0) return {};
    char iface[256];
    std::snprintf(iface, sizeof iface, R"({"data":[%llu,true],"shape":[%zu,%zu],"typestr":"<f4","version":3})",
                  static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(data.data())), rows, width);
    static const char* config =
        R"({"type":1,"training":false,"cache_id":0,"iteration_begin":0,"iteration_end":0,"strict_shape":false,"missing":-3.0e38})";
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* out = nullptr;
    xgb_check(XGBoosterPredictFromDense(booster_, iface, config, nullptr, &shape, &dim, &out), "prediction");
    return std::vector<float>(out, out + rows);
  }

  std::string serialize() const override {
    bst_ulong len = 0;
    const char* buf = nullptr;
    xgb_check(XGBoosterSaveModelToBuffer(booster_, R"({"format":"ubj"})", &len, &buf), "saving the booster");
    return std::string(buf, len);
  }
  void deserialize(const std::string& bytes) override {
    create(nullptr);
    int rc = XGBoosterLoadModelFromBuffer(booster_, bytes.data(), bytes.size());
    if (rc != 0) {
      std::string err = XGBGetLastError();
      reset();
      TESSEL_CHECK(false) << "the XGBoost model in the file cannot be read (" << err << "); save the model again";
    }
    set("nthread", std::to_string(params_.nthread));
  }

  BoosterHandle booster_ = nullptr;
  // Shallow trees, many small steps: on a few hundred samples deeper trees overfit (docs/costmodel.md).
  int num_rounds_ = 200;
  int max_depth_ = 4;
  double eta_ = 0.1;
  std::vector<std::pair<std::string, std::string>> tree_params_;  // subsample, colsample_bytree, ... when given
};

class XgbPackSum : public XgbBase {
 public:
  explicit XgbPackSum(const ModelParams& p) : XgbBase(p) {}
  std::string name() const override { return "xgb"; }

 protected:
  bool fits_residuals() const override { return true; }
  void fit(const std::vector<Sample>& samples, const std::vector<float>& labels,
           const std::vector<float>* offsets) override {
    std::vector<float> data;
    std::vector<uint32_t> program_of_row;
    for (size_t i = 0; i < samples.size(); ++i)
      for (auto& r : samples[i].features->rows) {
        data.insert(data.end(), r.begin(), r.end());
        program_of_row.push_back(uint32_t(i));
      }
    size_t rows = program_of_row.size();
    DMatrix d(data, rows, kFeatureLength);
    create(d.h);
    set("base_score", "0");
    set_default("min_child_weight", "0");
    set_default("gamma", "0.001");
    std::vector<float> weight(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) weight[i] = std::max(labels[i], 0.05f);
    std::vector<double> sum(samples.size());
    std::vector<float> grad(rows), hess(rows);
    for (int it = 0; it < num_rounds_; ++it) {
      bst_ulong len = 0;
      const float* pred = nullptr;
      xgb_check(XGBoosterPredict(booster_, d.h, 1, 0, 1, &len, &pred), "training prediction");
      for (size_t p = 0; p < sum.size(); ++p) sum[p] = offsets ? (*offsets)[p] : 0.0;
      for (size_t r = 0; r < rows; ++r) sum[program_of_row[r]] += pred[r];
      for (size_t r = 0; r < rows; ++r) {
        uint32_t p = program_of_row[r];
        grad[r] = float(weight[p] * (sum[p] - labels[p]));
        hess[r] = weight[p];
      }
      xgb_check(XGBoosterBoostOneIter(booster_, d.h, grad.data(), hess.data(), rows), "boosting");
    }
  }

  std::vector<double> score(const std::vector<const ProgramFeatures*>& programs) override {
    std::vector<float> data;
    for (auto* p : programs)
      for (auto& r : p->rows) data.insert(data.end(), r.begin(), r.end());
    std::vector<float> m = predict_rows(data, data.size() / kFeatureLength, kFeatureLength);
    std::vector<double> out(programs.size(), 0.0);
    size_t r = 0;
    for (size_t i = 0; i < programs.size(); ++i)
      for (size_t k = 0; k < programs[i]->rows.size(); ++k) out[i] += m[r++];
    return out;
  }
};

class XgbRank : public XgbBase {
 public:
  explicit XgbRank(const ModelParams& p) : XgbBase(p) {
    if (p.is_object()) code_ = p.value("code_features", false);
  }
  std::string name() const override { return "xgb-rank"; }
  bool uses_code_features() const override { return code_; }

 protected:
  // Fine-tuning from a pretrained xgb-rank base: the base's scores (pairwise-logistic margins of the same
  // objective) go in as XGBoost's base_margin, so this run's trees are boosted on base + own margins and
  // learn only how the run's workload orders differently from what the base predicts; predict_features
  // adds the base's scores back. The pretrained ranking is kept where the run's measurements agree with it.
  bool fits_residuals() const override { return true; }
  void fit(const std::vector<Sample>& samples, const std::vector<float>& labels,
           const std::vector<float>* offsets) override {
    // One query group per workload: rows ordered by workload, groups are the run lengths.
    std::map<std::string, std::vector<size_t>> by_workload;
    for (size_t i = 0; i < samples.size(); ++i) by_workload[samples[i].workload_key].push_back(i);
    std::vector<float> data, y, margin;
    std::vector<unsigned> groups;
    for (auto& [key, idx] : by_workload) {
      groups.push_back(unsigned(idx.size()));
      for (size_t i : idx) {
        std::vector<float> s = program_row(*samples[i].features);
        data.insert(data.end(), s.begin(), s.end());
        y.push_back(labels[i]);
        if (offsets) margin.push_back((*offsets)[i]);
      }
    }
    DMatrix d(data, y.size(), width());
    d.set_float("label", y);
    if (offsets) d.set_float("base_margin", margin);
    xgb_check(XGDMatrixSetUIntInfo(d.h, "group", groups.data(), groups.size()), "group");
    create(d.h);
    set("objective", "rank:pairwise");
    set_default("min_child_weight", "1");
    for (int it = 0; it < num_rounds_; ++it) xgb_check(XGBoosterUpdateOneIter(booster_, it, d.h), "boosting");
  }

  std::vector<double> score(const std::vector<const ProgramFeatures*>& programs) override {
    std::vector<float> data;
    data.reserve(programs.size() * width());
    for (auto* p : programs) {
      std::vector<float> s = program_row(*p);
      data.insert(data.end(), s.begin(), s.end());
    }
    std::vector<float> m = predict_rows(data, programs.size(), width());
    return std::vector<double>(m.begin(), m.end());
  }

 private:
  size_t width() const { return kFeatureLength + (code_ ? size_t(code_feature_length_of(code_version_)) : 0); }
  /** The sum of the program's store rows, then its code features when the model reads them. */
  std::vector<float> program_row(const ProgramFeatures& p) const {
    std::vector<float> s = sum_features(p.rows);
    if (code_) {
      TESSEL_CHECK(p.code.size() == size_t(kCodeFeatureLength)) << "cost model xgb-rank: a program without code features";
      s.insert(s.end(), p.code.begin(), p.code.begin() + code_feature_length_of(code_version_));
    }
    return s;
  }
  bool code_ = false;
};

}  // namespace

std::unique_ptr<LearnedModel> make_xgb_model(const ModelParams& params) { return std::make_unique<XgbPackSum>(params); }
std::unique_ptr<LearnedModel> make_xgb_rank_model(const ModelParams& params) {
  return std::make_unique<XgbRank>(params);
}

}  // namespace tessel::costmodel
