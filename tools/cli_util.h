// Helpers shared by the subcommands: option parsing with --help, and the workload flags.
#pragma once
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "tessel/workload/workload.h"

namespace tessel::tools {

/** Parses args against desc into vm (throws boost::program_options::error on bad flags). Returns true
 *  when --help was given; the help has then been printed and the command should exit 0. */
bool parse_args(const boost::program_options::options_description& desc, const std::vector<std::string>& args,
                boost::program_options::variables_map& vm);

}  // namespace tessel::tools
