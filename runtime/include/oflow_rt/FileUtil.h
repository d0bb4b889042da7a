//===- oflow_rt/FileUtil.h - whole-file reads, atomic writes ----*- C++ -*-===//
#ifndef OFLOW_RT_FILEUTIL_H
#define OFLOW_RT_FILEUTIL_H

#include <cstdint>
#include <string>

namespace oflow_rt {

/// The whole file; an Error naming it when it cannot be read.
std::string readFile(const std::string &path);
/// Bytes [offset, offset + length) of a regular file (length < 0: to the
/// end). Throws oflow_rt::Error naming the file when it cannot be read, and
/// "<path>: too short for <forWhat> (offset, length, file size)" when it
/// does not hold the range.
std::string readFileRange(const std::string &path, int64_t offset,
                          int64_t length, const std::string &forWhat);

/// Writes `path` so that a reader sees the old content or the new one, never
/// a mix: `path`.tmp is written and fsynced, renamed over `path`, and the
/// directory fsynced. On failure the temporary is removed, the old file is
/// untouched, and an Error names what failed.
void writeFileAtomic(const std::string &path, const void *data, uint64_t size);
/// The same, for a payload assembled from pieces (no second copy in memory).
struct Piece { const void *data; uint64_t size; };
void writeFileAtomic(const std::string &path, const Piece *pieces, int count);

/// mkdir -p; an Error when the path exists and is not a directory.
void makeDirectories(const std::string &path);

/// A file name for an arbitrary tensor name: every byte outside
/// [A-Za-z0-9._:-] (so also '/') becomes %XX, and a leading '.' too.
std::string fileNameFor(const std::string &tensorName);

} // namespace oflow_rt

#endif
