// `tessel report`: one self-contained HTML page for a tuning database (charts by Chart.js, inlined).
// See docs/report.md.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli_util.h"
#include "subcommand.h"
#include "tessel/records/database.h"
#include "tessel/records/report.h"
#include "tessel/support/error.h"
#include "tessel/workload/network.h"
#include "tessel/workload/workload.h"

namespace tessel::tools {

namespace po = boost::program_options;

namespace {

// Writes through a temporary file in the same directory, renamed over `path`: a reader never sees half
// a page, and a failure leaves an existing file as it was.
void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  TESSEL_CHECK(!fs::is_directory(path, ec)) << "cannot write the report to '" << path << "': it is a directory";
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
    TESSEL_CHECK(bool(os)) << "cannot write the report to '" << path << "': " << std::strerror(errno);
    os << text;
    os.flush();
    if (!os) {
      int err = errno;
      fs::remove(tmp, ec);
      TESSEL_CHECK(false) << "cannot write the report to '" << path << "': " << std::strerror(err);
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    TESSEL_CHECK(false) << "cannot write the report to '" << path << "': " << ec.message();
  }
}

}  // namespace

int run_report(const std::vector<std::string>& args) {
  std::string db_path, out, chartjs, network;
  records::ReportOptions o;
  po::options_description desc(
      "tessel report: one self-contained HTML page for a tuning database: per workload the tuning curves\n"
      "(best GFLOP/s against trials and time), error kinds over time, the best trace and the top records;\n"
      "for several workloads the estimated latency. Charts by Chart.js (Debian's libjs-chart.js), inlined.\n\n"
      "  tessel report --db tessel.db -o report.html\n"
      "  tessel report --db resnet.db -o resnet.html --network resnet50\n\nOptions");
  desc.add_options()("help,h", "print this help")("db", po::value<std::string>(&db_path), "tuning database (required)")(
      "output,o", po::value<std::string>(&out), "HTML file to write (required)")(
      "chartjs", po::value<std::string>(&chartjs),
      (std::string("Chart.js UMD build to inline (default ") + records::kDebianChartJsPath + ")").c_str())(
      "network", po::value<std::string>(&network),
      "weigh the estimated latency by this network's occurrence counts (tessel workloads lists them)")(
      "title", po::value<std::string>(&o.title), "page title")("top", po::value<int>(&o.top)->default_value(10),
                                                               "rows of each workload's best-records table");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  if (db_path.empty()) throw po::error("give --db PATH");
  if (out.empty()) throw po::error("give -o FILE.html");
  if (o.top < 1) throw po::error("--top must be at least 1");

  std::string chart_source = records::read_chartjs(chartjs);  // before any work: a missing package is common
  if (!network.empty()) {
    for (auto& t : workload::load_network(network).tasks) o.weights[workload::from_spec(t.spec).key] += t.count;
    o.weights_source = "network " + network + " (occurrence counts)";
  }
  records::OpenOptions open;
  open.create = false;
  open.read_only = true;
  auto db = records::open_database(db_path, open);
  nlohmann::json data = records::report_data(*db, o);
  write_file_atomically(out, records::render_report_html(data, chart_source));
  std::printf("wrote %s: %zu workload section(s), %zu chart(s), %lld record(s)\n", out.c_str(), data["sections"].size(),
              data["charts"].size(), (long long)data["stats"]["records"].get<int64_t>());
  return 0;
}

}  // namespace tessel::tools
