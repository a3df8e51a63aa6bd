// "mlp": a small multi-layer perceptron in Eigen over the store rows, trained with a pairwise ranking loss.
//
// Guide:
//   Net         standardize (per-feature mean/std of the training rows) -> Linear(104, H) -> ReLU ->
//               Linear(H, H) -> ReLU -> Linear(H, 1); a program's score is the sum over its rows (pack-sum)
//   forward     all rows of a batch at once (columns), then per-program sums
//   fit         epochs (at most max_steps Adam steps in all) of shuffled pairs (i, j) of one workload with y_i > y_j;
//   loss log(1 + exp(S_j - S_i))
//               weighted by y_i - y_j; Adam on mini-batches of pairs; backprop through the row sums
//   payload     "MLP1", hidden size, then mean, std, W1, b1, W2, b2, w3, b3 as little-endian floats
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "tessel/costmodel/learned_model.h"
#include "tessel/support/error.h"

namespace tessel::costmodel {

namespace {

using Mat = Eigen::MatrixXf;
using Vec = Eigen::VectorXf;

struct Net {
  Vec mean, inv_std;
  Mat w1, w2;
  Vec b1, b2, w3;
  float b3 = 0;
};

/** Adam state for one parameter block. */
struct Adam {
  Mat m, v;
  void step(Mat& p, const Mat& g, float lr, int t) {
    if (m.size() == 0) m = Mat::Zero(p.rows(), p.cols()), v = Mat::Zero(p.rows(), p.cols());
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g.cwiseProduct(g);
    float c1 = 1 - std::pow(b1, float(t)), c2 = 1 - std::pow(b2, float(t));
    p.array() -= lr * (m.array() / c1) / ((v.array() / c2).sqrt() + eps);
  }
};

class MlpModel : public LearnedModel {
 public:
  explicit MlpModel(const ModelParams& p) : LearnedModel(p) {
    if (p.is_object()) {
      hidden_ = int(count_param(p, "hidden", hidden_));
      epochs_ = int(count_param(p, "epochs", epochs_));
      lr_ = number_param(p, "learning_rate", lr_);
      pairs_per_program_ = int(count_param(p, "pairs_per_program", pairs_per_program_));
      max_steps_ = int(count_param(p, "max_steps", max_steps_));
    }
    TESSEL_CHECK(hidden_ > 0 && epochs_ > 0 && lr_ > 0 && pairs_per_program_ > 0)
        << "cost model mlp: hidden, epochs, learning_rate and pairs_per_program must be positive";
  }
  std::string name() const override { return "mlp"; }

 protected:
  void fit(const std::vector<Sample>& samples, const std::vector<float>& labels, const std::vector<float>*) override {
    const int d = kFeatureLength;
    // Standardization from all training rows.
    Vec sum = Vec::Zero(d), sq = Vec::Zero(d);
    size_t n_rows = 0;
    for (auto& s : samples)
      for (auto& r : s.features->rows) {
        Eigen::Map<const Vec> x(r.data(), d);
        sum += x;
        sq += x.cwiseProduct(x);
        ++n_rows;
      }
    net_.mean = sum / float(n_rows);
    Vec var = sq / float(n_rows) - net_.mean.cwiseProduct(net_.mean);
    net_.inv_std = var.cwiseMax(1e-6f).cwiseSqrt().cwiseInverse();
    // He initialization from the model's seed.
    std::normal_distribution<float> nd(0, 1);
    auto init = [&](int rows, int cols) {
      Mat m(rows, cols);
      float s = std::sqrt(2.0f / float(cols));
      for (int i = 0; i < m.size(); ++i) m.data()[i] = nd(rng_) * s;
      return m;
    };
    net_.w1 = init(hidden_, d);
    net_.w2 = init(hidden_, hidden_);
    net_.w3 = init(1, hidden_).transpose();
    net_.b1 = Vec::Zero(hidden_);
    net_.b2 = Vec::Zero(hidden_);
    net_.b3 = 0;
    // Standardized rows of each program, as columns.
    std::vector<Mat> x(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) x[i] = standardize(samples[i].features->rows);
    // Programs grouped by workload: pairs are drawn within a group.
    std::unordered_map<std::string, std::vector<size_t>> groups;
    for (size_t i = 0; i < samples.size(); ++i) groups[samples[i].workload_key].push_back(i);
    std::vector<std::pair<size_t, size_t>> pairs;
    Adam a1, a2, a3, ab1, ab2;
    int t = 0;
    const size_t batch = 64;
    for (int epoch = 0; epoch < epochs_ && t < max_steps_; ++epoch) {
      pairs.clear();
      for (auto& [k, idx] : groups) {
        if (idx.size() < 2) continue;
        std::uniform_int_distribution<size_t> pick(0, idx.size() - 1);
        for (size_t i : idx)
          for (int r = 0; r < pairs_per_program_; ++r) {
            size_t j = idx[pick(rng_)];
            if (labels[i] == labels[j]) continue;
            pairs.emplace_back(labels[i] > labels[j] ? i : j, labels[i] > labels[j] ? j : i);
          }
      }
      std::shuffle(pairs.begin(), pairs.end(), rng_);
      for (size_t b = 0; b < pairs.size() && t < max_steps_; b += batch) {
        size_t e = std::min(pairs.size(), b + batch);
        train_batch(x, labels, pairs, b, e, ++t, a1, a2, a3, ab1, ab2);
      }
    }
  }

