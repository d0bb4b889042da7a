//===- FileUtil.cpp - whole-file reads, atomic writes ---------------------===//
#include "oflow_rt/FileUtil.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/Tensor.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace oflow_rt {

int64_t HostTensor::rowBytes() const {
  int64_t n = dtypeSize(dtype);
  for (size_t i = 1; i < dims.size(); ++i)
    n *= dims[i];
  return n;
}

std::string readFileRange(const std::string &path, int64_t offset,
                          int64_t length, const std::string &forWhat) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(path + ": cannot open: " + errnoText());
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = S_ISDIR(st.st_mode) ? "is a directory" : errnoText();
    ::close(fd);
    throw Error(path + ": cannot read: " + why);
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (offset < 0 || static_cast<uint64_t>(offset) > size ||
      (length >= 0 && static_cast<uint64_t>(offset) + static_cast<uint64_t>(length) > size)) {
    ::close(fd);
    throw Error(path + ": too short for " + forWhat + " (offset " +
                std::to_string(offset) + ", length " + std::to_string(length) +
                ", file " + std::to_string(size) + " bytes)");
  }
  std::string data(length >= 0 ? static_cast<size_t>(length)
                               : static_cast<size_t>(size - offset),
                   '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::pread(fd, data.data() + got, data.size() - got,
                        static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      std::string why = n < 0 ? errnoText() : "the file shrank while it was read";
      ::close(fd);
      throw Error(path + ": read failed: " + why);
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return data;
}

std::string readFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(path + ": cannot open: " + errnoText());
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string why = errnoText();
    ::close(fd);
    throw Error(path + ": cannot read: " + why);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": cannot read: is a directory");
  }
  // One read into a buffer of the file's size: data sets and checkpoints
  // can be large, and stream copies would double the time and the memory.
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      std::string why = errnoText();
      ::close(fd);
      throw Error(path + ": read failed: " + why);
    }
    if (n == 0)
      break; // the file shrank while we read it
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  // Files whose size stat does not report (pipes, /proc) are read to the end.
  char chunk[65536];
  for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      std::string why = errnoText();
      ::close(fd);
      throw Error(path + ": read failed: " + why);
    }
    data.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

namespace {
std::string parentDir(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void writeAll(int fd, const void *data, uint64_t size,
              const std::string &path) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size > (1u << 30) ? (1u << 30) : size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      throw Error(path + ": write failed: " +
                  (n < 0 ? errnoText() : std::string("no progress")));
    p += n;
    size -= static_cast<uint64_t>(n);
  }
}
} // namespace

void writeFileAtomic(const std::string &path, const void *data,
                     uint64_t size) {
  Piece piece{data, size};
  writeFileAtomic(path, &piece, 1);
}

void writeFileAtomic(const std::string &path, const Piece *pieces,
                     int count) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(tmp + ": cannot create: " + errnoText());
  try {
    for (int i = 0; i < count; ++i)
      writeAll(fd, pieces[i].data, pieces[i].size, tmp);
    if (::fsync(fd) != 0)
      throw Error(tmp + ": fsync failed: " + errnoText());
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw Error(tmp + ": close failed: " + errnoText());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = errnoText();
    ::unlink(tmp.c_str());
    throw Error(path + ": rename from " + tmp + " failed: " + why);
  }
  // The rename is durable only once the directory entry is on disk.
  int dfd = ::open(parentDir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void makeDirectories(const std::string &path) {
  if (path.empty())
    throw Error("empty directory name");
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/')
      continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error(prefix + ": cannot create directory: " + errnoText());
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(path + ": not a directory");
}

std::string fileNameFor(const std::string &tensorName) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < tensorName.size(); ++i) {
    unsigned char c = tensorName[i];
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '-' ||
                 (c == '.' && i > 0);
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out.empty() ? "%" : out;
}

} // namespace oflow_rt
