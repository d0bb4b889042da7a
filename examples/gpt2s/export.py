"""Export the GPT-2-small-shaped model to ONNX for the GPU benchmark.

    /usr/bin/python3 examples/gpt2s/export.py --config small|tiny --out DIR

Writes DIR/gpt2s.onnx with its weights as external data in DIR/gpt2s.onnx.data
(so the bundle can carry the graph without the weights), DIR/tokens.npy and
DIR/targets.npy (weights.make_tokens: seeded ids, int64 [rows, T]) and
DIR/config.json. Nothing is committed: bench/gpu_bundle.sh calls this.

The export uses the examples' settings (examples/common.py: opset 17,
training mode, no constant folding, initializers named after the parameters),
then checks that every initializer equals weights.initial_weights() and that
the tied embedding is one initializer. For the tiny config it also compares
the graph's loss (examples/common.run_numpy) with torch's.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
import torch  # noqa: E402

import common  # noqa: E402
import model as M  # noqa: E402
import weights as W  # noqa: E402

OPSET = 17


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", choices=sorted(W.CONFIGS), default="small")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    cfg = W.CONFIGS[args.config]
    os.makedirs(args.out, exist_ok=True)
    onnx_path = os.path.join(args.out, "gpt2s.onnx")
    data_name = "gpt2s.onnx.data"

    t0 = time.time()
    tokens, targets = W.make_tokens(cfg)
    np.save(os.path.join(args.out, "tokens.npy"), tokens)
    np.save(os.path.join(args.out, "targets.npy"), targets)
    model = M.make_model(args.config)
    B = cfg["batch"]
    tmp = onnx_path + ".embedded.tmp"
    # Trace one row (the model reshapes with -1 for the batch, so the graph does
    # not depend on it; tracing 8 x 1024 tokens would hold ~10 GB of attention
    # activations here), then declare the inputs [B, T].
    common.export_loss_model(model, (torch.from_numpy(tokens[:1]), torch.from_numpy(targets[:1])),
                             tmp, ["tokens", "targets"], OPSET)
    proto = onnx.load(tmp)
    os.remove(tmp)
    for vi in proto.graph.input:
        vi.type.tensor_type.shape.dim[0].dim_value = B
    del proto.graph.value_info[:]
    inferred = onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    out_shape = [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]
    assert out_shape == [], out_shape
    sizes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
             for vi in inferred.graph.value_info}
    assert any(s[:1] == [B * cfg["block"]] for s in sizes.values()), "batch did not propagate"

    inits = {i.name: i for i in proto.graph.initializer}
    want = W.spec(cfg)
    assert sorted(inits) == sorted(n for n, _, _, _ in want), \
        sorted(set(inits) ^ {n for n, _, _, _ in want})
    for name, a in W.initial_weights(cfg):
        got = numpy_helper.to_array(inits[name])
        assert got.dtype == a.dtype and np.array_equal(got, a), "initializer %s differs" % name
    uses = [n.op_type for n in proto.graph.node if "wte.weight" in n.input]
    assert sorted(uses) == ["Gather", "Transpose"], uses
    onnx.checker.check_model(proto)
    if args.config == "tiny":
        feeds = {"tokens": tokens[:B], "targets": targets[:B]}
        with torch.no_grad():
            ref = float(model(*[torch.from_numpy(v) for v in feeds.values()]))
        got = float(common.run_numpy(proto, feeds)["loss"])
        print("loss: torch %.7f  onnx(numpy) %.7f" % (ref, got))
        assert abs(ref - got) <= 1e-5 + 1e-4 * abs(ref), (ref, got)

    if os.path.exists(os.path.join(args.out, data_name)):
        os.remove(os.path.join(args.out, data_name))
    onnx.save_model(proto, onnx_path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data_name, size_threshold=0)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(dict(cfg, name=args.config, weight_seed=W.WEIGHT_SEED,
                       num_params=W.num_params(cfg), flops_per_token=W.flops_per_token(cfg),
                       opset=OPSET), f, indent=1, sort_keys=True)
        f.write("\n")
    print("gpt2s %s: %d parameters, %d nodes, exported in %.1f s -> %s" % (
        args.config, W.num_params(cfg), len(proto.graph.node), time.time() - t0, onnx_path))


if __name__ == "__main__":
    main()
