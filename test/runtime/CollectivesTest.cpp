//===- CollectivesTest.cpp - abi.h's collectives under mpirun --------------===//
//
//   mpirun -np 4 oflow-collectives-test 2 2
// starts the runtime's ranks on the mesh given as arguments and checks
// every collective on every mesh axis, f32 and i64, sum and max, against
// what each rank computes itself from the other ranks' (seeded) inputs.
// Floats are small multiples of 1/4, so sums are exact in any order.
// Exits 1 after printing each failure.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/Distributed.h"
#include "oflow_rt/abi.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace oflow_rt;

namespace {
int failures = 0;
std::vector<int64_t> mesh;

void expect(bool ok, const std::string &what) {
  if (!ok && ++failures <= 20)
    std::fprintf(stderr, "rank %lld: FAIL: %s\n",
                 static_cast<long long>(worldRank()), what.c_str());
}

// The k-th input element of world rank r in test `t`, exactly representable.
double value(int64_t r, int64_t k, int t) {
  uint64_t z = (r + 1) * 0x9E3779B97F4A7C15ULL ^ (k + 7) * 0xBF58476D1CE4E5B9ULL ^ t;
  z = (z ^ (z >> 31)) * 0x94D049BB133111EBULL;
  return static_cast<double>(static_cast<int64_t>((z >> 33) % 201) - 100) / 4;
}

// World rank of member p of this rank's group along `axis`.
int64_t member(int64_t axis, int64_t p) {
  std::vector<int64_t> c = meshCoords();
  c[axis] = p;
  int64_t r = 0;
  for (size_t a = 0; a < mesh.size(); ++a)
    r = r * mesh[a] + c[a];
  return r;
}

template <typename T> struct Kind;
template <> struct Kind<float> { static constexpr int dt = OFLOW_DT_F32; static constexpr const char *name = "f32"; };
template <> struct Kind<int64_t> { static constexpr int dt = OFLOW_DT_I64; static constexpr const char *name = "i64"; };

template <typename T> T val(int64_t r, int64_t k, int t) {
  double v = value(r, k, t);
  return std::is_same<T, float>::value ? static_cast<T>(v) : static_cast<T>(v * 4);
}

template <typename T> void testAxis(int64_t axis, int t) {
  int64_t n = mesh[axis], c = meshCoords()[axis], me = worldRank();
  std::string where = std::string(Kind<T>::name) + " axis " + std::to_string(axis);
  expect(oflow_rt_mesh_coord(axis) == c, "mesh_coord " + where);

  for (int op : {OFLOW_RED_SUM, OFLOW_RED_MAX}) {
    const int64_t count = 7;
    std::vector<T> in(count), out(count), want(count);
    for (int64_t k = 0; k < count; ++k) {
      in[k] = val<T>(me, k, t + op);
      for (int64_t p = 0; p < n; ++p) {
        T v = val<T>(member(axis, p), k, t + op);
        want[k] = p == 0 ? v : op == OFLOW_RED_SUM ? want[k] + v : std::max(want[k], v);
      }
    }
    oflow_rt_all_reduce(Kind<T>::dt, op, in.data(), out.data(), count, axis);
    expect(out == want, "all_reduce op " + std::to_string(op) + " " + where);
    oflow_rt_all_reduce(Kind<T>::dt, op, in.data(), in.data(), count, axis);
    expect(in == want, "all_reduce in place op " + std::to_string(op) + " " + where);

    for (int64_t outer : {1, 3}) {
      const int64_t chunk = 4;
      std::vector<T> rin(outer * n * chunk), rout(outer * chunk), rwant(outer * chunk);
      for (int64_t i = 0; i < outer * n * chunk; ++i)
        rin[i] = val<T>(me, i, t + 10 + op);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < chunk; ++k)
          for (int64_t p = 0; p < n; ++p) {
            T v = val<T>(member(axis, p), o * n * chunk + c * chunk + k, t + 10 + op);
            T &w = rwant[o * chunk + k];
            w = p == 0 ? v : op == OFLOW_RED_SUM ? w + v : std::max(w, v);
          }
      oflow_rt_reduce_scatter(Kind<T>::dt, op, rin.data(), rout.data(), outer, chunk, axis);
      expect(rout == rwant, "reduce_scatter outer " + std::to_string(outer) + " op " +
                                std::to_string(op) + " " + where);
    }
  }

