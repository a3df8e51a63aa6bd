// `tessel workloads`: lists operators and their parameters, a network's task list, or one workload's
// canonical JSON and key.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "subcommand.h"
#include "tessel/support/error.h"
#include "tessel/ops/registry.h"
#include "tessel/workload/network.h"
#include "tessel/workload/workload.h"

namespace tessel::tools {

namespace po = boost::program_options;

namespace {

void list_operators(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (auto* d : ops::all_ops()) {
    nlohmann::json params = nlohmann::json::array();
    for (auto& p : d->params) {
      nlohmann::json jp = {{"name", p.name}, {"help", p.help}};
      if (!p.default_value.empty()) jp["default"] = p.default_value;
      if (!p.choices.empty()) jp["choices"] = p.choices;
      params.push_back(jp);
    }
    all.push_back({{"name", d->name}, {"summary", d->summary}, {"params", params}});
  }
  if (json) {
    std::cout << all.dump(2) << "\n";
    return;
  }
  std::cout << "Operators (workload spec: NAME:PARAM=VALUE,...):\n\n";
  for (auto* d : ops::all_ops()) {
    std::cout << "  " << d->name << "  -  " << d->summary << "\n";
    for (auto& p : d->params) {
      std::cout << "      " << p.name;
      if (!p.choices.empty()) {
        std::cout << " =";
        for (size_t i = 0; i < p.choices.size(); ++i) std::cout << (i ? "|" : " ") << p.choices[i];
      }
      std::cout << (p.default_value.empty() ? "  (required)" : "  (default " + p.default_value + ")") << "  "
                << p.help << "\n";
    }
  }
  std::cout << "\nNetworks (tessel workloads --network NAME):";
  for (auto& n : workload::network_names()) std::cout << " " << n;
  std::cout << "\n";
}

void show_network(const std::string& name, bool json) {
  workload::Network net = workload::load_network(name);
  nlohmann::json tasks = nlohmann::json::array();
  if (!json) {
    std::printf("%s: %s\n\n%-28s %5s %10s  %-32s  %s\n", net.name.c_str(), net.description.c_str(), "task", "count",
                "MFLOP", "key", "spec");
  }
  double total = 0;
  for (auto& t : net.tasks) {
    workload::Workload w = workload::from_spec(t.spec);
    double mflop = w.flop_count() / 1e6;
    total += mflop * t.count;
    if (json) {
      tasks.push_back({{"name", t.name}, {"count", t.count}, {"spec", w.spec}, {"key", w.key}, {"mflop", mflop}});
    } else {
      std::printf("%-28s %5d %10.1f  %-32s  %s\n", t.name.c_str(), t.count, mflop, w.key.c_str(), w.spec.c_str());
    }
  }
  if (json) {
    std::cout << nlohmann::json{{"network", net.name}, {"tasks", tasks}, {"total_mflop", total}}.dump(2) << "\n";
  } else {
    std::printf("\n%zu distinct tasks, %.1f GFLOP per forward pass (weighted by count)\n", net.tasks.size(),
                total / 1e3);
  }
}

}  // namespace

int run_workloads(const std::vector<std::string>& args) {
  std::string network, spec, te_file;
  bool json = false;
  po::options_description desc(
      "tessel workloads: operators, network task lists, workload keys\n\n"
      "  tessel workloads                       list operators and their parameters\n"
      "  tessel workloads --network resnet50    a network's distinct workloads with counts\n"
      "  tessel workloads --workload SPEC       one workload's canonical JSON and key\n"
      "  tessel workloads --te FILE             the same for a .te file\n\nOptions");
  desc.add_options()("help,h", "print this help")("network", po::value<std::string>(&network), "network name")(
      "workload", po::value<std::string>(&spec), "workload spec NAME:P=V,...")(
      "te", po::value<std::string>(&te_file), ".te file")("json", po::bool_switch(&json), "JSON output");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  TESSEL_CHECK(int(!network.empty()) + int(!spec.empty()) + int(!te_file.empty()) <= 1)
      << "give at most one of --network, --workload, --te";
  if (!network.empty()) {
    show_network(network, json);
  } else if (!spec.empty() || !te_file.empty()) {
    workload::Workload w = spec.empty() ? workload::from_te_file(te_file) : workload::from_spec(spec);
    std::cout << workload::to_json(w).dump(2) << "\n";
  } else {
    list_operators(json);
  }
  return 0;
}

}  // namespace tessel::tools
