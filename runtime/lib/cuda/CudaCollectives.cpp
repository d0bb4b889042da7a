//===- CudaCollectives.cpp - abi.h's collectives over NCCL (CUDA target) --===//
//
// Device pointers; one NCCL communicator per mesh axis (CudaDevice.cpp);
// everything enqueued on the compute stream, in program order, so no event
// or extra synchronization is needed (and no overlap of communication with
// computation either). abi.h's [outer][member][chunk] layouts are packed to
// and from NCCL's [member][...] blocks with strided copies (CommLayout.h)
// through the context's device scratch. Without a mesh, or on an axis of
// size 1, each collective is a device copy.
//
//===----------------------------------------------------------------------===//
#include "../CommLayout.h"
#include "../GraphReplay.h"
#include "../MpiWorld.h"
#include "../CollectiveWatchdog.h"
#include "CudaContext.h"
#include "Profile.h"
#include "oflow_rt/abi.h"

using namespace oflow_rt;
using namespace oflow_rt::cuda;

namespace {
ncclDataType_t ncclType(int64_t dtype, int64_t *elem) {
  switch (dtype) {
  case OFLOW_DT_F32: *elem = 4; return ncclFloat32;
  case OFLOW_DT_F64: *elem = 8; return ncclFloat64;
  case OFLOW_DT_I32: *elem = 4; return ncclInt32;
  case OFLOW_DT_I64: *elem = 8; return ncclInt64;
  case OFLOW_DT_I8: *elem = 1; return ncclInt8;
  }
  fatal("collective with unknown dtype " + std::to_string(dtype));
}

ncclRedOp_t ncclOp(int64_t op) {
  if (op == OFLOW_RED_SUM)
    return ncclSum;
  if (op == OFLOW_RED_MAX)
    return ncclMax;
  fatal("collective with unknown reduction " + std::to_string(op));
}

// The communicator of `axis` and its size, or null when the collective is a
// copy (no mesh, an axis of size 1). CudaDevice makes one per axis of size
// > 1; the GPU check also installs one-rank communicators to test NCCL.
ncclComm_t commOf(Context &ctx, int64_t axis, const char *what, int64_t *n) {
  detail::axisSize(axis, what); // checks the axis
  ncclComm_t c = axis < static_cast<int64_t>(ctx.axisComms.size())
                     ? ctx.axisComms[axis]
                     : nullptr;
  if (c) {
    int count = 0;
    check(ncclCommCount(c, &count), "ncclCommCount");
    *n = count;
  }
  return c;
}

void copyOnStream(Context &ctx, void *dst, const void *src, int64_t bytes,
                  const char *what) {
  if (dst == src || bytes <= 0)
    return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx.stream),
        what);
}

void runCopies(Context &ctx, const std::vector<Copy2D> &copies,
               const void *src, void *dst, const char *what) {
  const uint8_t *s = static_cast<const uint8_t *>(src);
  uint8_t *d = static_cast<uint8_t *>(dst);
  for (const Copy2D &c : copies) {
    if (c.height == 1) {
      check(cudaMemcpyAsync(d + c.dstOffset, s + c.srcOffset, c.width,
                            cudaMemcpyDeviceToDevice, ctx.stream),
            what);
    } else if (c.srcPitch < (int64_t(1) << 31) && c.dstPitch < (int64_t(1) << 31)) {
      check(cudaMemcpy2DAsync(d + c.dstOffset, c.dstPitch, s + c.srcOffset,
                              c.srcPitch, c.width, c.height,
                              cudaMemcpyDeviceToDevice, ctx.stream),
            what);
    } else { // pitches past cudaMemcpy2D's limit: row by row
      for (int64_t r = 0; r < c.height; ++r)
        check(cudaMemcpyAsync(d + c.dstOffset + r * c.dstPitch,
                              s + c.srcOffset + r * c.srcPitch, c.width,
                              cudaMemcpyDeviceToDevice, ctx.stream),
              what);
    }
  }
}
/// Marks an NCCL call for --collective-timeout while it is enqueued.
class Enqueued {
public:
  Enqueued(Context &ctx, const char *what, int64_t axis) : ctx(ctx) {
    if (ctx.collectives)
      ctx.collectives->begin(what, axis);
  }
  ~Enqueued() {
    if (ctx.collectives)
      ctx.collectives->end();
  }

private:
  Context &ctx;
};

/// Why an entry with collectives runs without a CUDA graph (GraphReplay.h).
constexpr const char *kCollectiveNote =
    "a collective (graphs of the work between collectives are not built yet)";
} // namespace

extern "C" void oflow_rt_all_reduce(int64_t dtype, int64_t op, const void *in,
                                    void *out, int64_t count,
                                    int64_t mesh_axis) {
  Context &ctx = context("oflow_rt_all_reduce");
  noteUncapturable(kCollectiveNote);
  ProfileScope scope(ctx.stream, "all_reduce");
  int64_t elem = 0;
  ncclDataType_t t = ncclType(dtype, &elem);
  ncclRedOp_t o = ncclOp(op);
  int64_t n = 1;
  ncclComm_t comm = commOf(ctx, mesh_axis, "all_reduce", &n);
  if (!comm) {
    copyOnStream(ctx, out, in, count * elem, "cudaMemcpyAsync (all_reduce)");
    return;
  }
  if (count <= 0)
    return;
  Enqueued watched(ctx, "all_reduce", mesh_axis);
  check(ncclAllReduce(in, out, count, t, o, comm, ctx.stream), "ncclAllReduce");
}

