/*===- fake_program.c - a hand-written stand-in for oflow-compile's output ===*
 *
 * What the runtime tests link instead of a compiled model: linear regression
 *   pred = x . w + b[tag],   loss = mean((pred - y)^2)
 * trained by SGD with momentum 0.9 and the schedule lr / (1 + 0.1 * step),
 * laid out exactly as abi.h's manifest says, in the form oflow-compile
 * writes it (the default lr on the optimizer line, the grads entry sharing
 * the train entry's loss slot). The `step` scalar drives the
 * schedule, so a resume that fed the wrong step would change the losses.
 * Built three times: as a training program, (-DFAKE_INFER) an inference one,
 * and (-DFAKE_MINIMAL) a training program that lacks what the optional
 * features need: the grads entry point (listed in its manifest, but not
 * defined), the poison scalar, the default learning rate and the model; and
 * it has no inputs (batch 0), like a program whose operands are all weights:
 * its x, tag and y slots stay zero.
 *===----------------------------------------------------------------------===*/
#include "oflow_rt/abi.h"

#include <stdlib.h>
#include <string.h>

enum { B = 8, D = 4, T = 3 };
/* state offsets */
enum { W = 0, BIAS = 64, W_MOM = 128, B_MOM = 192, COUNT = 256 };
/* io offsets */
enum { X = 0, TAG = 128, Y = 192, LOSS = 256, GW = 320, GB = 384, LR = 448,
       STEP = 512, LR_USED = 576, POISON = 640, PRED = 704 };

#define VARS                                                                   \
  "var w param f32 1 4 0 0\n"                                                  \
  "var b param f32 1 3 64 -1\n"                                                \
  "var w.momentum_buffer optimizer f32 1 4 128 -1\n"                           \
  "var b.momentum_buffer optimizer f32 1 3 192 -1\n"                           \
  "var num_batches_tracked buffer i64 0 256 -1\n"

#if defined(FAKE_MINIMAL)
const char oflow_manifest[] =
    "oflow-manifest 1\n"
    "mode train\n"
    "batch 0\n"
    "state_bytes 320\n"
    "io_bytes 768\n"
    "arena_bytes 128\n"
    "entry train\n"
    "entry grads\n" VARS
    "output train loss f32 0 256\n"
    "grad w f32 1 4 320\n"
    "scalar lr f32 448\n"
    "scalar step i64 512\n";
#elif defined(FAKE_INFER)
const char oflow_manifest[] =
    "oflow-manifest 1\n"
    "mode infer\n"
    "model fake_linear.onnx\n"
    "batch 8\n"
    "state_bytes 320\n"
    "io_bytes 768\n"
    "arena_bytes 128\n"
    "entry infer\n" VARS
    "input x f32 2 8 4 0 normal\n"
    "input tag i64 1 8 128 int:0:3\n"
    "output infer y/pred f32 1 8 704\n";
#else
const char oflow_manifest[] =
    "oflow-manifest 1\n"
    "# written by hand for the runtime tests\n"
    "mode train\n"
    "model fake_linear.onnx\n"
    "batch 8\n"
    "state_bytes 320\n"
    "io_bytes 768\n"
    "arena_bytes 128\n"
    "entry train\n"
    "entry grads\n" VARS
    "input x f32 2 8 4 0 normal\n"
    "input tag i64 1 8 128 int:0:3\n"
    "input y f32 1 8 192 normal\n"
    "output train loss f32 0 256\n"
    "output train mae f32 0 704\n"
    "grad w f32 1 4 320\n"
    "grad b f32 1 3 384\n"
    "scalar lr f32 448\n"
    "scalar step i64 512\n"
    "scalar lr_used f32 576\n"
    "scalar poison i8 640\n"
    "plan entry=train peak=32 naive=64 lower_bound=32 buffers=2\n"
    "optimizer sgd lr=0.05 momentum=0.9\n"
    "schedule inverse decay=0.1\n";
#endif

/* w = {0.1f, -0.2f, 0.3f, 0.0f} as little-endian IEEE bytes; b starts at 0. */
const uint8_t oflow_state_init[16] = {0xCD, 0xCC, 0xCC, 0x3D, 0xCD, 0xCC,
                                      0x4C, 0xBE, 0x9A, 0x99, 0x99, 0x3E,
                                      0x00, 0x00, 0x00, 0x00};
