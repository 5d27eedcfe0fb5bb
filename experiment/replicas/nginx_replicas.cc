#include "experiment/replicas/nginx_replicas.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(10);

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// Run as root, nginx hands its temporary directories to "nobody", which a
// sandbox's user namespace may not map: it keeps them as the user it is.
std::string UserDirective() {
  if (geteuid() != 0) return "";
  const passwd* user = getpwuid(geteuid());
  const group* group = getgrgid(getegid());
  if (user == nullptr || group == nullptr) return "";
  return absl::StrCat("user ", user->pw_name, " ", group->gr_name, ";\n");
}

}  // namespace

absl::StatusOr<std::unique_ptr<NginxReplicas>> NginxReplicas::Start(
    const std::string& dir, const std::vector<std::string>& launcher) {
  std::vector<int> ports;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<int> port = testing::UnusedLoopbackPort();
    if (!port.ok()) return port.status();
    ports.push_back(*port);
  }
  if (absl::Status s = WriteFile(absl::StrCat(dir, kPath), kBody); !s.ok()) {
    return s;
  }
  const std::string config = absl::StrCat(
      UserDirective(), "daemon off; master_process off; worker_processes 1;\n", "pid ", dir,
      "/nginx.pid; error_log ", dir, "/nginx.err;\n",
      "events { worker_connections 4096; }\n",
      "http {\n  access_log off; keepalive_requests 1000000000; ",
      "keepalive_timeout 60s;\n",
      // Its own temporary directories: the packaged ones under
      // /var/lib/nginx exist only once the system's nginx has run (and
      // are read-only in a test sandbox).
      "  client_body_temp_path ", dir, "/body; proxy_temp_path ", dir,
      "/proxy; fastcgi_temp_path ", dir, "/fastcgi; uwsgi_temp_path ", dir,
      "/uwsgi; scgi_temp_path ", dir, "/scgi;\n",
      "  server { listen 127.0.0.1:", ports[0], "; root ", dir, "; }\n",
      "  server { listen 127.0.0.1:", ports[1], "; root ", dir, "; }\n}\n");
  const std::string config_path = absl::StrCat(dir, "/nginx.conf");
  if (absl::Status s = WriteFile(config_path, config); !s.ok()) return s;

  std::vector<std::string> argv = launcher;
  // -e: nginx opens its compiled-in error log before it reads the config.
  argv.insert(argv.end(), {"nginx", "-p", dir, "-e",
                           absl::StrCat(dir, "/nginx.err"), "-c", config_path});
  absl::StatusOr<std::unique_ptr<testing::ChildProcess>> nginx =
      testing::ChildProcess::Start(
          testing::LoggedTo(argv, absl::StrCat(dir, "/nginx.out")));
  if (!nginx.ok()) return nginx.status();
  for (int port : ports) {
    if (!testing::WaitForPort(port, kStartTimeout)) {
      return absl::UnavailableError(absl::StrCat(
          "nginx did not listen on ", port, ": ",
          testing::ReadWholeFile(absl::StrCat(dir, "/nginx.err"))));
    }
  }
  return std::unique_ptr<NginxReplicas>(
      new NginxReplicas(*std::move(nginx), std::move(ports)));
}

std::string NginxReplicas::url(int replica) const {
  return absl::StrCat("http://127.0.0.1:", ports_[replica], kPath);
}

std::string NginxReplicas::backends() const {
  return absl::StrCat("http://127.0.0.1:", ports_[0], ",http://127.0.0.1:",
                      ports_[1]);
}

}  // namespace tailgate::experiment
