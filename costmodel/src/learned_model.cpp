// LearnedModel: feature cache, samples and labels, adaptive retraining, the saved-file envelope.
//
// File format (docs/costmodel.md): line 1 "TESSEL-COSTMODEL", line 2 a JSON header
// {"format":1,"model":NAME,"feature_version":V,"feature_length":N,"payload_bytes":B,"checksum":HEX},
// then B bytes of the model's own payload (serialize()). Everything is checked before deserialize runs.
#include "tessel/costmodel/learned_model.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "tessel/support/error.h"
#include "tessel/support/log.h"

namespace tessel::costmodel {

namespace {
constexpr const char* kPretrainedStem = "cpu-x86_64";  // cpu-x86_64[-CPU].model, cpu-x86_64[-CPU].code.model

// params, with "code_features": true when the model must read code features (a saved model trained on
// them, or the base a run's correction is fitted on): the file, not the caller, says what it reads.
ModelParams reading_code(const ModelParams& params, bool code) {
  ModelParams p = params.is_object() ? params : ModelParams::object();
  if (code) p["code_features"] = true;
  return p;
}

std::string fnv1a64(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

LearnedParams LearnedParams::from_json(const ModelParams& p) {
  LearnedParams r;
  if (!p.is_object()) return r;
  r.seed = count_param(p, "seed", r.seed);
  r.min_samples = count_param(p, "min_samples", r.min_samples);
  r.retrain_ratio = number_param(p, "retrain_ratio", r.retrain_ratio);
  r.retrain_samples = count_param(p, "retrain_samples", r.retrain_samples);
  r.nthread = int(count_param(p, "nthread", size_t(r.nthread)));
  TESSEL_CHECK(r.retrain_ratio >= 0) << "cost model param retrain_ratio must be >= 0, got " << r.retrain_ratio;
  if (r.nthread == 0) r.nthread = std::max(1u, std::thread::hardware_concurrency());
  return r;
}

LearnedModel::LearnedModel(const ModelParams& params) : params_(LearnedParams::from_json(params)), rng_(params_.seed) {}

namespace {
std::string cache_key(const Candidate& c) {
  std::string key = c.workload->key;
  for (auto& st : *c.trace) key += '\n' + schedule::step_to_string(st);
  return key;
}
}  // namespace

ProgramFeatures LearnedModel::extract(const Candidate& c) const {
  ProgramFeatures f;
  f.rows = extract_features(*c.workload, *c.trace);
  if (!f.rows.empty() && uses_code_features()) f.code = code_features(*c.workload, *c.trace, code_target_);
  return f;
}

std::shared_ptr<const ProgramFeatures> LearnedModel::features_of(const Candidate& c) {
  return features_of(std::vector<Candidate>{c})[0];
}

std::vector<std::shared_ptr<const ProgramFeatures>> LearnedModel::features_of(const std::vector<Candidate>& cs) {
  std::vector<std::shared_ptr<const ProgramFeatures>> out(cs.size());
  std::vector<std::string> keys(cs.size());
  std::vector<size_t> todo;
  std::unordered_map<std::string, size_t> first;  // a candidate repeated in cs is extracted once
  for (size_t i = 0; i < cs.size(); ++i) {
    TESSEL_CHECK(cs[i].workload && cs[i].trace) << "cost model " << name() << ": a candidate without workload or trace";
    keys[i] = cache_key(cs[i]);
    auto it = cache_.find(keys[i]);
    if (it != cache_.end()) out[i] = it->second;
    else if (first.emplace(keys[i], i).second) todo.push_back(i);
  }
  std::vector<ProgramFeatures> got(todo.size());
  // Code features cost a compile each: spread them over the cores (each compile has its own LLVM context).
  size_t threads = uses_code_features() ? std::min<size_t>(todo.size(), std::max(1u, std::thread::hardware_concurrency())) : 1;
  if (threads <= 1) {
    for (size_t k = 0; k < todo.size(); ++k) got[k] = extract(cs[todo[k]]);
  } else {
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (size_t k; (k = next++) < todo.size();) got[k] = extract(cs[todo[k]]);
      });
    for (auto& th : pool) th.join();
  }
  if (cache_.size() + todo.size() >= 100000) cache_.clear();  // bounded, as TVM's feature cache
  for (size_t k = 0; k < todo.size(); ++k) {
    auto f = std::make_shared<const ProgramFeatures>(std::move(got[k]));
    out[todo[k]] = f;
    cache_[keys[todo[k]]] = f;
  }
  for (size_t i = 0; i < cs.size(); ++i)
    if (!out[i]) out[i] = out[first.at(keys[i])];
  return out;
}

std::vector<double> LearnedModel::predict(const std::vector<Candidate>& candidates) {
  std::vector<std::shared_ptr<const ProgramFeatures>> keep = features_of(candidates);
  std::vector<const ProgramFeatures*> progs;
  for (auto& f : keep) progs.push_back(f.get());
  return predict_features(progs);
}

std::vector<double> LearnedModel::predict_features(const std::vector<const ProgramFeatures*>& programs) {
  return on_fallback_ ? fallback_->predict_features(programs) : own_predict(programs);
}

std::vector<double> LearnedModel::own_predict(const std::vector<const ProgramFeatures*>& programs) {
  std::vector<double> out(programs.size(), kInvalidScore);
  std::vector<const ProgramFeatures*> valid;
  std::vector<size_t> where;
  for (size_t i = 0; i < programs.size(); ++i)
    if (programs[i] && usable(*programs[i])) valid.push_back(programs[i]), where.push_back(i);
  if (valid.empty()) return out;
  if (!fitted_ && base_) return base_->predict_features(programs);
  if (!fitted_ && learns()) {  // nothing learned: random scores, as Ansor before its warm-up samples
    std::uniform_real_distribution<double> u(0, 1);
    for (size_t i : where) out[i] = u(rng_);
    return out;
  }
  std::vector<double> s = score(valid);
  if (base_ && fits_residuals()) {
    std::vector<double> b = base_->predict_features(valid);
    for (size_t k = 0; k < s.size(); ++k) s[k] += b[k];
  }
  for (size_t k = 0; k < where.size(); ++k) out[where[k]] = s[k];
  return out;
}

void LearnedModel::update(const std::vector<Candidate>& candidates, const std::vector<double>& throughput) {
  TESSEL_CHECK(candidates.size() == throughput.size()) << "cost model " << name() << ": " << candidates.size()
                                                       << " candidates but " << throughput.size() << " throughputs";
  if (!learns()) return;  // no compile for nothing
  std::vector<Sample> s;
  auto fs = features_of(candidates);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!usable(*fs[i])) continue;  // invalid schedule: nothing to learn from its features
    s.push_back({fs[i], candidates[i].workload->key, std::max(0.0, throughput[i])});
  }
  update_samples(s);
}

