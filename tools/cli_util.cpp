#include "cli_util.h"

#include <iostream>

namespace tessel::tools {

bool parse_args(const boost::program_options::options_description& desc, const std::vector<std::string>& args,
                boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  if (!vm.count("help")) return false;
  std::cout << desc << "\n";
  return true;
}

}  // namespace tessel::tools