  for (int64_t outer : {1, 3}) {
    const int64_t chunk = 5;
    std::vector<T> in(outer * chunk), out(outer * n * chunk), want(outer * n * chunk);
    for (int64_t i = 0; i < outer * chunk; ++i)
      in[i] = val<T>(me, i, t + 20);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t p = 0; p < n; ++p)
        for (int64_t k = 0; k < chunk; ++k)
          want[o * n * chunk + p * chunk + k] = val<T>(member(axis, p), o * chunk + k, t + 20);
    oflow_rt_all_gather(Kind<T>::dt, in.data(), out.data(), outer, chunk, axis);
    expect(out == want, "all_gather outer " + std::to_string(outer) + " " + where);
  }

  for (int s : {1, 3}) {
    int g = 4 - s;
    int64_t d[5] = {2, 3, 2, 3, 2};
    d[s] = 2 * n;
    int64_t total = d[0] * d[1] * d[2] * d[3] * d[4];
    std::vector<T> in(total), out(total), want(total);
    for (int64_t i = 0; i < total; ++i)
      in[i] = val<T>(me, i, t + 30 + s);
    int64_t o[5] = {d[0], d[1], d[2], d[3], d[4]};
    o[s] /= n;
    o[g] *= n;
    // Walk out's indices; find the source element of member p.
    int64_t i[5];
    for (i[0] = 0; i[0] < o[0]; ++i[0])
      for (i[1] = 0; i[1] < o[1]; ++i[1])
        for (i[2] = 0; i[2] < o[2]; ++i[2])
          for (i[3] = 0; i[3] < o[3]; ++i[3])
            for (i[4] = 0; i[4] < o[4]; ++i[4]) {
              int64_t j[5] = {i[0], i[1], i[2], i[3], i[4]};
              int64_t p = i[g] / d[g];
              j[g] = i[g] % d[g];
              j[s] = c * (d[s] / n) + i[s];
              int64_t src = (((j[0] * d[1] + j[1]) * d[2] + j[2]) * d[3] + j[3]) * d[4] + j[4];
              int64_t dst = (((i[0] * o[1] + i[1]) * o[2] + i[2]) * o[3] + i[3]) * o[4] + i[4];
              want[dst] = val<T>(member(axis, p), src, t + 30 + s);
            }
    oflow_rt_all_to_all(Kind<T>::dt, in.data(), out.data(), d[0], d[1], d[2], d[3],
                        d[4], s, axis);
    expect(out == want, "all_to_all scatter " + std::to_string(s) + " " + where);
  }
}
} // namespace

int main(int argc, char **argv) {
  std::string text = "oflow-manifest 1\nmode train\nmesh";
  for (int i = 1; i < argc; ++i)
    text += std::string(" ") + argv[i];
  Manifest m = parseManifest(text + "\n");
  startDistributed(m, argv[0], false);
  mesh = m.mesh;
  if (worldSize() != m.meshSize()) {
    std::fprintf(stderr, "not distributed\n");
    return 1;
  }
  for (size_t a = 0; a < mesh.size(); ++a) {
    testAxis<float>(a, 100 * a);
    testAxis<int64_t>(a, 100 * a + 50);
  }
  bool ok = allRanksOk(failures == 0);
  if (isRoot())
    std::printf("collectives on mesh %s: %s\n", m.meshText().c_str(),
                ok ? "all checks passed" : "FAILED");
  finishDistributed();
  return ok ? 0 : 1;
}