void LearnedModel::update_samples(const std::vector<Sample>& samples) {
  if (!learns()) return;
  std::vector<Sample> batch;
  for (auto& s : samples)
    if (s.features && usable(*s.features)) batch.push_back(s);
  if (fallback_) {
    check(batch);
    fallback_->update_samples(batch);
  }
  samples_.insert(samples_.end(), batch.begin(), batch.end());
  maybe_fit();
}

void LearnedModel::set_fallback(std::unique_ptr<LearnedModel> fallback) {
  TESSEL_CHECK(base_) << "cost model " << name() << ": a fallback checks a base model, and this one has none";
  TESSEL_CHECK(fallback && fallback->uses_code_features() == uses_code_features())
      << "cost model " << name() << ": the fallback must " << (uses_code_features() ? "" : "not ")
      << "read code features, as this model does" << (uses_code_features() ? "" : " not");
  fallback->set_code_target(code_target_);
  fallback_ = std::move(fallback);
  checks_.clear();
  on_fallback_ = false;
}

LearnedModel::CheckCounts LearnedModel::check_counts() const {
  CheckCounts sum;
  for (auto& c : checks_) sum.own += c.own, sum.fallback += c.fallback, sum.pairs += c.pairs;
  return sum;
}

void LearnedModel::check(const std::vector<Sample>& batch) {
  if (!fallback_->trained()) return;  // random scores: no test
  std::unordered_map<std::string, std::vector<size_t>> by_workload;  // labels compare within a workload
  for (size_t i = 0; i < batch.size(); ++i) by_workload[batch[i].workload_key].push_back(i);
  for (auto& [key, idx] : by_workload) {
    if (idx.size() < 2 || idx.size() > 256) continue;  // a large import (transferred records) is not a batch
    std::vector<const ProgramFeatures*> progs;
    std::vector<double> truth;
    for (size_t i : idx) progs.push_back(batch[i].features.get()), truth.push_back(batch[i].throughput);
    PairAgreement own = pair_agreement(own_predict(progs), truth);
    if (own.pairs == 0) continue;
    PairAgreement fb = pair_agreement(fallback_->predict_features(progs), truth);
    checks_.push_back({own.agree, fb.agree, double(own.pairs)});
    if (checks_.size() > kCheckBatches) checks_.pop_front();
  }
  CheckCounts c = check_counts();
  double lead = c.pairs > 0 ? (c.fallback - c.own) / c.pairs : 0.0;  // the fallback's lead in accuracy
  bool was = on_fallback_;
  if (c.pairs >= kCheckPairs && lead > kCheckMargin) on_fallback_ = true;
  if (c.pairs >= kCheckPairs && lead < -kCheckMargin) on_fallback_ = false;
  TESSEL_LOG(was != on_fallback_ ? 1 : 2)
      << "cost model " << name() << (uses_code_features() ? " (code features)" : "") << " check: it ordered "
      << c.own << ", its cold fallback " << c.fallback << " of the last " << c.pairs << " measured pairs right"
      << (on_fallback_ ? "; the fallback predicts" : "") << "\n";
}

