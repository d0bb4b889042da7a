//===- OFlowSbpInterface.td - SBP signatures of an op -------*- tablegen -*-===//
//
// An op lists the SBP signatures under which each device can run it on its
// local pieces and get its local piece of the single-device result, on one
// mesh axis. The SBP planner chooses among them; boxing fills the gaps.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_SBP_INTERFACE_TD
#define OFLOW_SBP_INTERFACE_TD

include "mlir/IR/OpBase.td"

def OFlow_SbpSignatureOpInterface : OpInterface<"SbpSignatureOpInterface"> {
  let cppNamespace = "::mlir::oflow";
  let description = [{
    SBP signatures of an op on ONE mesh axis of `axisSize` devices: one
    `#oflow.sbp` per operand and per result. `getSbpCandidates` lists them
    from the op's shapes and attributes; the free function
    `getSbpSignatures(op, axisSize)` drops those whose split dims do not
    divide by `axisSize` (divisibility is per mesh axis; several axes
    splitting one tensor axis are the nd-SBP verifier's business).

    A signature whose local work alone does not equal the single-device
    result names the collective the op needs inside (`collective`), e.g.
    batch norm on a split batch all-reduces its statistics.
  }];
  let methods = [
    InterfaceMethod<[{
        Candidate signatures for one mesh axis of `axisSize` devices, before
        the divisibility filter. Always includes all-broadcast.
      }],
      "::llvm::SmallVector<::mlir::oflow::SbpSignature>", "getSbpCandidates",
      (ins "int64_t":$axisSize)>,
  ];
}

#endif // OFLOW_SBP_INTERFACE_TD
