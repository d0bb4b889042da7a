//===- GradCheck.cpp - ./train --check-gradients ---------------------------===//
//
// The executable's own gradients against central differences of its own
// loss: for each trained tensor W, a random unit direction v, the projection
// g.v of the gradient the program computes, and (L(W + h v) - L(W - h v)) / 2h
// from the same program's loss, with the state restored after every call.
// In float32 the loss carries rounding noise, so the difference quotient is
// taken at a ladder of steps h and the pair of neighbouring steps that agree
// best gives the estimate; their disagreement plus the loss's rounding noise
// over h is the smallest error the check can resolve for that tensor.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/GradCheck.h"

#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <cstring>
#include <map>
#include <random>

namespace oflow_rt {

namespace {

/// One tensor's result. Errors are relative to the larger of |g.v| and the
/// projection a random direction typically gets (||g|| / sqrt(n)), so a
/// tensor whose gradient is zero is judged against the model's scale.
struct TensorCheck {
  std::string name;
  double projection = 0, typical = 0, estimate = 0, error = 0, resolution = 0;
};

double l2norm(const std::vector<float> &w) {
  double s = 0;
  for (float x : w)
    s += double(x) * x;
  return std::sqrt(s);
}

} // namespace

int checkGradients(Program &p, const GradCheckOptions &o,
                   const std::function<void()> &prepareCall) {
  const Manifest &m = p.manifest;
  if (worldSize() != 1)
    throw usageError("--check-gradients runs on one device (this job has " +
                     std::to_string(worldSize()) +
                     " ranks); run the executable without mpirun");
  const OutputRecord *lossRecord = m.lossOutput("grads");
  if (!lossRecord)
    throw Error("--check-gradients: the program has no loss output");
  auto loss = [&]() {
    prepareCall();
    p.call("grads");
    return p.readValue(DType::F32, lossRecord->offset);
  };

  std::vector<uint8_t> saved(p.stateForRead(), p.stateForRead() + m.stateBytes);
  auto restore = [&] {
    std::memcpy(p.stateForWrite(), saved.data(), saved.size());
  };
  double base = loss();
  if (!std::isfinite(base))
    throw Error("--check-gradients: the loss is not finite at the start");
  // The gradients of this very call, copied before the probes overwrite io.
  std::map<std::string, std::vector<float>> grads;
  for (const TensorSlot &g : m.grads) {
    if (g.dtype != DType::F32)
      throw Error("--check-gradients: gradient of '" + g.name + "' is " +
                  dtypeName(g.dtype) + "; the check needs a float32 program");
    std::vector<float> v(numElements(g.dims));
    std::memcpy(v.data(), p.io.data() + g.offset, v.size() * 4);
    grads[g.name] = std::move(v);
  }
  restore();
  // The loss's own rounding noise: a few ulps of a float32 sum.
  double noise = 4 * std::ldexp(std::fabs(base), -23);

  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal;
  std::vector<TensorCheck> results;
  for (const TensorSlot &g : m.grads) {
    const VarRecord *var = nullptr;
    for (const VarRecord &v : m.vars)
      if (v.name == g.name)
        var = &v;
    if (!var || var->dtype != DType::F32)
      throw Error("--check-gradients: no float32 variable for the gradient of '" +
                  g.name + "'");
    const std::vector<float> &grad = grads[g.name];
    size_t n = grad.size();
    std::vector<double> dir(n);
    double norm = 0;
    for (double &d : dir) {
      d = normal(rng);
      norm += d * d;
    }
    norm = std::sqrt(norm);
    double projection = 0;
    for (size_t i = 0; i < n; ++i) {
      dir[i] /= norm;
      projection += dir[i] * grad[i];
    }
    std::vector<float> w0(n);
    std::memcpy(w0.data(), saved.data() + var->offset, n * 4);
    double scale = std::max(l2norm(w0), 1.0);

    auto quotient = [&](double h) {
      auto at = [&](double sign) {
        float *w = reinterpret_cast<float *>(p.stateForWrite() + var->offset);
        for (size_t i = 0; i < n; ++i)
          w[i] = static_cast<float>(w0[i] + sign * h * dir[i]);
        double l = loss();
        restore();
        return l;
      };
      return (at(1) - at(-1)) / (2 * h);
    };
    // Steps from 1e-1 of the tensor's norm down by 4x: large steps have
    // truncation error, small ones rounding error.
    std::vector<double> steps, estimates;
    for (int k = 0; k < o.levels; ++k) {
      steps.push_back(1e-1 * scale * std::pow(0.25, k));
      estimates.push_back(quotient(steps.back()));
    }
    TensorCheck c;
    c.name = g.name;
    c.projection = projection;
    c.typical = l2norm(grad) / std::sqrt(double(n));
    // The neighbouring pair with the least uncertainty: their disagreement
    // (truncation, and rounding that happens to differ) plus the loss's
    // rounding noise over the smaller step.
    size_t best = 1;
    double bestUncertainty = INFINITY;
    for (size_t k = 1; k < estimates.size(); ++k) {
      double u = std::fabs(estimates[k - 1] - estimates[k]) + noise / steps[k];
      if (u < bestUncertainty) {
        bestUncertainty = u;
        best = k;
      }
    }
    c.estimate = estimates[best];
    c.error = std::fabs(c.estimate - projection);
    c.resolution = bestUncertainty;
    results.push_back(c);
  }
  restore();

  // Relative to the larger of |g.v|, the projection a random direction
  // typically gets (||g|| / sqrt(n)), and 1% of the model's typical one: a
  // tensor whose gradient is zero (a bias before batch norm) is judged
  // against the model's scale, not its own.
  double model = 0;
  for (const TensorCheck &c : results)
    model += c.typical * c.typical;
  model = std::sqrt(model / std::max<size_t>(results.size(), 1));
  std::vector<double> resolutions;
  for (TensorCheck &c : results) {
    double denom = std::max({std::fabs(c.projection), c.typical, 1e-2 * model, 1e-30});
    c.error /= denom;
    c.resolution /= denom;
    resolutions.push_back(c.resolution);
  }

  std::vector<const TensorCheck *> order;
  for (const TensorCheck &c : results)
    order.push_back(&c);
  std::sort(order.begin(), order.end(), [](auto *a, auto *b) {
    return a->error - a->resolution > b->error - b->resolution;
  });
  int failed = 0;
  for (const TensorCheck &c : results)
    if (c.error > o.tolerance && c.error > 2 * c.resolution)
      ++failed;
  std::sort(resolutions.begin(), resolutions.end());
  double median = resolutions.empty() ? 0 : resolutions[resolutions.size() / 2];
  double worst = resolutions.empty() ? 0 : resolutions.back();
  if (isRoot()) {
    std::fprintf(stderr,
                 "check-gradients: %zu tensors, loss %.9g, central differences "
                 "along one random direction each\n",
                 results.size(), base);
    std::fprintf(stderr, "  %-48s %13s %13s %9s %9s\n", "tensor (worst first)",
                 "g.v", "difference", "error", "resolves");
    for (size_t i = 0; i < order.size() && i < size_t(o.show); ++i) {
      const TensorCheck &c = *order[i];
      bool bad = c.error > o.tolerance && c.error > 2 * c.resolution;
      std::fprintf(stderr, "  %-48s %13.6e %13.6e %9.2e %9.2e%s\n",
                   c.name.c_str(), c.projection, c.estimate, c.error,
                   c.resolution, bad ? "  FAIL" : "");
    }
    std::fprintf(stderr,
                 "check-gradients: %d of %zu tensors above the tolerance %.3g; "
                 "the smallest error it resolves: %.1e (median over tensors; "
                 "worst %.1e), below that float32 rounding hides it\n",
                 failed, results.size(), o.tolerance, median, worst);
  }
  return failed ? 1 : 0;
}

} // namespace oflow_rt
