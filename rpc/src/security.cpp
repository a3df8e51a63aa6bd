// Security and plumbing shared by the tracker, the worker and the tuner's clients: token files, TLS
// credentials, the constant-time token check, server start-up (port file, loopback rule) and signals.
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rpc_internal.h"
#include "tessel/support/error.h"

namespace tessel::rpc {

namespace {

std::string read_file(const std::string& path, const char* flag) {
  std::ifstream is(path, std::ios::binary);
  TESSEL_CHECK(bool(is)) << flag << " " << path << ": cannot read the file";
  std::ostringstream os;
  os << is.rdbuf();
  return os.str();
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0 || host.rfind("unix:", 0) == 0;
}

}  // namespace

std::string read_token_file(const std::string& path) {
  std::string s = read_file(path, "--token-file");
  s = s.substr(0, s.find('\n'));
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  TESSEL_CHECK(b != std::string::npos) << "--token-file " << path << ": the first line is empty";
  return s.substr(b, e - b + 1);
}

void Security::validate() const {
  if (!tls()) return;
  TESSEL_CHECK(!tls_cert.empty() && !tls_key.empty() && !tls_ca.empty())
      << "TLS needs all of --tls-cert, --tls-key and --tls-ca (mutual TLS: both sides present certificates)";
  read_file(tls_cert, "--tls-cert");
  read_file(tls_key, "--tls-key");
  read_file(tls_ca, "--tls-ca");
}

std::string host_of(const std::string& addr) {
  if (!addr.empty() && addr[0] == '[') return addr.substr(1, addr.find(']') - 1);
  size_t c = addr.rfind(':');
  return c == std::string::npos ? addr : addr.substr(0, c);
}

std::shared_ptr<grpc::ServerCredentials> server_credentials(const Security& sec) {
  if (!sec.tls()) return grpc::InsecureServerCredentials();
  sec.validate();
  grpc::SslServerCredentialsOptions o(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  o.pem_root_certs = read_file(sec.tls_ca, "--tls-ca");
  o.pem_key_cert_pairs.push_back({read_file(sec.tls_key, "--tls-key"), read_file(sec.tls_cert, "--tls-cert")});
  return grpc::SslServerCredentials(o);
}

std::shared_ptr<grpc::Channel> make_channel(const std::string& target, const Security& sec, int64_t max_message_mb) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(int(max_message_mb << 20));
  args.SetMaxSendMessageSize(int(max_message_mb << 20));
  // Reconnect quickly after a tracker or worker restart (the default backoff grows to minutes).
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a channel made anew starts without backoff
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (sec.tls()) {
    sec.validate();
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = read_file(sec.tls_ca, "--tls-ca");
    o.pem_private_key = read_file(sec.tls_key, "--tls-key");
    o.pem_cert_chain = read_file(sec.tls_cert, "--tls-cert");
    creds = grpc::SslCredentials(o);
  }
  return grpc::CreateCustomChannel(target, creds, args);
}

std::unique_ptr<grpc::ClientContext> client_context(const Security& sec, double timeout_s) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!sec.token.empty()) ctx->AddMetadata(kTokenHeader, sec.token);
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(int64_t(std::max(0.001, timeout_s) * 1000)));
  return ctx;
}

grpc::Status check_token(const grpc::ServerContext* ctx, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  auto& md = ctx->client_metadata();
  auto it = md.find(kTokenHeader);
  if (it == md.end()) return {grpc::StatusCode::UNAUTHENTICATED, "missing token (x-tessel-token)"};
  const grpc::string_ref& got = it->second;
  // Constant time in the token's content: every byte is compared whatever differs first.
  unsigned char diff = got.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(token[i]) ^ static_cast<unsigned char>(i < got.size() ? got.data()[i] : 0);
  if (diff) return {grpc::StatusCode::UNAUTHENTICATED, "wrong token"};
  return grpc::Status::OK;
}

std::unique_ptr<grpc::Server> start_server(const std::string& listen, const Security& sec, int64_t max_message_mb,
                                           const std::vector<grpc::Service*>& services, const std::string& port_file,
                                           int* port) {
  TESSEL_CHECK(sec.allow_unauthenticated || !sec.token.empty() || sec.tls() || is_loopback(host_of(listen)))
      << "refusing to listen on " << listen << " without authentication: give --token-file or the TLS flags, listen "
      << "on 127.0.0.1, or pass --allow-unauthenticated";
  TESSEL_CHECK(max_message_mb > 0 && max_message_mb < 2048) << "--max-message-mb must be in 1..2047";
  grpc::ServerBuilder b;
  b.AddListeningPort(listen, server_credentials(sec), port);
  b.SetMaxReceiveMessageSize(int(max_message_mb << 20));
  b.SetMaxSendMessageSize(int(max_message_mb << 20));
  for (auto* s : services) b.RegisterService(s);
  std::unique_ptr<grpc::Server> server = b.BuildAndStart();
  TESSEL_CHECK(server && *port > 0) << "cannot listen on " << listen;
  if (!port_file.empty()) {  // written whole, then renamed: a reader never sees half a number
    std::string tmp = port_file + ".tmp";
    {
      std::ofstream os(tmp);
      os << *port << "\n";
      TESSEL_CHECK(bool(os)) << "cannot write " << tmp;
    }
    std::filesystem::rename(tmp, port_file);
  }
  return server;
}

void block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void wait_for_stop_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
}

}  // namespace tessel::rpc
