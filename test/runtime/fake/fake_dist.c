/*===- fake_dist.c - a hand-written stand-in for a mesh program ------------===*
 *
 * Linear regression pred = x . w, loss = mean((pred - y)^2), SGD momentum
 * 0.9 with lr / (1 + 0.1 * step), as oflow-compile would shard it on a mesh
 * of FAKE_MESH devices (2, or 1 for the single-device twin):
 *   x [8,4] and y [8] split by rows (sbp=S0): data parallel;
 *   w [4] and its momentum split (sbp=S0), ZeRO-style: all_gather w, each
 *   rank computes its rows' loss and gradient, all_reduce the loss,
 *   reduce_scatter the gradient, update the local piece of w.
 * Both builds sum the batch in the same two halves (one per rank on the
 * mesh, both in order on one device), and a sum of two floats does not
 * depend on their order: the mesh must log EXACTLY the single device's
 * numbers. OFLOW_FAKE_EXIT_RANK=r makes rank r _exit(9) at step 3 (a rank
 * that dies mid-run, for the fault tests).
 *===----------------------------------------------------------------------===*/
#include "oflow_rt/abi.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FAKE_MESH
#define FAKE_MESH 1
#endif
enum { B = 8, D = 4, HALVES = 2, M = FAKE_MESH, DL = D / M, BL = B / M };
/* state and io offsets: room for the global sizes, so both builds share them */
enum { W = 0, W_MOM = 64, COUNT = 128 };
enum { X = 0, Y = 128, LOSS = 192, GW = 256, LR = 320, STEP = 384, LR_USED = 448 };

#if FAKE_MESH == 2
#define MESH "mesh 2\n"
#define S0 " sbp=S0"
#else
#define MESH ""
#define S0 ""
#endif

const char oflow_manifest[] =
    "oflow-manifest 1\n"
    "mode train\n"
    "model fake_linear.onnx\n"
    "batch 8\n"
    "state_bytes 192\n"
    "io_bytes 512\n"
    "arena_bytes 64\n" MESH
    "entry train\n"
    "entry grads\n"
    "var w param f32 1 4 0 0" S0 "\n"
    "var w.momentum_buffer optimizer f32 1 4 64 -1" S0 "\n"
    "var num_batches_tracked buffer i64 0 128 -1\n"
    "input x f32 2 8 4 0 normal" S0 "\n"
    "input y f32 1 8 128 normal" S0 "\n"
    "output train loss f32 0 192\n"
    "grad w f32 1 4 256" S0 "\n"
    "scalar lr f32 320\n"
    "scalar step i64 384\n"
    "scalar lr_used f32 448\n"
    "optimizer sgd lr=0.05 momentum=0.9\n";

/* w = {0.1f, -0.2f, 0.3f, 0.0f}: the GLOBAL value; each rank takes its piece. */
const uint8_t oflow_state_init[16] = {0xCD, 0xCC, 0xCC, 0x3D, 0xCD, 0xCC,
                                      0x4C, 0xBE, 0x9A, 0x99, 0x99, 0x3E,
                                      0x00, 0x00, 0x00, 0x00};
const uint64_t oflow_state_init_size = sizeof(oflow_state_init);

#define F(buf, off) ((float *)((buf)->aligned + (off)))

/* The loss of the global batch; gw gets this rank's piece of its gradient. */
static float lossAndGrad(oflow_buffer *state, oflow_buffer *io, float *gw) {
  float w[D], g[D] = {0}, loss = 0;
  oflow_rt_all_gather(OFLOW_DT_F32, F(state, W), w, 1, DL, 0);
  for (int h = 0; h < HALVES / M; ++h) { /* this rank's halves, in order */
    float hl = 0, hg[D] = {0};
    for (int i = h * (B / HALVES); i < (h + 1) * (B / HALVES); ++i) {
      const float *x = F(io, X) + i * D;
      float r = -F(io, Y)[i];
      for (int j = 0; j < D; ++j)
        r += x[j] * w[j];
      hl += r * r;
      for (int j = 0; j < D; ++j)
        hg[j] += 2.0f / B * r * x[j];
    }
    loss += hl;
    for (int j = 0; j < D; ++j)
      g[j] += hg[j];
  }
  oflow_rt_all_reduce(OFLOW_DT_F32, OFLOW_RED_SUM, &loss, &loss, 1, 0);
  oflow_rt_reduce_scatter(OFLOW_DT_F32, OFLOW_RED_SUM, g, gw, 1, DL, 0);
  return loss / B;
}

void _mlir_ciface_oflow_grad_step(oflow_buffer *state, oflow_buffer *io,
                                  oflow_buffer *arena) {
  (void)arena;
  *F(io, LOSS) = lossAndGrad(state, io, F(io, GW));
}

void _mlir_ciface_oflow_train_step(oflow_buffer *state, oflow_buffer *io,
                                   oflow_buffer *arena) {
  (void)arena;
  int64_t step = *(const int64_t *)(io->aligned + STEP);
  const char *die = getenv("OFLOW_FAKE_EXIT_RANK");
  if (die && step == 3 && atoi(die) == (int)oflow_rt_mesh_coord(0))
    _exit(9);
  float gw[DL];
  *F(io, LOSS) = lossAndGrad(state, io, gw);
  float lr = *F(io, LR) / (1.0f + 0.1f * (float)step);
  *F(io, LR_USED) = lr;
  for (int j = 0; j < DL; ++j) {
    F(state, W_MOM)[j] = 0.9f * F(state, W_MOM)[j] + gw[j];
    F(state, W)[j] -= lr * F(state, W_MOM)[j];
  }
  *(int64_t *)(state->aligned + COUNT) += 1;
}
