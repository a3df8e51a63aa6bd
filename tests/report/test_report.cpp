// The report library: the data behind the page (curves, error chunks, best trace, network estimate),
// escaping, the inlined Chart.js, and the empty and unbuildable-workload cases. The page drawn in a
// browser is checked by report_cli_test.cmake (headless Chromium).
#include <catch2/catch.hpp>

#include "records/records_test_util.h"
#include "report_test_db.h"
#include "tessel/records/report.h"
#include "tessel/support/error.h"

using namespace tessel;
using namespace tessel::records;
using nlohmann::json;
using tessel::test::TempDir;

namespace {

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1)) ++n;
  return n;
}

const json* section_named(const json& d, const std::string& spec) {
  for (auto& s : d["sections"])
    if (s["spec"] == spec) return &s;
  return nullptr;
}

// A stand-in for Chart.js where the test only looks at the page's text.
const std::string kFakeChartJs = "/* fake Chart.js */ window.Chart = function () {}; var s = \"</script>\";";

}  // namespace

TEST_CASE("report data: curves, errors, best trace and the network estimate", "[report]") {
  TempDir dir;
  std::string path = dir.file("r.db");
  test::fill_report_db(path);
  auto db = open_database(path);
  json d = report_data(*db);

  REQUIRE(d["sections"].size() == 2);
  REQUIRE(d["networks"].size() == 1);
  REQUIRE(d["charts"].size() == 2 * 3 + 1);
  CHECK(d["stats"]["records"] == test::kReportRecordsA + test::kReportRecordsB);

  workload::Workload a = workload::from_spec(test::kReportSpecA);
  const json* s = section_named(d, a.spec);
  REQUIRE(s != nullptr);
  CHECK((*s)["key"] == a.key);
  CHECK((*s)["records"] == test::kReportRecordsA);
  CHECK((*s)["trials"] == test::kReportRecordsA - 1);  // the remeasured record is not a trial
  CHECK((*s)["remeasured"] == 1);
  CHECK((*s)["ok"] == test::kReportRecordsA - 5);
  CHECK((*s)["metric"] == "gflops");
  CHECK((*s)["flop"].get<double>() == a.flop_count());

  // Best = lowest median, GFLOP/s = flop / median; the trace is printed step by step.
  auto best = db->best(a.key, (*s)["target"]);
  REQUIRE(best);
  CHECK((*s)["best"]["id"] == best->id);
  CHECK((*s)["best"]["gflops"].get<double>() == Approx(a.flop_count() / best->median_s() / 1e9));
  REQUIRE((*s)["trace_steps"].size() == 2);
  CHECK((*s)["trace_steps"][0].get<std::string>().find("split(") != std::string::npos);
  CHECK((*s)["trace_steps"][0] == schedule::step_to_string(schedule::trace_from_json(best->trace)[0]));
  CHECK((*s)["top"].size() == 10);
  CHECK((*s)["top"][0]["remeasure"] == true);

  std::map<std::string, int64_t> errors;
  for (auto& e : (*s)["errors"]) errors[e["kind"]] = e["count"];
  CHECK(errors == std::map<std::string, int64_t>{{"compile_error", 2}, {"run_timeout", 2}, {"wrong_answer", 1}});

  for (auto& c : d["charts"]) {
    if (c["id"] != (*s)["id"].get<std::string>() + "-trials" && c["id"] != (*s)["id"].get<std::string>() + "-time")
      continue;
    // Best-so-far: x increases, y never decreases (GFLOP/s), and it ends at the last trial / record time.
    const json& pts = c["best"];
    REQUIRE(pts.size() >= 2);
    for (size_t i = 1; i < pts.size(); ++i) {
      CHECK(pts[i][0].get<double>() > pts[i - 1][0].get<double>());
      CHECK(pts[i][1].get<double>() >= pts[i - 1][1].get<double>());
    }
    if (c["kind"] == "trials") CHECK(pts.back()[0] == test::kReportRecordsA - 1);
    CHECK(c["each"].size() == test::kReportRecordsA - 5 - 1);
  }
  for (auto& c : d["charts"]) {
    if (c["id"] != (*s)["id"].get<std::string>() + "-errors") continue;
    int64_t total = 0;
    for (auto& k : c["series"])
      for (auto& v : k["counts"]) total += v.get<int64_t>();
    CHECK(total == test::kReportRecordsA - 1);
    CHECK(c["series"][0]["kind"] == "none");
  }

  const json& n = d["networks"][0];
  CHECK(n["complete"] == true);
  CHECK(d["weights_source"] == "");
  for (auto& t : n["tasks"]) CHECK(t["weight"] == 1.0);
  // The estimate is the sum of the best (search trial) latencies, and only decreases over time.
  const json* chart = nullptr;
  for (auto& c : d["charts"])
    if (c["kind"] == "network") chart = &c;
  REQUIRE(chart != nullptr);
  const json& pts = (*chart)["points"];
  REQUIRE(pts.size() >= 2);
  for (size_t i = 1; i < pts.size(); ++i) {
    CHECK(pts[i][0].get<double>() > pts[i - 1][0].get<double>());
    CHECK(pts[i][1].get<double>() <= pts[i - 1][1].get<double>());
  }
  CHECK(pts.back()[1].get<double>() == Approx(n["estimated_latency_s"].get<double>() * 1e3));
}

