// The tessel command-line tool; subcommands are added by later modules.
#include <boost/program_options.hpp>
#include <iostream>

#include "tessel/support/version.h"

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description desc("tessel: an auto-tuning tensor compiler\n\nUsage: tessel [--help] [--version]\n\nOptions");
  desc.add_options()("help,h", "print this help")("version", "print the version");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "tessel: " << e.what() << "\n" << desc << "\n";
    return 2;
  }
  if (vm.count("version")) {
    std::cout << "tessel " << tessel::version() << "\n";
    return 0;
  }
  std::cout << desc << "\n";
  return 0;
}
