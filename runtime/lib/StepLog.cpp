//===- StepLog.cpp - per-step metrics on stdout and JSON ------------------===//
#include "oflow_rt/StepLog.h"
#include "oflow_rt/Error.h"

#include <cmath>
#include <cstdlib>

namespace oflow_rt {

std::string floatText(float v) {
  if (!std::isfinite(v))
    return "null";
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v)
      break;
  }
  return buf;
}

namespace {
std::string seconds(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.2fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) / 60 % 60);
  return buf;
}
} // namespace

StepLog::StepLog(const std::string &jsonPath, int64_t batch,
                 int64_t firstStep, int64_t lastStep)
    : jsonPath(jsonPath), batch(batch), firstStep(firstStep),
      lastStep(lastStep), start(std::chrono::steady_clock::now()) {
  if (!jsonPath.empty()) {
    jsonFile = std::fopen(jsonPath.c_str(), "w");
    if (!jsonFile)
      throw Error(jsonPath + ": cannot create: " + errnoText());
  }
}

StepLog::~StepLog() {
  if (jsonFile)
    std::fclose(jsonFile);
}

void StepLog::json(const std::string &line) {
  if (!jsonFile)
    return;
  std::string text = line;
  if (jsonExtra && !text.empty() && text.back() == '}')
    text.insert(text.size() - 1, jsonExtra());
  // Flushed per line: a killed run keeps every step it logged.
  if (std::fprintf(jsonFile, "%s\n", text.c_str()) < 0 ||
      std::fflush(jsonFile) != 0)
    throw Error(jsonPath + ": write failed: " + errnoText());
}

namespace {
// A JSON string literal (names may hold any byte).
std::string jsonString(const std::string &s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      r += buf;
    } else {
      r += static_cast<char>(c);
    }
  }
  return r + "\"";
}
} // namespace

void StepLog::step(int64_t k, float loss, float lr,
                   const std::vector<std::pair<std::string, float>> &extra) {
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start).count();
  int64_t done = k + 1 - firstStep;
  double rate = elapsed > 0 ? done * batch / elapsed : 0;
  double eta = done > 0 ? elapsed / done * (lastStep - k) : 0;
  char rateText[32];
  std::snprintf(rateText, sizeof rateText, "%.1f", rate);
  std::string more, moreJson;
  for (const auto &[name, value] : extra) {
    more += "  " + name + " " + floatText(value);
    moreJson += ", " + jsonString(name) + ": " + floatText(value);
  }
  std::printf("step %lld  loss %s%s  lr %s  %s samples/s  elapsed %s  eta %s\n",
              static_cast<long long>(k), floatText(loss).c_str(), more.c_str(),
              floatText(lr).c_str(), rateText, seconds(elapsed).c_str(),
              seconds(eta).c_str());
  std::fflush(stdout);
  char timing[96];
  std::snprintf(timing, sizeof timing,
                ", \"samples_per_s\": %.3f, \"elapsed_s\": %.6f}", rate, elapsed);
  json("{\"step\": " + std::to_string(k) + ", \"loss\": " + floatText(loss) +
       moreJson + ", \"lr\": " + floatText(lr) + timing);
}

void StepLog::eval(int64_t k, float evalLoss, int64_t batches) {
  std::printf("eval after step %lld  eval_loss %s  (%lld batches)\n",
              static_cast<long long>(k), floatText(evalLoss).c_str(),
              static_cast<long long>(batches));
  std::fflush(stdout);
  json("{\"step\": " + std::to_string(k) +
       ", \"eval_loss\": " + floatText(evalLoss) +
       ", \"eval_batches\": " + std::to_string(batches) + "}");
}

} // namespace oflow_rt