TEST_CASE("report weights: from options or from tuning-run settings", "[report]") {
  CHECK(weights_from_run_settings({}).empty());
  CHECK(weights_from_run_settings({json{{"strategy", "x"}}}).empty());
  auto w = weights_from_run_settings({json{{"tasks", {{{"key", "k1"}, {"weight", 3}}, {{"key", "k2"}}}}},
                                      json{{"tasks", {{{"key", "k1"}, {"weight", 4.5}}}}}});
  CHECK(w == std::map<std::string, double>{{"k1", 4.5}});

  TempDir dir;
  std::string path = dir.file("r.db");
  test::fill_report_db(path);
  auto db = open_database(path);
  workload::Workload a = workload::from_spec(test::kReportSpecA);
  ReportOptions o;
  o.run_settings = {json{{"tasks", {{{"key", a.key}, {"weight", 3}}}}}};
  json d = report_data(*db, o);
  CHECK(d["weights_source"] == "the tuning runs' settings");
  json plain = report_data(*db);
  double weighted = d["networks"][0]["estimated_latency_s"], unweighted = plain["networks"][0]["estimated_latency_s"];
  double best_a = 0;  // the search's best (the estimate leaves remeasured records out)
  for (auto& t : plain["networks"][0]["tasks"])
    if (t["key"] == a.key) best_a = t["best_s"];
  CHECK(best_a > 0);
  CHECK(weighted == Approx(unweighted + 2 * best_a));
  std::string html = render_report_html(d, kFakeChartJs);
  CHECK(html.find("Weights from the tuning runs&#39; settings") != std::string::npos);
  CHECK(render_report_html(plain, kFakeChartJs).find("every workload weighs 1") != std::string::npos);
  CHECK(plain["networks"][0]["weighted_without_records"] == 0);

  ReportOptions extra;  // a weighted workload without records is named in a note, not summed
  extra.weights = {{a.key, 1}, {"no-such-key", 7}};
  extra.weights_source = "a test";
  json e = report_data(*db, extra);
  CHECK(e["networks"][0]["weighted_without_records"] == 1);
  CHECK(e["networks"][0]["estimated_latency_s"].get<double>() == Approx(unweighted));
  CHECK(render_report_html(e, kFakeChartJs).find("1 weighted workload(s) have no records") != std::string::npos);
}

