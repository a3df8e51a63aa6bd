// Helpers shared by the subcommands: option parsing with --help, and the workload flags.
#pragma once
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessel/rpc/rpc.h"
#include "tessel/workload/workload.h"

namespace tessel::tools {

/** Parses args against desc into vm (throws boost::program_options::error on bad flags). Returns true
 *  when --help was given; the help has then been printed and the command should exit 0. */
bool parse_args(const boost::program_options::options_description& desc, const std::vector<std::string>& args,
                boost::program_options::variables_map& vm);

/** The JSON object given to `flag` (e.g. --params '{"max_depth":6}'); an empty text gives {}. Throws
 *  UserError naming the flag when the text is not JSON or not an object. */
nlohmann::json parse_json_object_flag(const std::string& text, const std::string& flag);

/** The security flags of tracker, worker and tune (--token-file, --tls-cert, --tls-key, --tls-ca). */
struct SecurityFlags {
  std::string token_file, tls_cert, tls_key, tls_ca;
  bool allow_unauthenticated = false;
  /** Adds the flags to desc (with --allow-unauthenticated when server is true). */
  void add_to(boost::program_options::options_description& desc, bool server);
  /** Reads the token file and checks the TLS files; throws UserError naming the flag. */
  rpc::Security load() const;
};

}  // namespace tessel::tools