void LearnedModel::maybe_fit() {
  size_t n = samples_.size();
  if (n < params_.min_samples || n == fitted_at_) return;
  size_t grown = n - fitted_at_;
  bool enough = fitted_at_ == 0 || grown >= params_.retrain_samples ||
                double(grown) >= params_.retrain_ratio * double(fitted_at_);
  if (enough) fit_now();
}

void LearnedModel::fit_now() {
  TESSEL_CHECK(!samples_.empty()) << "cost model " << name() << ": no samples to fit";
  std::unordered_map<std::string, double> best;
  for (auto& s : samples_) best[s.workload_key] = std::max(best[s.workload_key], s.throughput);
  std::vector<float> labels;
  for (auto& s : samples_) {
    double b = best[s.workload_key];
    labels.push_back(b > 0 ? float(s.throughput / b) : 0.0f);
  }
  std::vector<float> offsets;
  if (base_ && fits_residuals()) {
    std::vector<const ProgramFeatures*> progs;
    for (auto& s : samples_) progs.push_back(s.features.get());
    for (double b : base_->predict_features(progs)) offsets.push_back(float(b));
  }
  fit(samples_, labels, offsets.empty() ? nullptr : &offsets);
  fitted_at_ = samples_.size();
  fitted_ = true;
}

void LearnedModel::set_base(std::unique_ptr<LearnedModel> base) {
  TESSEL_CHECK(base && base->trained()) << "cost model " << name() << ": a base model must be trained";
  TESSEL_CHECK(base->uses_code_features() == uses_code_features())
      << "cost model " << name() << (uses_code_features() ? " reads" : " does not read")
      << " code features and cannot start from a base that " << (uses_code_features() ? "does not" : "does");
  TESSEL_CHECK(base->name() == name() || base->name() == "analytic")  // analytic: log2 of a roofline
      << "cost model " << name() << " cannot start from a '" << base->name() << "' model (its scores are on "
      << "another scale); start a '" << base->name() << "' model from it, or train a '" << name() << "' base";
  base_ = std::move(base);
}

