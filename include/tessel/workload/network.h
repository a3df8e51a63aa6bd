// Network task lists: the distinct fused-subgraph workloads of a network with their occurrence counts
// (the weights a task scheduler uses), read from the JSON data files in src/workload/networks/.
#pragma once
#include <string>
#include <vector>

namespace tessel::workload {

struct NetworkTask {
  std::string name;  // e.g. "stage2.conv3x3"
  std::string spec;  // workload spec
  int count = 1;     // occurrences in one forward pass
};

struct Network {
  std::string name, description;
  std::vector<NetworkTask> tasks;
};

/** Names of the built-in networks (resnet50, mobilenet_v2, bert_base). */
std::vector<std::string> network_names();
/** The network's task list; throws UserError listing the known networks for an unknown name. */
Network load_network(const std::string& name);
/** Parses a network JSON document ({"version":1,"name","description","tasks":[{"name","spec","count"}]}). */
Network parse_network_json(const std::string& text, const std::string& origin);

}  // namespace tessel::workload