const uint64_t oflow_state_init_size = sizeof(oflow_state_init);

#define F(buf, off) ((float *)((buf)->aligned + (off)))

/* Forward pass into the arena; returns the loss, fills the residuals. */
static float forward(oflow_buffer *state, oflow_buffer *io,
                     oflow_buffer *arena, float *resid) {
  float *pred = F(arena, 0);
  const int64_t *tag = (const int64_t *)(io->aligned + TAG);
  oflow_rt_sgemm(0, 0, B, 1, D, 1.0f, F(io, X), D, F(state, W), 1, 0.0f, pred,
                 1);
  float loss = 0;
  for (int i = 0; i < B; ++i) {
    resid[i] = pred[i] + F(state, BIAS)[tag[i]] - F(io, Y)[i];
    loss += resid[i] * resid[i];
  }
  return loss / B;
}

static void gradients(oflow_buffer *io, const float *resid, float *gw,
                      float *gb) {
  const int64_t *tag = (const int64_t *)(io->aligned + TAG);
  memset(gw, 0, D * sizeof(float));
  memset(gb, 0, T * sizeof(float));
  for (int i = 0; i < B; ++i) {
    for (int j = 0; j < D; ++j)
      gw[j] += 2.0f / B * resid[i] * F(io, X)[i * D + j];
    gb[tag[i]] += 2.0f / B * resid[i];
  }
}

/* What a compiled program does in checking mode: dead arena bytes -> NaN. */
static void poison(oflow_buffer *io, oflow_buffer *arena) {
  if (io->aligned[POISON])
    memset(arena->aligned, 0xFF, (size_t)arena->size);
}

#ifndef FAKE_MINIMAL
void _mlir_ciface_oflow_grad_step(oflow_buffer *state, oflow_buffer *io,
                                  oflow_buffer *arena) {
  float resid[B];
  *F(io, LOSS) = forward(state, io, arena, resid);
  gradients(io, resid, F(io, GW), F(io, GB));
  /* A silently wrong gradient on demand, for --check-gradients' test: the
     bias gradient scaled by FAKE_BIAS_GRAD_SCALE. */
  const char *scale = getenv("FAKE_BIAS_GRAD_SCALE");
  if (scale)
    for (int t = 0; t < T; ++t)
      F(io, GB)[t] *= (float)atof(scale);
  poison(io, arena);
}
#endif

void _mlir_ciface_oflow_train_step(oflow_buffer *state, oflow_buffer *io,
                                   oflow_buffer *arena) {
  float resid[B], gw[D], gb[T];
  *F(io, LOSS) = forward(state, io, arena, resid);
#ifndef FAKE_MINIMAL
  float mae = 0; /* a second scalar output, which the runtime logs too */
  for (int i = 0; i < B; ++i)
    mae += resid[i] < 0 ? -resid[i] : resid[i];
  *F(io, PRED) = mae / B;
#endif
  gradients(io, resid, gw, gb);
  int64_t step = *(const int64_t *)(io->aligned + STEP);
  float lr = *F(io, LR) / (1.0f + 0.1f * (float)step);
  *F(io, LR_USED) = lr;
  for (int j = 0; j < D; ++j) {
    F(state, W_MOM)[j] = 0.9f * F(state, W_MOM)[j] + gw[j];
    F(state, W)[j] -= lr * F(state, W_MOM)[j];
  }
  for (int t = 0; t < T; ++t) {
    F(state, B_MOM)[t] = 0.9f * F(state, B_MOM)[t] + gb[t];
    F(state, BIAS)[t] -= lr * F(state, B_MOM)[t];
  }
  *(int64_t *)(state->aligned + COUNT) += 1;
  poison(io, arena);
}

#ifdef FAKE_INFER
void _mlir_ciface_oflow_infer(oflow_buffer *state, oflow_buffer *io,
                              oflow_buffer *arena) {
  float resid[B];
  memset(F(io, Y), 0, B * sizeof(float)); /* no labels: resid = pred */
  forward(state, io, arena, resid);
  memcpy(F(io, PRED), resid, sizeof resid);
}
#endif