void LearnedModel::save(const std::string& path) const {
  TESSEL_CHECK(learns()) << "cost model " << name() << " learns nothing (it scores from the compiled code alone): "
                         << "nothing to save to " << path;
  TESSEL_CHECK(!base_) << "cost model " << name() << " was started from a pretrained model and is not saved (its "
                       << "state is a correction of that model); train a model offline with tessel costmodel train";
  TESSEL_CHECK(fitted_) << "cost model " << name() << " is not trained yet (it needs " << params_.min_samples
                        << " measured samples, has " << samples_.size() << "): nothing to save to " << path;
  std::string payload = serialize();
  nlohmann::json h = {{"format", kModelFileFormat},
                      {"model", name()},
                      {"feature_version", kFeatureVersion},
                      {"feature_length", int(kFeatureLength)},
                      {"payload_bytes", payload.size()},
                      {"checksum", fnv1a64(payload)},
                      {"samples", fitted_at_}};
  if (uses_code_features()) {
    h["code_feature_version"] = code_version_;
    h["code_feature_length"] = code_feature_length_of(code_version_);
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    TESSEL_CHECK(f.good()) << "cannot write cost model file " << tmp;
    f << kModelFileSignature << '\n' << h.dump() << '\n';
    f.write(payload.data(), std::streamsize(payload.size()));
    TESSEL_CHECK(f.good()) << "cannot write cost model file " << tmp << " (disk full?)";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  TESSEL_CHECK(!ec) << "cannot move " << tmp << " to " << path << ": " << ec.message();
}

void LearnedModel::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  TESSEL_CHECK(f.good()) << "cannot open cost model file " << path;
  std::string sig, header;
  std::getline(f, sig);
  TESSEL_CHECK(sig == kModelFileSignature) << path << " is not a tessel cost model file (its first line is not '"
                                           << kModelFileSignature << "'); pass a file written by CostModel::save";
  std::getline(f, header);
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(header);
  } catch (const std::exception& e) {
    TESSEL_CHECK(false) << path << ": corrupt cost model header (" << e.what() << "); save the model again";
  }
  TESSEL_CHECK(h.is_object() && h.contains("format") && h.contains("model") && h.contains("feature_version") &&
               h.contains("payload_bytes") && h.contains("checksum"))
      << path << ": corrupt cost model header (fields missing); save the model again";
  int format = h["format"].get<int>();
  TESSEL_CHECK(format == kModelFileFormat)
      << path << ": cost model file format " << format << ", this tessel reads format " << kModelFileFormat
      << "; save the model again with this version";
  std::string kind = h["model"].get<std::string>();
  TESSEL_CHECK(kind == name()) << path << " holds a '" << kind << "' model, not '" << name()
                               << "'; load it with the model kind '" << kind << "'";
  int fv = h["feature_version"].get<int>();
  TESSEL_CHECK(fv == kFeatureVersion && h.value("feature_length", -1) == kFeatureLength)
      << path << " was trained on feature version " << fv << " (length " << h.value("feature_length", -1)
      << "), this tessel extracts version " << kFeatureVersion << " (length " << int(kFeatureLength)
      << "); retrain the model on measured records and save it again";
  bool file_code = h.contains("code_feature_version");
  TESSEL_CHECK(file_code == uses_code_features())
      << path << (file_code ? " was trained with" : " was trained without") << " code features and this "
      << name() << " model " << (uses_code_features() ? "reads" : "does not read")
      << " them; load it with load_cost_model (tessel costmodel eval, tessel tune --cost-model FILE)";
  if (file_code) {
    // An earlier version is a prefix of this one: the model reads the first features it was trained on.
    int cv = h["code_feature_version"].get<int>(), cl = h.value("code_feature_length", -1);
    TESSEL_CHECK(cv >= 1 && cv <= kCodeFeatureVersion && cl == code_feature_length_of(cv))
        << path << " was trained on code feature version " << cv << " (length " << cl << "), this tessel extracts version "
        << kCodeFeatureVersion << " (length " << int(kCodeFeatureLength) << ") and reads versions 1 to "
        << kCodeFeatureVersion << "; retrain the model on measured records and save it again";
    code_version_ = cv;
  }
  size_t n = h["payload_bytes"].get<size_t>();
  std::string payload(n, '\0');
  f.read(payload.data(), std::streamsize(n));
  TESSEL_CHECK(size_t(f.gcount()) == n) << path << ": truncated cost model file (" << f.gcount() << " of " << n
                                        << " payload bytes); save the model again";
  TESSEL_CHECK(fnv1a64(payload) == h["checksum"].get<std::string>())
      << path << ": corrupt cost model file (checksum mismatch); save the model again";
  deserialize(payload);
  fitted_ = true;
  fitted_at_ = samples_.size();
}

std::unique_ptr<LearnedModel> load_cost_model(const std::string& path, const ModelParams& params) {
  std::ifstream in(path);
  TESSEL_CHECK(bool(in)) << "cannot read the cost-model file " << path;
  std::string sig, header;
  std::getline(in, sig);
  std::getline(in, header);
  TESSEL_CHECK(sig.rfind(kModelFileSignature, 0) == 0)
      << path << " is not a tessel cost-model file (train one with tessel costmodel train)";
  std::string kind;
  bool code = false;
  try {
    auto h = nlohmann::json::parse(header);
    kind = h.at("model").get<std::string>();
    code = h.contains("code_feature_version");
  } catch (const std::exception&) {
    TESSEL_CHECK(false) << path << ": damaged cost-model header; train the model again";
  }
  auto m = make_learned_model(kind, reading_code(params, code));
  m->load(path);
  return m;
}

