// NginxReplica: a real nginx (/usr/sbin/nginx) on 127.0.0.1 for tests of the
// engine's HTTP/2 and TLS paths, which the libevent Replica cannot serve.
//
// Each NginxReplica runs one nginx (a ChildProcess) in the foreground (daemon
// off, master process off) with a config generated in its own temp dir; the
// error log, pid file, temp paths and an access log recording
// "$server_protocol" live in that dir. Start() returns once the port accepts
// connections; the destructor stops nginx and removes the dir.
//
// Example:
//
//   NginxOptions options;
//   options.http2 = true;
//   options.locations = {{"/a", "body"}};
//   absl::StatusOr<std::unique_ptr<NginxReplica>> nginx =
//       NginxReplica::Start(options);
//   ASSERT_TRUE(nginx.ok()) << nginx.status();
//   ... GET (*nginx)->url() + "/a" with h2 prior knowledge ...
//   EXPECT_EQ((*nginx)->WaitForAccessLogLines(1).at(0), "HTTP/2.0 GET /a 200");
//
// MakeTestCertificates() makes a throwaway CA and a server certificate for
// 127.0.0.1 (subjectAltName IP:127.0.0.1) with /usr/bin/openssl.
//
// Thread safety: none needed; use from the test thread.

#ifndef TAILGATE_TESTS_PROCESS_NGINX_REPLICA_H_
#define TAILGATE_TESTS_PROCESS_NGINX_REPLICA_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/process/child_process.h"

namespace tailgate::testing {

// A fresh directory under $TEST_TMPDIR (or /tmp).
absl::StatusOr<std::string> MakeTempDir(const std::string& prefix);

// Runs argv[0] (an absolute path) with argv, stdin from /dev/null, stdout
// and stderr appended to `log_file`; OK if it exits 0.
absl::Status RunCommand(const std::vector<std::string>& argv,
                        const std::string& log_file);

struct TestCertificates {
  std::string ca_file;    // PEM, the CA certificate
  std::string cert_file;  // PEM, server certificate for IP 127.0.0.1
  std::string key_file;   // PEM, the server's private key
};

// Writes a self-signed CA and a server certificate it signed into `dir`.
absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir);

struct NginxOptions {
  bool tls = false;    // `listen ... ssl`; needs cert_file and key_file
  bool http2 = false;  // `listen ... http2` (h2c prior knowledge without tls)
  std::string cert_file;
  std::string key_file;
  // Exact-match locations answering `return 200 "body"`.
  std::vector<std::pair<std::string, std::string>> locations;
};

class NginxReplica {
 public:
  static absl::StatusOr<std::unique_ptr<NginxReplica>> Start(
      NginxOptions options);

  ~NginxReplica();  // SIGTERM, then SIGKILL after 5 s; removes the dir
  NginxReplica(const NginxReplica&) = delete;
  NginxReplica& operator=(const NginxReplica&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT".
  std::string url() const;
  const std::string& dir() const { return dir_; }

  // The access log's lines, each "$server_protocol $request_method
  // $request_uri $status" ("HTTP/2.0 GET /a 200"). nginx writes a line just
  // after the response, so this waits (bounded) for at least `n` lines and
  // returns what is there by then.
  std::vector<std::string> WaitForAccessLogLines(
      size_t n, absl::Duration timeout = absl::Seconds(5)) const;

 private:
  NginxReplica(std::string dir, int port, bool tls,
               std::unique_ptr<ChildProcess> nginx)
      : dir_(std::move(dir)),
        port_(port),
        tls_(tls),
        nginx_(std::move(nginx)) {}

  std::string dir_;
  int port_;
  bool tls_;
  std::unique_ptr<ChildProcess> nginx_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_PROCESS_NGINX_REPLICA_H_
