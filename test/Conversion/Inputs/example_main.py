"""Prints an example model's oflow IR with a @main that runs it on the first
batch of the committed data and prints the loss (for mlir-runner).

usage: example_main.py <mlp|cnn|gpt> <bin dir> <source root>
"""
import re
import subprocess
import sys

import numpy as np

ex, bindir, root = sys.argv[1:4]
ir = subprocess.run(
    [f"{bindir}/oflow-compile", f"{root}/examples/{ex}/{ex}.onnx",
     "--emit=mlir", "--print-weights", "-o", "-"],
    check=True, capture_output=True, text=True).stdout
# mlir-opt does not know the oflow dialect's mesh attribute.
ir = re.sub(r"module attributes \{oflow\.mesh = [^}]*\} \{", "module {", ir, 1)
ir = ir.replace("func.func @main(", "func.func @forward(", 1)
signature = re.search(r"func\.func @forward\((.*?)\) ->", ir).group(1)
args = re.findall(r"%arg\d+: (tensor<([0-9x]+)x(\w+)>) \{oflow\.name = \"(\w+)\"\}",
                  signature)

body = []
for i, (ty, dims, elem, name) in enumerate(args):
    shape = [int(d) for d in dims.split("x")]
    data = np.load(f"{root}/examples/{ex}/{name}.npy")[:shape[0]].reshape(shape)
    text = ",".join(str(int(v)) if data.dtype.kind in "iub" else repr(float(v))
                    for v in data.reshape(-1))
    body.append(f"    %a{i} = arith.constant dense<[{text}]> : tensor<{data.size}x{elem}>")
    if len(shape) == 1:
        body.append(f"    %b{i} = tensor.cast %a{i} : {ty} to {ty}")
    else:
        groups = ",".join(str(d) for d in range(len(shape)))
        body.append(f"    %b{i} = tensor.expand_shape %a{i} [[{groups}]] output_shape "
                    f"[{','.join(map(str, shape))}] : tensor<{data.size}x{elem}> into {ty}")
operands = ", ".join(f"%b{i}" for i in range(len(args)))
types = ", ".join(a[0] for a in args)
main = ["  func.func @main() {", *body,
        f"    %loss = call @forward({operands}) : ({types}) -> tensor<f32>",
        "    %u = tensor.cast %loss : tensor<f32> to tensor<*xf32>",
        "    call @printMemrefF32(%u) : (tensor<*xf32>) -> ()",
        "    return", "  }",
        "  func.func private @printMemrefF32(tensor<*xf32>)"]
first = ir.index("\n") + 1
sys.stdout.write(ir[:first] + "\n".join(main) + "\n" + ir[first:])
