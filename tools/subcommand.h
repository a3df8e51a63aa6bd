// Subcommands of the `tessel` CLI: each is a file in tools/ with one registration line in
// tessel_main.cpp. A subcommand gets its own arguments (after its name) and returns the exit code.
#pragma once
#include <string>
#include <vector>

namespace tessel::tools {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

/** `tessel demo`: a 512^3 matmul with a naive and a hand-written schedule, checked and timed. */
int run_demo(const std::vector<std::string>& args);

}  // namespace tessel::tools