extern "C" void oflow_rt_all_gather(int64_t dtype, const void *in, void *out,
                                    int64_t outer, int64_t chunk,
                                    int64_t mesh_axis) {
  Context &ctx = context("oflow_rt_all_gather");
  noteUncapturable(kCollectiveNote);
  ProfileScope scope(ctx.stream, "all_gather");
  int64_t elem = 0;
  ncclDataType_t t = ncclType(dtype, &elem);
  int64_t n = 1;
  ncclComm_t comm = commOf(ctx, mesh_axis, "all_gather", &n);
  if (!comm) {
    copyOnStream(ctx, out, in, outer * chunk * elem, "cudaMemcpyAsync (all_gather)");
    return;
  }
  if (outer * chunk <= 0)
    return;
  Enqueued watched(ctx, "all_gather", mesh_axis);
  if (outer == 1) { // NCCL's [member][chunk] is out's layout
    check(ncclAllGather(in, out, chunk, t, comm, ctx.stream), "ncclAllGather");
    return;
  }
  void *tmp = ctx.scratchOf(n * outer * chunk * elem);
  check(ncclAllGather(in, tmp, outer * chunk, t, comm, ctx.stream), "ncclAllGather");
  runCopies(ctx, allGatherUnpack(n, outer, chunk * elem), tmp, out,
            "cudaMemcpy2DAsync (all_gather unpack)");
}

extern "C" void oflow_rt_reduce_scatter(int64_t dtype, int64_t op,
                                        const void *in, void *out,
                                        int64_t outer, int64_t chunk,
                                        int64_t mesh_axis) {
  Context &ctx = context("oflow_rt_reduce_scatter");
  noteUncapturable(kCollectiveNote);
  ProfileScope scope(ctx.stream, "reduce_scatter");
  int64_t elem = 0;
  ncclDataType_t t = ncclType(dtype, &elem);
  ncclRedOp_t o = ncclOp(op);
  int64_t n = 1;
  ncclComm_t comm = commOf(ctx, mesh_axis, "reduce_scatter", &n);
  if (!comm) {
    copyOnStream(ctx, out, in, outer * chunk * elem,
                 "cudaMemcpyAsync (reduce_scatter)");
    return;
  }
  if (outer * chunk <= 0)
    return;
  const void *send = in;
  if (outer != 1) {
    void *tmp = ctx.scratchOf(n * outer * chunk * elem);
    runCopies(ctx, reduceScatterPack(n, outer, chunk * elem), in, tmp,
              "cudaMemcpy2DAsync (reduce_scatter pack)");
    send = tmp;
  }
  Enqueued watched(ctx, "reduce_scatter", mesh_axis);
  check(ncclReduceScatter(send, out, outer * chunk, t, o, comm, ctx.stream),
        "ncclReduceScatter");
}

extern "C" void oflow_rt_all_to_all(int64_t dtype, const void *in, void *out,
                                    int64_t d0, int64_t d1, int64_t d2,
                                    int64_t d3, int64_t d4,
                                    int64_t scatter_dim, int64_t mesh_axis) {
  Context &ctx = context("oflow_rt_all_to_all");
  noteUncapturable(kCollectiveNote);
  ProfileScope scope(ctx.stream, "all_to_all");
  int64_t elem = 0;
  ncclDataType_t t = ncclType(dtype, &elem);
  if (scatter_dim != 1 && scatter_dim != 3)
    fatal("all_to_all with scatter dim " + std::to_string(scatter_dim) +
          " (want 1 or 3)");
  int64_t total = d0 * d1 * d2 * d3 * d4;
  if (total == 0)
    return;
  int64_t n = 1;
  ncclComm_t comm = commOf(ctx, mesh_axis, "all_to_all", &n);
  if (!comm) {
    copyOnStream(ctx, out, in, total * elem, "cudaMemcpyAsync (all_to_all)");
    return;
  }
  int64_t d[5] = {d0, d1, d2, d3, d4};
  int s = static_cast<int>(scatter_dim);
  if (d[s] % n != 0)
    fatal("all_to_all: dim " + std::to_string(s) + " (" + std::to_string(d[s]) +
          ") does not divide over " + std::to_string(n) + " ranks");
  int64_t bytes = total * elem, chunk = total / n;
  uint8_t *send = static_cast<uint8_t *>(ctx.scratchOf(2 * bytes));
  uint8_t *recv = send + bytes;
  runCopies(ctx, allToAllPack(d, s, n, elem), in, send,
            "cudaMemcpy2DAsync (all_to_all pack)");
  Enqueued watched(ctx, "all_to_all", mesh_axis);
  check(ncclGroupStart(), "ncclGroupStart");
  for (int64_t p = 0; p < n; ++p) {
    check(ncclSend(send + p * chunk * elem, chunk, t, static_cast<int>(p), comm,
                   ctx.stream),
          "ncclSend (all_to_all)");
    check(ncclRecv(recv + p * chunk * elem, chunk, t, static_cast<int>(p), comm,
                   ctx.stream),
          "ncclRecv (all_to_all)");
  }
  check(ncclGroupEnd(), "ncclGroupEnd (all_to_all)");
  runCopies(ctx, allToAllUnpack(d, s, n, elem), recv, out,
            "cudaMemcpy2DAsync (all_to_all unpack)");
}
