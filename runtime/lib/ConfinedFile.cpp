//===- ConfinedFile.cpp - files confined to a folder ----------------------===//
#include "oflow_rt/ConfinedFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace oflow_rt {

namespace {

/// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int fd) : fd(fd) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

std::vector<std::string> components(const std::string &path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos)
      slash = path.size();
    if (slash > start)
      parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

/// openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS); -1 with errno ENOSYS
/// where the kernel lacks it.
int openBeneath(int dirFd, const std::string &location) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dirFd, location.c_str(), &how,
                                    sizeof how));
}

/// The fallback: one component at a time, each opened with O_NOFOLLOW from
/// its parent's descriptor, so no link is ever followed.
int openWalking(int dirFd, const std::string &location) {
  std::vector<std::string> parts = components(location);
  int current = ::dup(dirFd);
  for (size_t i = 0; current >= 0 && i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
                (last ? 0 : O_DIRECTORY);
    int next = ::openat(current, parts[i].c_str(), flags);
    int saved = errno;
    ::close(current);
    errno = saved;
    current = next;
  }
  return current;
}

} // namespace

std::string checkConfinedLocation(const std::string &location) {
  if (location.empty())
    return "is empty";
  bool escapes = location[0] == '/';
  for (const std::string &part : components(location))
    escapes |= part == "..";
  if (escapes)
    return "is not a relative path inside the model's folder; refused";
  if (location.find('\0') != std::string::npos)
    return "contains a NUL byte; refused";
  return "";
}

bool readConfinedRange(const std::string &dir, const std::string &location,
                       uint64_t offset, std::optional<uint64_t> length,
                       std::string &out, std::string &error) {
  if (std::string why = checkConfinedLocation(location); !why.empty()) {
    error = why;
    return false;
  }
  Fd folder(::open(dir.empty() ? "." : dir.c_str(),
                   O_RDONLY | O_CLOEXEC | O_DIRECTORY));
  if (folder.fd < 0) {
    error = "cannot be read: the model's folder '" + dir +
            "' cannot be opened: " + std::strerror(errno);
    return false;
  }
  int fd = openBeneath(folder.fd, location);
  if (fd < 0 && (errno == ENOSYS || errno == EPERM))
    fd = openWalking(folder.fd, location);
  Fd file(fd);
  if (file.fd < 0) {
    int e = errno;
    if (e == EXDEV || e == ELOOP)
      error = "resolves outside the model's folder (through a link); refused";
    else if (e == ENOENT)
      error = "does not exist next to the model";
    else
      error = std::string("cannot be opened: ") + std::strerror(e);
    return false;
  }
  struct stat st;
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = "is not a regular file";
    return false;
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  // offset + length may overflow: compare without adding.
  if (offset > size || (length && *length > size - offset)) {
    error = "is truncated (" + std::to_string(size) + " bytes, needs offset " +
            std::to_string(offset) +
            (length ? " + length " + std::to_string(*length) : std::string()) +
            ")";
    return false;
  }
  uint64_t want = length ? *length : size - offset;
  out.assign(want, '\0');
  uint64_t got = 0;
  while (got < want) {
    ssize_t n = ::pread(file.fd, out.data() + got, want - got,
                        static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = n < 0 ? std::string("cannot be read: ") + std::strerror(errno)
                    : "shrank while it was read";
      return false;
    }
    got += static_cast<uint64_t>(n);
  }
  return true;
}

} // namespace oflow_rt