  std::vector<double> score(const std::vector<const ProgramFeatures*>& programs) override {
    size_t rows = 0;
    for (auto* p : programs) rows += p->rows.size();
    Mat x(kFeatureLength, Eigen::Index(rows));
    size_t c = 0;
    for (auto* p : programs)
      for (auto& r : p->rows) x.col(Eigen::Index(c++)) = Eigen::Map<const Vec>(r.data(), kFeatureLength);
    x = (x.colwise() - net_.mean).array().colwise() * net_.inv_std.array();
    Mat h1 = ((net_.w1 * x).colwise() + net_.b1).cwiseMax(0.0f);
    Mat h2 = ((net_.w2 * h1).colwise() + net_.b2).cwiseMax(0.0f);
    Eigen::RowVectorXf s = net_.w3.transpose() * h2;
    std::vector<double> out(programs.size(), 0.0);
    c = 0;
    for (size_t i = 0; i < programs.size(); ++i)
      for (size_t k = 0; k < programs[i]->rows.size(); ++k) out[i] += double(s(Eigen::Index(c++)) + net_.b3);
    return out;
  }

  std::string serialize() const override {
    std::string out = "MLP1";
    auto put = [&](const float* p, size_t n) { out.append(reinterpret_cast<const char*>(p), n * sizeof(float)); };
    int32_t h = hidden_;
    out.append(reinterpret_cast<const char*>(&h), sizeof h);
    put(net_.mean.data(), size_t(net_.mean.size()));
    put(net_.inv_std.data(), size_t(net_.inv_std.size()));
    put(net_.w1.data(), size_t(net_.w1.size()));
    put(net_.b1.data(), size_t(net_.b1.size()));
    put(net_.w2.data(), size_t(net_.w2.size()));
    put(net_.b2.data(), size_t(net_.b2.size()));
    put(net_.w3.data(), size_t(net_.w3.size()));
    put(&net_.b3, 1);
    return out;
  }

  void deserialize(const std::string& bytes) override {
    TESSEL_CHECK(bytes.size() >= 8 && bytes.compare(0, 4, "MLP1") == 0)
        << "the MLP in the file is not in the MLP1 layout; save the model again";
    int32_t h = 0;
    std::memcpy(&h, bytes.data() + 4, sizeof h);
    const size_t d = kFeatureLength;
    size_t want = 8 + sizeof(float) * (2 * d + size_t(h) * d + 2 * size_t(h) + size_t(h) * size_t(h) + size_t(h) + 1);
    TESSEL_CHECK(h > 0 && h <= 4096 && bytes.size() == want)
        << "the MLP in the file has " << bytes.size() << " bytes, its layout needs " << want
        << "; save the model again";
    const char* p = bytes.data() + 8;
    auto get = [&](float* dst, size_t n) {
      std::memcpy(dst, p, n * sizeof(float));
      p += n * sizeof(float);
    };
    Net n;
    n.mean.resize(Eigen::Index(d));
    n.inv_std.resize(Eigen::Index(d));
    n.w1.resize(h, Eigen::Index(d));
    n.b1.resize(h);
    n.w2.resize(h, h);
    n.b2.resize(h);
    n.w3.resize(h);
    get(n.mean.data(), d);
    get(n.inv_std.data(), d);
    get(n.w1.data(), size_t(n.w1.size()));
    get(n.b1.data(), size_t(h));
    get(n.w2.data(), size_t(n.w2.size()));
    get(n.b2.data(), size_t(h));
    get(n.w3.data(), size_t(h));
    get(&n.b3, 1);
    hidden_ = h;
    net_ = std::move(n);
  }

