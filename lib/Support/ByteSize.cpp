//===- ByteSize.cpp - sizes in bytes, as people write them ----------------===//
#include "oflow/Support/ByteSize.h"

#include "llvm/ADT/StringExtras.h"

#include <cctype>

#include <cmath>
#include <cstdio>

namespace oflow {

std::optional<int64_t> parseByteSize(llvm::StringRef text) {
  text = text.trim();
  // The unit is the trailing letters ("8e10" is a number, "1.5GB" 1.5 GB).
  size_t unitAt = text.size();
  while (unitAt > 0 && std::isalpha(static_cast<unsigned char>(text[unitAt - 1])))
    --unitAt;
  llvm::StringRef number = text.substr(0, unitAt).trim();
  std::string unit = text.substr(unitAt).lower();
  double value;
  if (number.empty() || number.getAsDouble(value) || !std::isfinite(value) || !(value > 0))
    return std::nullopt;
  static const std::pair<const char *, double> kUnits[] = {
      {"", 1},          {"b", 1},
      {"kb", 1e3},      {"mb", 1e6},      {"gb", 1e9},      {"tb", 1e12},
      {"kib", 0x1p10},  {"mib", 0x1p20},  {"gib", 0x1p30},  {"tib", 0x1p40},
      {"k", 0x1p10},    {"m", 0x1p20},    {"g", 0x1p30},    {"t", 0x1p40}};
  for (auto [name, scale] : kUnits) {
    if (unit != name)
      continue;
    double bytes = std::round(value * scale);
    if (!(bytes >= 1) || bytes > 0x1p62)
      return std::nullopt;
    return static_cast<int64_t>(bytes);
  }
  return std::nullopt;
}

std::string formatByteSize(double bytes) {
  static const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char text[32];
  if (u == 0)
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  else
    std::snprintf(text, sizeof text, std::fabs(bytes) >= 100 ? "%.0f %s"
                                     : std::fabs(bytes) >= 10 ? "%.1f %s"
                                                              : "%.2f %s",
                  bytes, kUnits[u]);
  return text;
}

} // namespace oflow
