#include "tests/process/nginx_replica.h"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::testing {
namespace {

constexpr char kNginx[] = "/usr/sbin/nginx";
constexpr char kOpenssl[] = "/usr/bin/openssl";

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  std::ofstream out(path, std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

constexpr absl::Duration kStopGrace = absl::Seconds(5);

// argv with stdin from /dev/null, stdout and stderr appended to log_file.
ChildOptions Logged(std::vector<std::string> argv,
                    const std::string& log_file) {
  ChildOptions options = LoggedTo(std::move(argv), log_file);
  options.stdin_from = Output::Null();
  options.stop_grace = kStopGrace;  // SIGTERM: nginx's fast shutdown
  return options;
}

// As root, nginx chowns its temp dirs to `user` (default nobody), which
// fails inside Bazel's sandbox user namespace, where uid 65534 is unmapped;
// so it is told to stay the current user.
std::string UserDirective() {
  if (geteuid() != 0) return "";
  const passwd* user = getpwuid(geteuid());
  const group* group = getgrgid(getegid());
  if (user == nullptr || group == nullptr) return "";
  return absl::StrCat("user ", user->pw_name, " ", group->gr_name, ";\n");
}

std::string NginxConfig(const std::string& dir, int port,
                        const NginxOptions& options) {
  std::string listen = absl::StrCat("127.0.0.1:", port);
  if (options.tls) absl::StrAppend(&listen, " ssl");
  if (options.http2) absl::StrAppend(&listen, " http2");
  std::string tls;
  if (options.tls) {
    tls = absl::StrCat("    ssl_certificate ", options.cert_file, ";\n",
                       "    ssl_certificate_key ", options.key_file, ";\n");
  }
  std::string locations;
  for (const auto& [path, body] : options.locations) {
    absl::StrAppend(&locations, "    location = ", path,
                    " {\n      default_type text/plain;\n      return 200 \"",
                    body, "\";\n    }\n");
  }
  return absl::StrCat(
      UserDirective(),
      "master_process off;\n"
      "worker_processes 1;\n"
      "error_log ",
      dir,
      "/error.log info;\n"
      "pid ",
      dir,
      "/nginx.pid;\n"
      "events { worker_connections 256; }\n"
      "http {\n"
      "  client_body_temp_path ",
      dir,
      "/tmp/body;\n"
      "  proxy_temp_path ",
      dir,
      "/tmp/proxy;\n"
      "  fastcgi_temp_path ",
      dir,
      "/tmp/fastcgi;\n"
      "  uwsgi_temp_path ",
      dir,
      "/tmp/uwsgi;\n"
      "  scgi_temp_path ",
      dir,
      "/tmp/scgi;\n"
      "  log_format tailgate '$server_protocol $request_method $request_uri "
      "$status';\n"
      "  access_log ",
      dir,
      "/access.log tailgate;\n"
      "  server {\n"
      "    listen ",
      listen, ";\n", tls, locations,
      "    location / { return 404; }\n"
      "  }\n"
      "}\n");
}

}  // namespace

absl::StatusOr<std::string> MakeTempDir(const std::string& prefix) {
  const char* base = getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(base != nullptr ? base : "/tmp", "/", prefix, "XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("mkdtemp ", pattern, ": ", std::strerror(errno)));
  }
  return pattern;
}

absl::Status RunCommand(const std::vector<std::string>& argv,
                        const std::string& log_file) {
  absl::StatusOr<ChildResult> run = RunToExit(Logged(argv, log_file));
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat(absl::StrJoin(argv, " "), " failed (exit code ",
                     run->exit_code, "): ", ReadWholeFile(log_file)));
  }
  return absl::OkStatus();
}

absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir) {
  const std::string log = dir + "/openssl.log";
  TestCertificates certs;
  certs.ca_file = dir + "/ca.pem";
  certs.cert_file = dir + "/server.pem";
  certs.key_file = dir + "/server.key";
  const std::string ca_key = dir + "/ca.key";
  const std::string csr = dir + "/server.csr";
  const std::string ext = dir + "/server.ext";
  if (absl::Status s =
          WriteFile(ext,
                    "basicConstraints=critical,CA:FALSE\n"
                    "keyUsage=critical,digitalSignature,keyEncipherment\n"
                    "extendedKeyUsage=serverAuth\n"
                    "subjectAltName=IP:127.0.0.1\n"
                    "subjectKeyIdentifier=hash\n"
                    "authorityKeyIdentifier=keyid\n");
      !s.ok()) {
    return s;
  }
  const std::vector<std::vector<std::string>> commands = {
      {kOpenssl,
       "req",
       "-x509",
       "-newkey",
       "ec",
       "-pkeyopt",
       "ec_paramgen_curve:prime256v1",
       "-nodes",
       "-keyout",
       ca_key,
       "-out",
       certs.ca_file,
       "-days",
       "2",
       "-subj",
       "/CN=Tailgate Test CA",
       "-addext",
       "basicConstraints=critical,CA:TRUE",
       "-addext",
       "keyUsage=critical,keyCertSign,cRLSign"},
      {kOpenssl, "req", "-newkey", "ec", "-pkeyopt",
       "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", certs.key_file,
       "-out", csr, "-subj", "/CN=127.0.0.1"},
      {kOpenssl, "x509", "-req", "-in", csr, "-CA", certs.ca_file, "-CAkey",
       ca_key, "-set_serial", "2", "-days", "2", "-sha256", "-extfile", ext,
       "-out", certs.cert_file},
  };
  for (const auto& argv : commands) {
    if (absl::Status s = RunCommand(argv, log); !s.ok()) return s;
  }
  return certs;
}

absl::StatusOr<std::unique_ptr<NginxReplica>> NginxReplica::Start(
    NginxOptions options) {
  absl::StatusOr<std::string> dir = MakeTempDir("nginx.");
  if (!dir.ok()) return dir.status();
  std::error_code error;
  std::filesystem::create_directories(*dir + "/tmp", error);
  if (error) return absl::InternalError(error.message());
  const std::string config_file = *dir + "/nginx.conf";
  const std::string log_file = *dir + "/stderr.log";

  // The free port may be taken between UnusedLoopbackPort() and nginx's
  // bind; nginx then exits at once, and another port is tried.
  absl::Status last = absl::UnknownError("not started");
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<int> port = UnusedLoopbackPort();
    if (!port.ok()) return port.status();
    if (absl::Status s =
            WriteFile(config_file, NginxConfig(*dir, *port, options));
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::unique_ptr<ChildProcess>> nginx =
        ChildProcess::Start(Logged(
            {kNginx, "-p", *dir + "/", "-c", config_file, "-g", "daemon off;"},
            log_file));
    if (!nginx.ok()) return nginx.status();
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    bool exited = false;
    // Each round waits a little for nginx to exit, then tries the port.
    while (absl::Now() < give_up) {
      // Exited first: had another process taken the port, WaitForPort
      // would be answered by that one.
      if ((*nginx)->Wait(absl::Milliseconds(5)).has_value()) {
        exited = true;
        break;
      }
      if (WaitForPort(*port, absl::ZeroDuration())) {
        // Still running now that the port answers: nginx listens on it.
        if ((*nginx)->Wait(absl::ZeroDuration()).has_value()) {
          exited = true;
          break;
        }
        return std::unique_ptr<NginxReplica>(
            new NginxReplica(*dir, *port, options.tls, *std::move(nginx)));
      }
    }
    (*nginx)->Stop(absl::ZeroDuration());
    last = absl::UnavailableError(absl::StrCat(
        "nginx did not listen on port ", *port, exited ? " (exited)" : "", ": ",
        ReadWholeFile(log_file), ReadWholeFile(*dir + "/error.log")));
  }
  return last;
}

NginxReplica::~NginxReplica() {
  nginx_.reset();  // SIGTERM (fast shutdown), then SIGKILL after 5 s
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string NginxReplica::url() const {
  return absl::StrCat(tls_ ? "https" : "http", "://127.0.0.1:", port_);
}

std::vector<std::string> NginxReplica::WaitForAccessLogLines(
    size_t n, absl::Duration timeout) const {
  const absl::Time give_up = absl::Now() + timeout;
  while (true) {
    std::vector<std::string> lines = absl::StrSplit(
        ReadWholeFile(dir_ + "/access.log"), '\n', absl::SkipEmpty());
    if (lines.size() >= n || absl::Now() >= give_up) return lines;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

}  // namespace tailgate::testing