namespace {
// CPUs whose kernels look alike to a cost model: groups of one vendor and vector width, closest first.
// A CPU without a shipped model of its own takes one of its group, else one of another group of the same
// vector width (an AVX2 machine's timings rank AVX2 code; an AVX-512 model has learned 16-lane loops).
struct CpuKin {
  const char* width;
  std::vector<std::string> cpus;
};
const std::vector<CpuKin>& cpu_kin() {
  static const std::vector<CpuKin> kin = {
      {"avx2", {"znver3", "znver2", "znver1"}},
      {"avx2", {"alderlake", "raptorlake", "meteorlake", "arrowlake", "skylake", "broadwell", "haswell"}},
      {"avx512", {"znver4"}},  // znver5 is not here: the default model is a Zen 5 collection
      {"avx512", {"sapphirerapids", "emeraldrapids", "graniterapids", "icelake-server", "icelake-client", "tigerlake",
                  "rocketlake", "cooperlake", "cascadelake", "cannonlake", "skylake-avx512"}},
  };
  return kin;
}
}  // namespace

std::vector<std::string> similar_cpus(const std::string& cpu) {
  const CpuKin* own = nullptr;
  for (auto& k : cpu_kin())
    for (auto& c : k.cpus)
      if (c == cpu) own = &k;
  std::vector<std::string> out;
  if (!own) return out;
  for (auto& c : own->cpus)
    if (c != cpu) out.push_back(c);
  for (auto& k : cpu_kin())
    if (&k != own && std::string(k.width) == own->width) out.insert(out.end(), k.cpus.begin(), k.cpus.end());
  return out;
}

namespace {
// $env when set (it must be a file), else the model of this CPU (cpu-x86_64-CPU.SUFFIX), else the one of the
// closest CPU shipped (similar_cpus), else the default one (cpu-x86_64.SUFFIX); each first in share/tessel/
// next to the running binary's bin/, then in the source tree.
std::string find_pretrained(const std::string& cpu, const char* suffix, const char* env_name) {
  std::vector<std::string> tried;
  std::error_code ec;
  auto usable = [&](const std::filesystem::path& p) {
    tried.push_back(p.string());
    return std::filesystem::is_regular_file(p, ec);
  };
  if (const char* env = std::getenv(env_name)) {
    TESSEL_CHECK(usable(env)) << env_name << "=" << env << " is not a file";
    return env;
  }
  std::vector<std::filesystem::path> dirs;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "tessel");
  dirs.push_back(TESSEL_PRETRAINED_SOURCE_DIR);
  std::vector<std::string> files;
  if (!cpu.empty() && cpu != "generic") {
    files.push_back(std::string(kPretrainedStem) + "-" + cpu + suffix);
    for (auto& kin : similar_cpus(cpu)) files.push_back(std::string(kPretrainedStem) + "-" + kin + suffix);
  }
  files.push_back(std::string(kPretrainedStem) + suffix);
  for (auto& file : files)
    for (auto& dir : dirs)
      if (usable(dir / file)) return (dir / file).string();
  std::string where;
  for (auto& t : tried) where += "\n  " + t;
  TESSEL_CHECK(false) << "no pretrained cost-model file " << files.back() << " found; looked at:" << where << "\nset "
                      << env_name << "=FILE or make one with scripts/train-costmodel";
  return {};
}
}  // namespace

std::string pretrained_model_path(const std::string& cpu) {
  return find_pretrained(cpu, ".model", "TESSEL_PRETRAINED_MODEL");
}

std::string pretrained_code_model_path(const std::string& cpu) {
  return find_pretrained(cpu, ".code.model", "TESSEL_PRETRAINED_CODE_MODEL");
}

std::string pretrained_records_path(const std::string& cpu) {
  return find_pretrained(cpu, ".records.jsonl", "TESSEL_PRETRAINED_RECORDS");
}

std::unique_ptr<LearnedModel> make_pretrained_model(const std::string& path, const ModelParams& params) {
  auto base = load_cost_model(path, params);
  auto m = make_learned_model(base->name(), reading_code(params, base->uses_code_features()));
  m->set_base(std::move(base));
  return m;
}

}  // namespace tessel::costmodel
