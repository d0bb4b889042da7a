//===- ByteSize.h - sizes in bytes, as people write them -------*- C++ -*-===//
//
// `--memory-limit 76GiB`: binary (KiB, MiB, GiB, TiB) and decimal (KB, MB,
// GB, TB) units, case-insensitive, a plain number for bytes; and the way
// oflow prints sizes back.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_SUPPORT_BYTESIZE_H
#define OFLOW_SUPPORT_BYTESIZE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace oflow {

/// Bytes in `text` ("512MiB", "1.5 GB", "4096"); std::nullopt for anything
/// else: an unknown unit, a negative, zero or non-finite size, or one past
/// 2^62 bytes.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// "1.50 GiB", "12.0 MiB", "512 B": binary units, three significant digits.
std::string formatByteSize(double bytes);

} // namespace oflow

#endif // OFLOW_SUPPORT_BYTESIZE_H
