// The tuning report: one self-contained HTML page per database (`tessel report`, docs/report.md). For
// each (workload, target): tuning curves (best GFLOP/s against trials and against time), error kinds
// over time, the best schedule's trace and the top records; for a database of several workloads (a
// network) the estimated latency over time. Charts are drawn by Chart.js, inlined into the page.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/records/database.h"

namespace tessel::records {

/** Where Debian's libjs-chart.js puts the minified UMD build of Chart.js. */
constexpr const char* kDebianChartJsPath = "/usr/share/javascript/chart.js/chart.min.js";

struct ReportOptions {
  std::string title;  // page title (default: "tessel report: <database path>")
  int top = 10;       // rows of the best-records table per section
  /** Workload key -> weight (occurrences in the network) for the estimated-latency chart; keys not
   *  listed weigh 1. Empty: weights_from_run_settings over run_settings, else every weight is 1. */
  std::map<std::string, double> weights;
  std::string weights_source;                // shown on the page ("network resnet50", ...)
  std::vector<nlohmann::json> run_settings;  // settings of the database's tuning runs, if known
};

/** Weights stored in tuning-run settings as {"tasks":[{"key":K,"weight":W}, ...]}; later runs win.
 *  Empty when no run carries them. */
std::map<std::string, double> weights_from_run_settings(const std::vector<nlohmann::json>& run_settings);

/** Everything the page shows, as JSON (the page embeds the chart data of it): {"database", "stats",
 *  "sections":[...], "networks":[...], "charts":[{"id","kind",...}]}. */
nlohmann::json report_data(Database& db, const ReportOptions& options = {});

/** The HTML page for report_data's output with `chartjs_source` (Chart.js) inlined. */
std::string render_report_html(const nlohmann::json& data, const std::string& chartjs_source);

/** Reads Chart.js from `path` (empty: kDebianChartJsPath); throws UserError naming the package
 *  (libjs-chart.js) or the --chartjs file when it is missing or does not look like Chart.js. */
std::string read_chartjs(const std::string& path = "");

/** `&<>"'` as HTML character references. */
std::string html_escape(std::string_view text);

}  // namespace tessel::records