 private:
  Mat standardize(const std::vector<std::vector<float>>& rows) const {
    Mat x(kFeatureLength, Eigen::Index(rows.size()));
    for (size_t c = 0; c < rows.size(); ++c)
      x.col(Eigen::Index(c)) = Eigen::Map<const Vec>(rows[c].data(), kFeatureLength);
    return (x.colwise() - net_.mean).array().colwise() * net_.inv_std.array();
  }

  // One Adam step on pairs [b, e): forward all rows of the programs involved, pairwise logistic loss on the
  // program sums, backprop through the sums.
  void train_batch(const std::vector<Mat>& x, const std::vector<float>& labels,
                   const std::vector<std::pair<size_t, size_t>>& pairs, size_t b, size_t e, int t, Adam& a1, Adam& a2,
                   Adam& a3, Adam& ab1, Adam& ab2) {
    std::unordered_map<size_t, size_t> slot;  // program -> index in the batch
    std::vector<size_t> progs;
    for (size_t k = b; k < e; ++k)
      for (size_t p : {pairs[k].first, pairs[k].second})
        if (slot.emplace(p, progs.size()).second) progs.push_back(p);
    std::vector<Eigen::Index> start(progs.size() + 1, 0);
    for (size_t i = 0; i < progs.size(); ++i) start[i + 1] = start[i] + x[progs[i]].cols();
    Mat xb(kFeatureLength, start.back());
    for (size_t i = 0; i < progs.size(); ++i) xb.middleCols(start[i], x[progs[i]].cols()) = x[progs[i]];
    Mat h1 = ((net_.w1 * xb).colwise() + net_.b1).cwiseMax(0.0f);
    Mat h2 = ((net_.w2 * h1).colwise() + net_.b2).cwiseMax(0.0f);
    Eigen::RowVectorXf s = net_.w3.transpose() * h2;
    std::vector<float> S(progs.size(), 0.0f), g(progs.size(), 0.0f);
    for (size_t i = 0; i < progs.size(); ++i) S[i] = s.segment(start[i], start[i + 1] - start[i]).sum();
    float scale = 1.0f / float(e - b);
    for (size_t k = b; k < e; ++k) {
      size_t i = slot[pairs[k].first], j = slot[pairs[k].second];
      float w = labels[pairs[k].first] - labels[pairs[k].second];
      float diff = S[i] - S[j];
      float d = -w / (1.0f + std::exp(diff)) * scale;  // d/dS_i of w * log(1 + exp(-diff))
      g[i] += d;
      g[j] -= d;
    }
    Eigen::RowVectorXf gr(start.back());
    for (size_t i = 0; i < progs.size(); ++i) gr.segment(start[i], start[i + 1] - start[i]).setConstant(g[i]);
    Mat dw3 = h2 * gr.transpose();
    Mat dh2 = (net_.w3 * gr).cwiseProduct((h2.array() > 0).matrix().cast<float>());
    Mat dw2 = dh2 * h1.transpose();
    Mat db2 = dh2.rowwise().sum();
    Mat dh1 = (net_.w2.transpose() * dh2).cwiseProduct((h1.array() > 0).matrix().cast<float>());
    Mat dw1 = dh1 * xb.transpose();
    Mat db1 = dh1.rowwise().sum();
    a1.step(net_.w1, dw1, float(lr_), t);
    a2.step(net_.w2, dw2, float(lr_), t);
    Mat w3 = net_.w3;
    a3.step(w3, dw3, float(lr_), t);
    net_.w3 = w3;
    Mat b1m = net_.b1, b2m = net_.b2;
    ab1.step(b1m, db1, float(lr_), t);
    ab2.step(b2m, db2, float(lr_), t);
    net_.b1 = b1m;
    net_.b2 = b2m;
  }

  Net net_;
  int hidden_ = 64;
  int epochs_ = 40;
  double lr_ = 2e-3;
  int pairs_per_program_ = 8;
  int max_steps_ = 1000;  // Adam steps per fit at most (bounds the fit time as the data grows)
};

}  // namespace

std::unique_ptr<LearnedModel> make_mlp_model(const ModelParams& params) { return std::make_unique<MlpModel>(params); }

}  // namespace tessel::costmodel