TEST_CASE("report html: escaped text, embedded data, inlined Chart.js, no external scripts", "[report]") {
  TempDir dir;
  std::string path = dir.file("r.db");
  test::fill_report_db(path);
  auto db = open_database(path);
  json d = report_data(*db);

  std::string chartjs;
  REQUIRE_NOTHROW(chartjs = read_chartjs());  // Debian's libjs-chart.js (scripts/setup installs it)
  CHECK(chartjs.find("Chart.js v") != std::string::npos);
  std::string html = render_report_html(d, chartjs);
  CHECK(html.find(chartjs.substr(0, 2000)) != std::string::npos);  // inlined, not linked
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(count(html, "<script") == 3);  // data, Chart.js, the page script
  CHECK(count(html, "</script>") == 3);
  CHECK(html.find("data-charts-expected=\"7\"") != std::string::npos);
  for (auto& c : d["charts"])
    CHECK(html.find("<canvas id=\"" + c["id"].get<std::string>() + "\">") != std::string::npos);

  // The failure message with markup in it appears escaped, in the errors table.
  CHECK(html.find(test::kReportNastyMessage) == std::string::npos);
  CHECK(html.find(html_escape(test::kReportNastyMessage)) != std::string::npos);
  CHECK(html.find("<pre class=trace>1. split(") != std::string::npos);
  CHECK(html.find("GFLOP/s") != std::string::npos);

  // A "</script" inside the inlined library cannot end its element.
  std::string fake = render_report_html(d, kFakeChartJs);
  CHECK(count(fake, "</script>") == 3);
  CHECK(fake.find("var s = \"<\\/script>\"") != std::string::npos);
}

TEST_CASE("report html escaping", "[report]") {
  CHECK(html_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(html_escape("plain") == "plain");
}

TEST_CASE("report: Chart.js missing or not Chart.js", "[report]") {
  TempDir dir;
  CHECK_THROWS_WITH(read_chartjs(dir.file("missing.js")),
                    Catch::Contains("--chartjs") && Catch::Contains("missing.js"));
  test::write_bytes(dir.file("other.js"), "console.log('hello');");
  CHECK_THROWS_WITH(read_chartjs(dir.file("other.js")), Catch::Contains("does not look like Chart.js"));
}

TEST_CASE("report: an empty database gives a page that says so", "[report]") {
  TempDir dir;
  auto db = open_database(dir.file("empty.db"));
  json d = report_data(*db);
  CHECK(d["sections"].empty());
  CHECK(d["charts"].empty());
  std::string html = render_report_html(d, kFakeChartJs);
  CHECK(html.find("has no records yet") != std::string::npos);
  CHECK(html.find("data-charts-expected=\"0\"") != std::string::npos);
}

TEST_CASE("report: a workload that cannot be rebuilt is charted by latency", "[report]") {
  TempDir dir;
  auto db = open_database(dir.file("odd.db"));
  workload::Workload w = workload::from_spec("matmul:M=16,N=16,K=16");
  w.key = "not-the-real-key";  // from_json refuses it: no flop count
  db->add_workload(w);
  records::TuningRecord r;
  r.workload_key = w.key;
  r.target = codegen::Target::host().to_string();
  r.trace = schedule::trace_to_json({schedule::SplitStep{"C", "i", 4, false}});
  r.run_times_s = {2e-3};
  db->add_record(r);
  json d = report_data(*db);
  REQUIRE(d["sections"].size() == 1);
  const json& s = d["sections"][0];
  CHECK(s["metric"] == "latency_ms");
  CHECK(s.contains("flop_error"));
  CHECK_FALSE(s["best"].contains("gflops"));
  CHECK(d["charts"][0]["best"][0][1].get<double>() == Approx(2.0));  // milliseconds
  std::string html = render_report_html(d, kFakeChartJs);
  CHECK(html.find("Charts show latency, not GFLOP/s") != std::string::npos);
  CHECK(html.find("best latency against trials") != std::string::npos);

  // A second workload with failures only: no best, no trace, no estimate (and no network chart).
  workload::Workload f = workload::from_spec("matmul:M=8,N=8,K=8");
  db->add_workload(f);
  r.workload_key = f.key;
  r.run_times_s.clear();
  r.error_kind = MeasureErrorKind::kCompileError;
  r.error_message = "no";
  db->add_record(r);
  json d2 = report_data(*db);
  REQUIRE(d2["sections"].size() == 2);
  REQUIRE(d2["networks"].size() == 1);
  CHECK(d2["networks"][0]["complete"] == false);
  CHECK(d2["charts"].size() == 6);
  std::string html2 = render_report_html(d2, kFakeChartJs);
  CHECK(html2.find("No valid schedule.") != std::string::npos);
  CHECK(html2.find("No estimate: not every workload has a valid schedule yet.") != std::string::npos);
}
