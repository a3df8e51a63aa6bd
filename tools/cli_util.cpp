#include "cli_util.h"

#include <iostream>

#include "tessel/support/error.h"

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

void SecurityFlags::add_to(boost::program_options::options_description& desc, bool server) {
  namespace po = boost::program_options;
  desc.add_options()("token-file", po::value<std::string>(&token_file),
                     "shared secret (first line of the file); tracker, workers and tuners use the same")(
      "tls-cert", po::value<std::string>(&tls_cert), "TLS: this side's PEM certificate")(
      "tls-key", po::value<std::string>(&tls_key), "TLS: this side's PEM private key")(
      "tls-ca", po::value<std::string>(&tls_ca), "TLS: PEM CA that the peer's certificate must chain to");
  if (server)
    desc.add_options()("allow-unauthenticated", po::bool_switch(&allow_unauthenticated),
                       "listen beyond 127.0.0.1 with neither token nor TLS");
}

rpc::Security SecurityFlags::load() const {
  rpc::Security s;
  if (!token_file.empty()) s.token = rpc::read_token_file(token_file);
  s.tls_cert = tls_cert;
  s.tls_key = tls_key;
  s.tls_ca = tls_ca;
  s.allow_unauthenticated = allow_unauthenticated;
  s.validate();
  return s;
}

nlohmann::json parse_json_object_flag(const std::string& text, const std::string& flag) {
  nlohmann::json p = nlohmann::json::object();
  if (text.empty()) return p;
  try {
    p = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    TESSEL_CHECK(false) << flag << " is not valid JSON (" << e.what() << "); example: " << flag << " '{\"max_depth\":6}'";
  }
  TESSEL_CHECK(p.is_object()) << flag << " must be a JSON object, e.g. '{\"max_depth\":6}'";
  return p;
}

}  // namespace tessel::tools
