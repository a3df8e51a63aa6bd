// The tuning report (see report.h, docs/report.md).
//
// Guide: report_data() reads the database once and computes everything the page shows: one section per
// (workload, target) with its chart series (section_data), then one estimated-latency chart per target
// that has several workloads (network_data). render_report_html() writes the page from that JSON: text
// is escaped here (html_escape), chart data goes into a <script type="application/json"> block that the
// page script (kPageScript) turns into Chart.js charts; after drawing it sets window.tesselChartsDrawn
// and <body data-charts-drawn> to the number of canvases that received ink, which the tests check.
#include "tessel/records/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "tessel/schedule/step.h"
#include "tessel/support/error.h"
#include "tessel/support/version.h"
#include "tessel/workload/workload.h"

namespace tessel::records {

using nlohmann::json;

namespace {

// A record counts as a search trial unless it re-times an earlier one (the tuner's final remeasure).
bool is_remeasure(const TuningRecord& r) {
  return r.run_settings.is_object() && r.run_settings.value("remeasure", false) == true;
}

std::string fmt(double v, int precision = 3) {
  if (!std::isfinite(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", precision, v);
  return b;
}

// Seconds, milliseconds or microseconds, whichever reads best.
std::string fmt_latency(double s) {
  if (!(s > 0) || !std::isfinite(s)) return "-";
  if (s < 1e-3) return fmt(s * 1e6, 2) + " us";
  if (s < 1) return fmt(s * 1e3, 3) + " ms";
  return fmt(s, 3) + " s";
}

std::string fmt_bytes(int64_t b) {
  if (b < 1024) return std::to_string(b) + " B";
  if (b < 1024 * 1024) return fmt(double(b) / 1024, 1) + " KiB";
  return fmt(double(b) / (1024.0 * 1024.0), 1) + " MiB";
}

// "matmul M=64,N=64,K=64": the name and the spec's first parameters, to tell workloads apart.
std::string short_label(const std::string& name, const std::string& spec) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos) return name;
  std::string params = spec.substr(colon + 1);
  if (params.size() > 28) params = params.substr(0, 25) + "...";
  return name + " " + params;
}

struct Metric {
  double flop = 0;  // 0: unknown, the charts show latency instead
  // The charted value of a median run time: GFLOP/s (higher is better) or milliseconds (lower is better).
  double value(double median_s) const { return flop > 0 ? flop / median_s / 1e9 : median_s * 1e3; }
  bool better(double a, double b) const { return flop > 0 ? a > b : a < b; }
};

// One (workload, target) section: summary fields plus its three charts (appended to `charts`).
json section_data(const WorkloadInfo& wi, const std::string& target, std::vector<TuningRecord> recs,
                  const std::string& id, int64_t t0_us, Database& db, int top, json& charts) {
  json s = {{"id", id}, {"name", wi.name}, {"key", wi.key}, {"target", target}, {"records", recs.size()}};
  s["spec"] = wi.workload.is_object() ? wi.workload.value("spec", std::string()) : std::string();
  if (s["spec"].get<std::string>().empty() && wi.workload.is_object() && wi.workload.contains("te"))
    s["spec"] = "(.te program)";
  s["label"] = short_label(wi.name, s["spec"]);

  Metric m;
  try {
    m.flop = workload::from_json(wi.workload).flop_count();
    s["flop"] = m.flop;
  } catch (const std::exception& e) {
    s["flop_error"] = std::string("cannot rebuild the workload from its stored JSON: ") + e.what();
  }
  if (!(m.flop > 0)) m.flop = 0;
  s["metric"] = m.flop > 0 ? "gflops" : "latency_ms";

  // Chronological order: the search's trials as they happened.
  std::stable_sort(recs.begin(), recs.end(), [](const TuningRecord& a, const TuningRecord& b) {
    return a.timestamp_us != b.timestamp_us ? a.timestamp_us < b.timestamp_us : a.id < b.id;
  });
  json best_trials = json::array(), best_time = json::array(), each_trials = json::array(), each_time = json::array();
  std::vector<const TuningRecord*> trials;
  int64_t ok = 0, remeasured = 0;
  bool have = false;
  double best = 0;
  for (auto& r : recs) {
    if (r.ok()) ++ok;
    if (is_remeasure(r)) {
      ++remeasured;
      continue;
    }
    trials.push_back(&r);
    double n = double(trials.size()), t = double(r.timestamp_us - t0_us) / 1e6;
    if (!r.ok()) continue;
    double v = m.value(r.median_s());
    each_trials.push_back({n, v});
    each_time.push_back({t, v});
    if (!have || m.better(v, best)) {
      have = true;
      best = v;
      best_trials.push_back({n, v});
      best_time.push_back({t, v});
    }
  }
  // Close the step curves at the last trial so a late plateau shows.
  if (have && !trials.empty()) {
    double n = double(trials.size()), t = double(trials.back()->timestamp_us - t0_us) / 1e6;
    if (best_trials.back()[0].get<double>() != n) best_trials.push_back({n, best});
    if (best_time.back()[0].get<double>() != t) best_time.push_back({t, best});
  }
  s["ok"] = ok;
  s["trials"] = trials.size();
  s["remeasured"] = remeasured;

  // Error kinds per chunk of trials (about 25 chunks), in chronological order.
  size_t chunk = std::max<size_t>(1, (trials.size() + 24) / 25);
  json labels = json::array();
  std::map<std::string, json> series;
  std::map<std::string, std::pair<int64_t, std::string>> errors;  // kind -> count, an example message
  for (size_t i = 0; i < trials.size(); i += chunk) {
    size_t end = std::min(trials.size(), i + chunk);
    labels.push_back(end == i + 1 ? std::to_string(end) : std::to_string(i + 1) + "-" + std::to_string(end));
    std::map<std::string, int64_t> counts;
    for (size_t k = i; k < end; ++k) ++counts[error_kind_name(trials[k]->error_kind)];
    for (auto& [kind, c] : counts)
      if (!series.count(kind)) series[kind] = json::array();
    for (auto& [kind, arr] : series) {
      while (arr.size() + 1 < labels.size()) arr.push_back(0);
      arr.push_back(counts.count(kind) ? counts[kind] : 0);
    }
  }
  json kinds = json::array();
  for (auto k : all_error_kinds()) {
    std::string name = error_kind_name(k);
    auto it = series.find(name);
    if (it == series.end()) continue;
    while (it->second.size() < labels.size()) it->second.push_back(0);
    kinds.push_back({{"kind", name}, {"counts", it->second}});
  }
  for (auto& r : recs) {
    if (r.error_kind == MeasureErrorKind::kNone) continue;
    auto& e = errors[error_kind_name(r.error_kind)];
    if (e.first++ == 0) e.second = r.error_message.substr(0, 400);
  }
  json err = json::array();
  for (auto& [kind, e] : errors) err.push_back({{"kind", kind}, {"count", e.first}, {"example", e.second}});
  s["errors"] = err;

  std::string metric = s["metric"];
  charts.push_back(
      {{"id", id + "-trials"}, {"kind", "trials"}, {"metric", metric}, {"best", best_trials}, {"each", each_trials}});
  charts.push_back(
      {{"id", id + "-time"}, {"kind", "time"}, {"metric", metric}, {"best", best_time}, {"each", each_time}});
  charts.push_back({{"id", id + "-errors"}, {"kind", "errors"}, {"labels", labels}, {"series", kinds}});

  // The best record (lowest median, remeasures included, as `tessel db best`), its trace, the top few.
  RecordQuery q;
  q.workload_key = wi.key;
  q.target = target;
  q.only_ok = true;
  q.best_first = true;
  q.limit = std::max(1, top);
  json rows = json::array();
  std::vector<TuningRecord> best_recs = db.records(q);
  for (auto& r : best_recs) {
    json row = {
        {"id", r.id},
        {"median_s", r.median_s()},
        {"repeats", r.run_times_s.size()},
        {"timestamp", format_timestamp(r.timestamp_us)},
        {"run_id", r.run_id},
        {"remeasure", is_remeasure(r)},
        {"strategy", r.build_settings.is_object() ? r.build_settings.value("strategy", std::string()) : std::string()}};
    if (m.flop > 0) row["gflops"] = m.flop / r.median_s() / 1e9;
    rows.push_back(row);
  }
  s["top"] = rows;
  s["best"] = nullptr;
  if (!best_recs.empty()) {
    const TuningRecord& b = best_recs[0];
    s["best"] = rows[0];
    json steps = json::array();
    try {
      for (auto& st : schedule::trace_from_json(b.trace)) steps.push_back(schedule::step_to_string(st));
    } catch (const std::exception& e) {
      s["trace_error"] = e.what();
      s["trace_json"] = b.trace.dump(2);
    }
    s["trace_steps"] = steps;
  }
  return s;
}

// Estimated latency of the workloads of one target: sum of weight x best-so-far latency, from the
// moment every workload has a valid schedule.
json network_data(const std::string& target, const std::vector<std::pair<std::string, std::string>>& members,
                  const std::map<std::string, std::vector<TuningRecord>>& by_key,
                  const std::map<std::string, double>& weights, int64_t t0_us, const std::string& id, json& charts) {
  std::vector<const TuningRecord*> events;
  int64_t end_us = t0_us;  // the last trial of any member
  for (auto& [key, name] : members)
    for (auto& r : by_key.at(key)) {
      if (is_remeasure(r)) continue;
      end_us = std::max(end_us, r.timestamp_us);
      if (r.ok()) events.push_back(&r);
    }
  std::stable_sort(events.begin(), events.end(), [](const TuningRecord* a, const TuningRecord* b) {
    return a->timestamp_us != b->timestamp_us ? a->timestamp_us < b->timestamp_us : a->id < b->id;
  });
  std::map<std::string, double> best;
  json points = json::array();
  double last = -1, last_t = 0;
  for (auto* r : events) {
    auto it = best.find(r->workload_key);
    if (it != best.end() && it->second <= r->median_s()) continue;
    best[r->workload_key] = r->median_s();
    if (best.size() < members.size()) continue;
    double total = 0;
    for (auto& [k, v] : best) total += (weights.count(k) ? weights.at(k) : 1.0) * v;
    last_t = double(r->timestamp_us - t0_us) / 1e6;
    if (total != last) points.push_back({last_t, total * 1e3});
    last = total;
  }
  double end_t = double(end_us - t0_us) / 1e6;
  if (!points.empty() && end_t > last_t) points.push_back({end_t, last * 1e3});  // the plateau to the end
  json n = {{"id", id}, {"target", target}, {"workloads", members.size()}, {"complete", !points.empty()}};
  int64_t unrecorded = 0;  // weighted workloads (e.g. of --network) without records on this target
  for (auto& [key, w] : weights)
    if (std::none_of(members.begin(), members.end(), [&](auto& m) { return m.first == key; })) ++unrecorded;
  n["weighted_without_records"] = unrecorded;
  json rows = json::array();
  double total = 0;
  for (auto& [key, name] : members) {
    double w = weights.count(key) ? weights.at(key) : 1.0;
    auto it = best.find(key);
    json row = {{"key", key}, {"name", name}, {"weight", w}};
    if (it != best.end()) {
      row["best_s"] = it->second;
      total += w * it->second;
    }
    rows.push_back(row);
  }
  n["tasks"] = rows;
  if (!points.empty()) {
    n["estimated_latency_s"] = total;
    n["from_s"] = points[0][0];
    charts.push_back({{"id", id}, {"kind", "network"}, {"points", points}});
  }
  return n;
}

}  // namespace

std::map<std::string, double> weights_from_run_settings(const std::vector<json>& run_settings) {
  std::map<std::string, double> w;
  for (auto& s : run_settings) {
    if (!s.is_object() || !s.contains("tasks") || !s["tasks"].is_array()) continue;
    for (auto& t : s["tasks"]) {
      if (!t.is_object() || !t.contains("key") || !t["key"].is_string() || !t.contains("weight") ||
          !t["weight"].is_number())
        continue;
      w[t["key"].get<std::string>()] = t["weight"].get<double>();
    }
  }
  return w;
}

json report_data(Database& db, const ReportOptions& o) {
  DbStats st = db.stats();
  json d = {{"database", db.path()},
            {"title", o.title.empty() ? "tessel report: " + db.path() : o.title},
            {"generated", format_timestamp(now_us())},
            {"tessel_version", version()}};
  json by_kind = json::object();
  for (auto& [k, v] : st.records_by_error_kind) by_kind[k] = v;
  d["stats"] = {{"schema_version", st.schema_version},
                {"workloads", st.workloads},
                {"targets", st.targets},
                {"runs", st.runs},
                {"records", st.records},
                {"ok_records", st.ok_records},
                {"by_error_kind", by_kind},
                {"file_bytes", st.file_bytes}};

  std::map<std::string, double> weights = o.weights;
  std::string weights_source = o.weights_source;
  if (weights.empty()) {
    weights = weights_from_run_settings(o.run_settings);
    weights_source = weights.empty() ? "" : "the tuning runs' settings";
  }
  d["weights_source"] = weights_source;

  // All records, per workload key (one query per workload), and the earliest timestamp as time zero.
  std::vector<WorkloadInfo> infos = db.workloads();
  std::map<std::string, std::vector<TuningRecord>> by_key;
  int64_t t0 = 0;
  bool any = false;
  for (auto& wi : infos) {
    RecordQuery q;
    q.workload_key = wi.key;
    auto& v = by_key[wi.key] = db.records(q);
    for (auto& r : v) {
      if (!any || r.timestamp_us < t0) t0 = r.timestamp_us;
      any = true;
    }
  }
  d["t0"] = any ? format_timestamp(t0) : "";

  json sections = json::array(), charts = json::array();
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_target;  // target -> (key, name)
  for (auto& wi : infos) {
    std::map<std::string, std::vector<TuningRecord>> per_target;
    for (auto& r : by_key[wi.key]) per_target[r.target].push_back(r);
    for (auto& [target, recs] : per_target) {
      std::string id = "s" + std::to_string(sections.size());
      sections.push_back(section_data(wi, target, recs, id, t0, db, o.top, charts));
      by_target[target].push_back({wi.key, sections.back()["label"].get<std::string>()});
    }
  }
  json networks = json::array();
  for (auto& [target, members] : by_target) {
    if (members.size() < 2) continue;
    std::map<std::string, std::vector<TuningRecord>> of_target;
    for (auto& [key, name] : members)
      for (auto& r : by_key[key])
        if (r.target == target) of_target[key].push_back(r);
    networks.push_back(
        network_data(target, members, of_target, weights, t0, "n" + std::to_string(networks.size()), charts));
  }
  d["sections"] = sections;
  d["networks"] = networks;
  d["charts"] = charts;
  return d;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string read_chartjs(const std::string& path) {
  std::string p = path.empty() ? kDebianChartJsPath : path;
  std::ifstream in(p, std::ios::binary);
  if (path.empty()) {
    TESSEL_CHECK(bool(in)) << "Chart.js not found at " << p
                           << ": install Debian's libjs-chart.js (apt-get install libjs-chart.js, or run "
                              "scripts/setup), or give a Chart.js UMD build with --chartjs FILE";
  } else {
    TESSEL_CHECK(bool(in)) << "cannot read Chart.js from --chartjs " << p;
  }
  std::string s((std::istreambuf_iterator<char>(in)), {});
  TESSEL_CHECK(s.find("Chart") != std::string::npos && s.size() > 1000)
      << p << " does not look like Chart.js (expected the UMD build, e.g. " << kDebianChartJsPath << ")";
  return s;
}

namespace {

// Makes text safe inside <script>: a "</script" or "<!--" in it would end or confuse the element.
// Both only occur inside string or regular-expression literals, where "<\/" and "<\!" mean the same.
std::string script_safe(std::string s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && (s[i + 1] == '/' || s[i + 1] == '!')) {
      std::string next = s.substr(i + 1, 7);
      std::transform(next.begin(), next.end(), next.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      if (next.rfind("/script", 0) == 0 || next.rfind("!--", 0) == 0) {
        out += "<\\";
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// JSON for a <script type="application/json"> block: <, > and & only occur inside JSON strings, where
// their \u escapes mean the same, so the block can never be closed early.
std::string json_for_script(const json& j) {
  std::string s = j.dump(), out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

const char* kStyle = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; margin: 0 auto;
       max-width: 1180px; padding: 0 18px 40px; color: #1d2430; background: #fbfbfd; }
h1 { font-size: 22px; margin: 20px 0 4px; } h2 { font-size: 18px; margin: 0 0 4px; overflow-wrap: anywhere; } h3 { font-size: 14px; margin: 14px 0 6px; }
section { background: #fff; border: 1px solid #dde1e8; border-radius: 8px; padding: 14px 16px; margin: 18px 0; }
.meta { color: #5a6475; margin: 2px 0; } code, pre { font: 12.5px/1.4 "DejaVu Sans Mono", monospace; }
.key { word-break: break-all; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 12px; }
.chart { position: relative; height: 280px; border: 1px solid #eef0f4; border-radius: 6px; padding: 6px; }
pre { background: #f4f6f9; border-radius: 6px; padding: 8px 10px; overflow-x: auto; margin: 0; }
table { border-collapse: collapse; margin: 4px 0; } td, th { padding: 3px 10px; border-bottom: 1px solid #eef0f4; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #7a5b00; background: #fff8e1; border-radius: 6px; padding: 6px 10px; margin: 8px 0; }
.empty { font-size: 16px; padding: 30px; text-align: center; color: #5a6475; }
nav a { margin-right: 12px; }
)css";

// Builds the charts from the JSON block (chart kinds: trials, time, errors, network), then reports how
// many canvases received ink.
const char* kPageScript = R"js(
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tessel-report-data").textContent);
  var kindColors = { none: "#2e9d5b", invalid_schedule: "#8e6bd1", compile_error: "#d1495b",
    compile_timeout: "#f08a24", runtime_error: "#b8336a", run_timeout: "#e8c547", wrong_answer: "#5a6475",
    worker_lost: "#3d5a80", early_aborted: "#98c1d9", out_of_memory: "#6d2e46" };
  function points(a) { return a.map(function (p) { return { x: p[0], y: p[1] }; }); }
  function metricLabel(m) { return m === "gflops" ? "GFLOP/s" : "latency (ms)"; }
  function common(xTitle, yTitle) {
    return { animation: false, responsive: true, maintainAspectRatio: false, parsing: true,
      interaction: { mode: "nearest", intersect: false },
      plugins: { legend: { position: "bottom" } },
      scales: { x: { type: "linear", title: { display: true, text: xTitle } },
                y: { title: { display: true, text: yTitle } } } };
  }
  function curve(spec, xTitle) {
    return { type: "scatter", options: common(xTitle, metricLabel(spec.metric)),
      data: { datasets: [
        { label: "best so far", data: points(spec.best), showLine: true, stepped: true, borderWidth: 2,
          borderColor: "#1f6feb", backgroundColor: "#1f6feb", pointRadius: 2 },
        { label: "each valid trial", data: points(spec.each), showLine: false, pointRadius: 2,
          borderColor: "rgba(120,130,150,0.45)", backgroundColor: "rgba(120,130,150,0.45)" } ] } };
  }
  function config(spec) {
    if (spec.kind === "trials") return curve(spec, "trial");
    if (spec.kind === "time") return curve(spec, "elapsed time (s)");
    if (spec.kind === "errors") {
      var o = common("trials (chronological chunks)", "records");
      o.scales.x = { stacked: true, title: { display: true, text: "trials (chronological chunks)" } };
      o.scales.y.stacked = true;
      o.scales.y.ticks = { precision: 0 };
      return { type: "bar", options: o, data: { labels: spec.labels, datasets: spec.series.map(function (s) {
        return { label: s.kind, data: s.counts, backgroundColor: kindColors[s.kind] || "#999" }; }) } };
    }
    if (spec.kind === "network") {
      return { type: "scatter", options: common("elapsed time (s)", "estimated latency (ms)"),
        data: { datasets: [ { label: "sum of weight x best latency", data: points(spec.points), showLine: true,
          stepped: true, borderWidth: 2, borderColor: "#d1495b", backgroundColor: "#d1495b", pointRadius: 2 } ] } };
    }
    throw new Error("unknown chart kind " + spec.kind);
  }
  function inked(canvas) {
    try {
      var px = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) return true;
    } catch (e) { console.error(e); }
    return false;
  }
  var made = [];
  data.charts.forEach(function (spec) {
    var canvas = document.getElementById(spec.id);
    if (!canvas) { console.error("no canvas " + spec.id); return; }
    try { made.push(new Chart(canvas, config(spec))); canvas.setAttribute("data-made", "1"); }
    catch (e) { console.error("chart " + spec.id + ": " + e); }
  });
  function finish() {
    var drawn = 0;
    made.forEach(function (c) { if (inked(c.canvas)) { drawn++; c.canvas.setAttribute("data-drawn", "1"); } });
    window.tesselChartsDrawn = drawn;
    document.body.setAttribute("data-charts-drawn", String(drawn));
    var status = document.getElementById("charts-status");
    if (status) status.textContent = drawn + " of " + data.charts.length + " charts drawn (Chart.js " +
      (window.Chart && Chart.version) + ")";
  }
  finish();
  if (window.tesselChartsDrawn !== data.charts.length && window.requestAnimationFrame) requestAnimationFrame(finish);
})();
)js";

void stats_table(std::ostream& h, const json& st) {
  h << "<table><tr><th>workloads</th><th>targets</th><th>tuning runs</th><th>records</th><th>ok</th>"
       "<th>failed, by kind</th><th>file</th><th>schema</th></tr><tr>"
    << "<td class=num>" << st["workloads"] << "</td><td class=num>" << st["targets"] << "</td><td class=num>"
    << st["runs"] << "</td><td class=num>" << st["records"] << "</td><td class=num>" << st["ok_records"] << "</td><td>";
  std::string kinds;
  for (auto& [k, v] : st["by_error_kind"].items())
    if (k != "none") kinds += (kinds.empty() ? "" : ", ") + html_escape(k) + " " + v.dump();
  h << (kinds.empty() ? "none" : kinds) << "</td><td class=num>" << fmt_bytes(st["file_bytes"].get<int64_t>())
    << "</td><td class=num>" << st["schema_version"] << "</td></tr></table>\n";
}

void network_section(std::ostream& h, const json& n, const std::string& weights_source) {
  h << "<section id=\"" << n["id"].get<std::string>() << "-section\"><h2>Estimated latency of " << n["workloads"]
    << " workloads</h2>\n<p class=\"meta key\">target <code>" << html_escape(n["target"].get<std::string>())
    << "</code></p>\n";
  if (weights_source.empty())
    h << "<p class=note>The tuning runs do not store per-task weights, so every workload weighs 1 "
         "(give <code>--network NAME</code> for a network's occurrence counts).</p>\n";
  else
    h << "<p class=meta>Weights from " << html_escape(weights_source) << "; workloads not listed weigh 1.</p>\n";
  if (n["weighted_without_records"].get<int64_t>() > 0)
    h << "<p class=note>" << n["weighted_without_records"]
      << " weighted workload(s) have no records on this target and are not in the sum.</p>\n";
  if (n["complete"].get<bool>()) {
    h << "<p class=meta>Sum over workloads of weight &times; best-so-far latency, from "
      << fmt(n["from_s"].get<double>(), 1) << " s (when every workload first had a valid schedule): now <b>"
      << fmt_latency(n["estimated_latency_s"].get<double>()) << "</b>.</p>\n"
      << "<div class=chart><canvas id=\"" << n["id"].get<std::string>() << "\"></canvas></div>\n";
  } else {
    h << "<p class=note>No estimate: not every workload has a valid schedule yet.</p>\n";
  }
  h << "<h3>Tasks</h3><table><tr><th>workload</th><th class=num>weight</th><th class=num>best latency</th>"
       "<th class=num>weight &times; best</th></tr>\n";
  for (auto& t : n["tasks"]) {
    double w = t["weight"].get<double>();
    double b = t.contains("best_s") ? t["best_s"].get<double>() : 0;
    h << "<tr><td>" << html_escape(t["name"].get<std::string>()) << " <span class=\"meta key\">"
      << html_escape(t["key"].get<std::string>()) << "</span></td><td class=num>" << fmt(w, w == std::floor(w) ? 0 : 2)
      << "</td><td class=num>" << fmt_latency(b) << "</td><td class=num>" << fmt_latency(w * b) << "</td></tr>\n";
  }
  h << "</table></section>\n";
}

void workload_section(std::ostream& h, const json& s) {
  std::string id = s["id"];
  bool gflops = s["metric"] == "gflops";
  h << "<section id=\"" << id << "-section\"><h2>" << html_escape(s["label"].get<std::string>()) << "</h2>\n"
    << "<p class=meta>spec <code>" << html_escape(s["spec"].get<std::string>()) << "</code></p>\n"
    << "<p class=\"meta key\">key <code>" << html_escape(s["key"].get<std::string>())
    << "</code> &middot; target <code>" << html_escape(s["target"].get<std::string>()) << "</code></p>\n";
  h << "<p>" << s["records"] << " records: " << s["trials"] << " trials, " << s["ok"] << " ok";
  if (s["remeasured"].get<int64_t>() > 0) h << ", " << s["remeasured"] << " remeasured (in the table, not the curves)";
  h << ". ";
  if (s["best"].is_null()) {
    h << "<b>No valid schedule.</b>";
  } else {
    const json& b = s["best"];
    h << "Best: <b>" << fmt_latency(b["median_s"].get<double>()) << "</b>";
    if (gflops) h << ", <b>" << fmt(b["gflops"].get<double>(), 2) << " GFLOP/s</b>";
    h << " (record " << b["id"] << ").";
  }
  h << "</p>\n";
  if (s.contains("flop_error"))
    h << "<p class=note>Charts show latency, not GFLOP/s: " << html_escape(s["flop_error"].get<std::string>())
      << "</p>\n";
  std::string metric = gflops ? "best GFLOP/s" : "best latency";
  h << "<div class=grid>"
    << "<div><h3>" << metric << " against trials</h3><div class=chart><canvas id=\"" << id
    << "-trials\"></canvas></div></div>"
    << "<div><h3>" << metric << " against time</h3><div class=chart><canvas id=\"" << id
    << "-time\"></canvas></div></div>"
    << "<div><h3>Error kinds over time</h3><div class=chart><canvas id=\"" << id << "-errors\"></canvas></div></div>"
    << "</div>\n";
  if (!s["errors"].empty()) {
    h << "<h3>Errors</h3><table><tr><th>kind</th><th class=num>records</th><th>example message</th></tr>\n";
    for (auto& e : s["errors"])
      h << "<tr><td>" << html_escape(e["kind"].get<std::string>()) << "</td><td class=num>" << e["count"]
        << "</td><td><code>" << html_escape(e["example"].get<std::string>()) << "</code></td></tr>\n";
    h << "</table>\n";
  }
  if (!s["best"].is_null()) {
    h << "<h3>Best schedule (record " << s["best"]["id"] << ")</h3>\n<pre class=trace>";
    if (s.contains("trace_error")) {
      h << "trace does not parse: " << html_escape(s["trace_error"].get<std::string>()) << "\n"
        << html_escape(s["trace_json"].get<std::string>());
    } else if (s["trace_steps"].empty()) {
      h << "(empty trace: the default schedule)";
    } else {
      int i = 0;
      for (auto& st : s["trace_steps"]) h << ++i << ". " << html_escape(st.get<std::string>()) << "\n";
    }
    h << "</pre>\n";
    h << "<h3>Top " << s["top"].size() << " records</h3><table><tr><th class=num>#</th><th class=num>record</th>"
      << "<th class=num>median</th>" << (gflops ? "<th class=num>GFLOP/s</th>" : "")
      << "<th class=num>repeats</th><th>measured</th><th class=num>run</th><th>strategy</th><th></th></tr>\n";
    int rank = 0;
    for (auto& r : s["top"]) {
      h << "<tr><td class=num>" << ++rank << "</td><td class=num>" << r["id"] << "</td><td class=num>"
        << fmt_latency(r["median_s"].get<double>()) << "</td>";
      if (gflops) h << "<td class=num>" << fmt(r["gflops"].get<double>(), 2) << "</td>";
      h << "<td class=num>" << r["repeats"] << "</td><td>" << html_escape(r["timestamp"].get<std::string>())
        << "</td><td class=num>" << r["run_id"] << "</td><td>" << html_escape(r["strategy"].get<std::string>())
        << "</td><td>" << (r["remeasure"].get<bool>() ? "remeasured" : "") << "</td></tr>\n";
    }
    h << "</table>\n";
  }
  h << "</section>\n";
}

}  // namespace

std::string render_report_html(const json& d, const std::string& chartjs_source) {
  std::ostringstream h;
  size_t nchart = d["charts"].size();
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<meta name=\"generator\" content=\"tessel " << html_escape(d["tessel_version"].get<std::string>()) << "\">\n"
    << "<title>" << html_escape(d["title"].get<std::string>()) << "</title>\n<style>" << kStyle << "</style></head>\n"
    << "<body data-charts-drawn=\"0\" data-charts-expected=\"" << nchart << "\">\n<header><h1>"
    << html_escape(d["title"].get<std::string>()) << "</h1>\n"
    << "<p class=meta>database <code>" << html_escape(d["database"].get<std::string>()) << "</code> &middot; generated "
    << html_escape(d["generated"].get<std::string>()) << " by tessel "
    << html_escape(d["tessel_version"].get<std::string>());
  if (!d["t0"].get<std::string>().empty())
    h << " &middot; time zero (first record) " << html_escape(d["t0"].get<std::string>());
  h << "</p>\n";
  stats_table(h, d["stats"]);
  h << "<p class=meta id=\"charts-status\">" << (nchart ? "charts need JavaScript" : "no charts") << "</p>\n";
  if (d["sections"].size() + d["networks"].size() > 1) {
    h << "<nav>";
    for (auto& n : d["networks"])
      h << "<a href=\"#" << n["id"].get<std::string>() << "-section\">estimated latency</a>";
    for (auto& s : d["sections"])
      h << "<a href=\"#" << s["id"].get<std::string>() << "-section\">" << html_escape(s["label"].get<std::string>())
        << "</a>";
    h << "</nav>\n";
  }
  h << "</header>\n";
  if (d["sections"].empty())
    h << "<section class=empty>This database has no records yet: run <code>tessel tune --db "
      << html_escape(d["database"].get<std::string>()) << " ...</code> first.</section>\n";
  for (auto& n : d["networks"]) network_section(h, n, d["weights_source"].get<std::string>());
  for (auto& s : d["sections"]) workload_section(h, s);
  h << "<script type=\"application/json\" id=\"tessel-report-data\">" << json_for_script({{"charts", d["charts"]}})
    << "</script>\n";
  h << "<script>/* Chart.js (MIT license), inlined from Debian's libjs-chart.js */\n"
    << script_safe(chartjs_source) << "\n</script>\n<script>" << kPageScript << "</script>\n</body></html>\n";
  return h.str();
}

}  // namespace tessel::records
