//===- CudaGraphs.cpp - GraphReplay's backend: CUDA stream capture --------===//
//
// Captures the compute stream into a cudaGraph_t, instantiates it, and
// launches it on the same stream (GraphReplay.h says when). The capture is
// thread-local: a call that may not run while the stream is captured fails
// instead of being recorded, which the policy rules out beforehand (calls 1
// and 2 had none) and reports if it happens anyway.
//
//===----------------------------------------------------------------------===//
#include "../GraphReplay.h"
#include "CudaContext.h"

namespace oflow_rt::cuda {
namespace {

class CudaGraphs final : public GraphBackend {
public:
  explicit CudaGraphs(cudaStream_t stream) : stream(stream) {}
  ~CudaGraphs() override { discard(); }

  void beginCapture() override {
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
  }

  bool endCapture(std::string &why) override {
    cudaGraph_t graph = nullptr;
    cudaError_t e = cudaStreamEndCapture(stream, &graph);
    const char *call = "cudaStreamEndCapture";
    if (e == cudaSuccess) {
      call = "cudaGraphInstantiate";
      e = cudaGraphInstantiate(&exec, graph, 0);
      if (e != cudaSuccess)
        exec = nullptr;
    }
    if (graph)
      cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
      cudaGetLastError();
      why = errorText(e, call);
      return false;
    }
    return true;
  }

  void launch() override { check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); }

  void discard() override {
    if (exec)
      cudaGraphExecDestroy(exec);
    exec = nullptr;
  }

private:
  cudaStream_t stream;
  cudaGraphExec_t exec = nullptr;
};

} // namespace

std::unique_ptr<GraphBackend> cudaGraphs(cudaStream_t stream) {
  return std::make_unique<CudaGraphs>(stream);
}

} // namespace oflow_rt::cuda
