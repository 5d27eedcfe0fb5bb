// OpenListeningSocket on unix paths: the socket file's mode is the
// address's, whatever the umask, and a client connects through it.

#include "server/net/listen_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/net/listen_address.h"

namespace tailgate::server {
namespace {

// A directory of the test's own under /tmp (TEST_TMPDIR is too long for
// sun_path), removed at exit; each test unlinks its sockets.
class SocketDir {
 public:
  SocketDir() {
    char name[] = "/tmp/listen_socket_test.XXXXXX";
    EXPECT_NE(mkdtemp(name), nullptr) << std::strerror(errno);
    path_ = name;
  }
  ~SocketDir() { rmdir(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string SocketPath(const std::string& name) {
  static const SocketDir dir;
  return absl::StrCat(dir.path(), "/", name);
}

ListenAddress Unix(const std::string& path, int mode) {
  absl::StatusOr<ListenAddress> address =
      ParseListenAddress(absl::StrCat("unix:", path));
  EXPECT_TRUE(address.ok()) << address.status();
  address->unix_mode = mode;
  return *address;
}

int ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << std::strerror(errno);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  return static_cast<int>(st.st_mode & 07777);
}

bool Connects(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const bool connected =
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return connected;
}

// Restores the process's umask when the test ends.
class UmaskFor {
 public:
  explicit UmaskFor(mode_t mask) : before_(umask(mask)) {}
  ~UmaskFor() { umask(before_); }

 private:
  const mode_t before_;
};

TEST(ListenSocketTest, UnixSocketGetsItsModeWhateverTheUmask) {
  const struct {
    mode_t umask;
    int mode;
  } cases[] = {{022, 0660}, {077, 0660}, {0, 0600}, {027, 0777}};
  for (const auto& c : cases) {
    UmaskFor mask(c.umask);
    const std::string path = SocketPath(absl::StrCat("mode", c.mode, ".sock"));
    absl::StatusOr<int> fd = OpenListeningSocket(Unix(path, c.mode));
    ASSERT_TRUE(fd.ok()) << fd.status();
    EXPECT_EQ(ModeOf(path), c.mode)
        << "umask " << c.umask << ", mode " << c.mode;
    EXPECT_TRUE(Connects(path));
    close(*fd);
    unlink(path.c_str());
  }
}

TEST(ListenSocketTest, DefaultModeLetsTheGroupIn) {
  UmaskFor mask(022);
  const std::string path = SocketPath("default.sock");
  absl::StatusOr<ListenAddress> address =
      ParseListenAddress(absl::StrCat("unix:", path));
  ASSERT_TRUE(address.ok());
  absl::StatusOr<int> fd = OpenListeningSocket(*address);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(ModeOf(path), 0660);
  close(*fd);
  unlink(path.c_str());
}

TEST(ListenSocketTest, StaleSocketIsReplacedWithTheNewMode) {
  UmaskFor mask(022);
  const std::string path = SocketPath("stale.sock");
  absl::StatusOr<int> first = OpenListeningSocket(Unix(path, 0600));
  ASSERT_TRUE(first.ok()) << first.status();
  close(*first);  // the file stays behind, as after a crash
  absl::StatusOr<int> second = OpenListeningSocket(Unix(path, 0660));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(ModeOf(path), 0660);
  EXPECT_TRUE(Connects(path));
  close(*second);
  unlink(path.c_str());
}

}  // namespace
}  // namespace tailgate::server
