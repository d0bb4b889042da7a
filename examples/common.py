"""Shared helpers for the example export scripts (examples/*/export.py).

* `export_loss_model` - torch.onnx.export with the settings every example uses.
* `WithCrossEntropy`  - a classifier and its mean cross-entropy as one module
                        (how the tests and benchmarks export stock models).
* `check_exported`    - onnx.checker + strict shape inference + a summary
                        (op types, initializers, inputs/outputs) + a check that
                        the initializers equal the module's initial state.
* `run_numpy`         - a tiny forward-only NumPy interpreter for exactly the
                        ONNX ops these examples produce.  Debian's onnx 1.12
                        has no `onnx.reference` and there is no onnxruntime
                        here, so this is how the scripts confirm that the
                        exported graph computes the same loss as PyTorch.
                        It follows the ONNX operator specs (not PyTorch).
"""
import copy
import hashlib
import math
import os

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference
import torch


# --------------------------------------------------------------------------- export


class WithCrossEntropy(torch.nn.Module):
    """`net(x)`'s mean cross-entropy against labels `y`: the training-mode
    graph of a stock classifier (torchvision's) with its loss."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, y):
        return torch.nn.functional.cross_entropy(self.net(x), y)

def export_loss_model(model, args, path, input_names, opset):
    """Export `model(*args) -> scalar loss` to `path` (initializers embedded).

    Tracing runs forward() once, and in training mode that updates BatchNorm
    running statistics (and num_batches_tracked); torch then serialises the
    *updated* buffers.  So a deep copy is exported (the caller's module is left
    untouched) and afterwards every initializer that differs from the caller's
    state_dict is restored from it, keeping the .onnx equal to make_model().
    Parameters are never affected (asserted); only buffers are restored.
    """
    state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    params = {k for k, _ in model.named_parameters()}
    m = copy.deepcopy(model)
    torch.onnx.export(
        m, tuple(args), path,
        export_params=True,
        keep_initializers_as_inputs=False,
        opset_version=opset,
        training=torch.onnx.TrainingMode.TRAINING,
        # Constant folding would e.g. fold Transpose(weight) into a new unnamed
        # initializer, losing parameter names and breaking weight tying.
        do_constant_folding=False,
        input_names=list(input_names),
        output_names=["loss"],
        dynamic_axes=None,
    )
    proto = onnx.load(path)
    restored = []
    for i, init in enumerate(proto.graph.initializer):
        if init.name in state and not np.array_equal(numpy_helper.to_array(init), state[init.name]):
            assert init.name not in params, "parameter %r changed during export" % init.name
            proto.graph.initializer[i].CopyFrom(numpy_helper.from_array(state[init.name], init.name))
            restored.append(init.name)
    if restored:
        print("restored initial values of buffers updated by the tracing forward pass:", restored)
        onnx.save(proto, path)


# --------------------------------------------------------------------------- checks

def _shape_of(value_info):
    t = value_info.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]
    return onnx.TensorProto.DataType.Name(t.elem_type), dims


def check_exported(path, model):
    """Validate the .onnx at `path` against the torch `model`; print and return a summary."""
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    inferred = shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    onnx.checker.check_model(inferred)

    g = inferred.graph
    # Every intermediate value must get a fully static shape.
    known = {vi.name: _shape_of(vi) for vi in list(g.value_info) + list(g.input) + list(g.output)}
    for init in g.initializer:
        known[init.name] = (onnx.TensorProto.DataType.Name(init.data_type), list(init.dims))
    missing = []
    for node in g.node:
        for out in node.output:
            if not out:
                continue
            used = any(out in n.input for n in g.node) or out in [o.name for o in g.output]
            if used and (out not in known or any(not isinstance(d, int) for d in known[out][1])):
                missing.append(out)
    assert not missing, "values without a static inferred shape: %s" % missing

    # Initializers == the module's state_dict (same names, same values).
    state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for name, arr in inits.items():
        assert name in state, "initializer %r is not a module parameter/buffer" % name
        assert arr.dtype == state[name].dtype and arr.shape == state[name].shape, name
        assert np.array_equal(arr, state[name]), "initializer %r differs from make_model()" % name
    params = {k for k, _ in model.named_parameters()}
    missing_params = params - set(inits)
    assert not missing_params, "parameters not exported: %s" % sorted(missing_params)

    uses = {}
    for node in g.node:
        for i in node.input:
            if i in inits:
                uses.setdefault(i, []).append(node.op_type)

    summary = {
        "opset": [(o.domain or "ai.onnx", o.version) for o in proto.opset_import],
        "ops": sorted({n.op_type for n in g.node}),
        "num_nodes": len(g.node),
        "inputs": [(i.name,) + _shape_of(i) for i in g.input],
        "outputs": [(o.name,) + _shape_of(o) for o in g.output],
        "initializers": [(i.name, onnx.TensorProto.DataType.Name(i.data_type), list(i.dims),
                          "param" if i.name in params else "buffer", uses.get(i.name, []))
                         for i in g.initializer],
    }
    print("opset:", summary["opset"])
    print("nodes:", summary["num_nodes"])
    for name, dt, dims in summary["inputs"]:
        print("input  %-8s %s %s" % (name, dt, dims))
    for name, dt, dims in summary["outputs"]:
        print("output %-8s %s %s" % (name, dt, dims))
    print("initializers (%d):" % len(summary["initializers"]))
    for name, dt, dims, kind, used_by in summary["initializers"]:
        print("  %-32s %-6s %-12s %-6s used by %s" % (name, dt, dims, kind, used_by))
    return summary


def compare_with_torch(path, model, feeds, rtol=1e-4, atol=1e-5):
    """Run the .onnx with run_numpy on `feeds` and compare the loss with torch."""
    proto = onnx.load(path)
    m = copy.deepcopy(model)
    with torch.no_grad():
        ref = float(m(*[torch.from_numpy(v) for v in feeds.values()]))
    got = float(run_numpy(proto, feeds)["loss"])
    print("loss: torch %.7f  onnx(numpy) %.7f  |diff| %.2e" % (ref, got, abs(ref - got)))
    assert abs(ref - got) <= atol + rtol * abs(ref), (ref, got)
    try:  # onnx >= 1.13 only; Debian's 1.12 has none.
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        print("onnx.reference not available (onnx %s): skipped" % onnx.__version__)
    else:
        out = float(ReferenceEvaluator(proto).run(None, feeds)[0])
        print("loss: onnx.reference %.7f" % out)
        assert abs(ref - out) <= atol + rtol * abs(ref), (ref, out)
    return ref


def report_files(paths):
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        size = len(data)
        assert size < 2 * 1024 * 1024, "%s is %d bytes (limit 2 MB)" % (p, size)
        print("%9d bytes  sha256 %s  %s" % (size, hashlib.sha256(data).hexdigest()[:16],
                                              os.path.relpath(p)))


# --------------------------------------------------------------------------- numpy interpreter

_NP_TYPES = {
    onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.BOOL: np.bool_,
}
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _pool_windows(x, kernel, strides, pads):
    assert list(pads) == [0, 0, 0, 0] and list(kernel) == list(strides), (kernel, strides, pads)
    n, c, h, w = x.shape
    kh, kw = kernel
    x = x[:, :, : h // kh * kh, : w // kw * kw]
    return x.reshape(n, c, h // kh, kh, w // kw, kw)


def _conv2d(x, w, b, pads, strides, dilations, group):
    assert group == 1 and list(dilations) == [1, 1]
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    pt, pl, pb, pr = pads
    sh, sw = strides
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - kh) // sh + 1
    ow = (wd + pl + pr - kw) // sw + 1
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i: i + sh * oh: sh, j: j + sw * ow: sw]
    y = np.einsum("nckluv,mckl->nmuv", cols, w, optimize=True)
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y.astype(x.dtype)


def _node(op, a, x):
    """Evaluate one node. `x` = list of input arrays (None for omitted)."""
    if op == "Constant":
        return [numpy_helper.to_array(a["value"])]
    if op == "Identity":
        return [x[0]]
    if op == "Add":
        return [x[0] + x[1]]
    if op == "Sub":
        return [x[0] - x[1]]
    if op == "Mul":
        return [x[0] * x[1]]
    if op == "Div":
        return [x[0] / x[1]]
    if op == "Relu":
        return [np.maximum(x[0], 0).astype(x[0].dtype)]
    if op == "Erf":
        return [_erf(x[0]).astype(x[0].dtype)]
    if op == "Not":
        return [np.logical_not(x[0])]
    if op == "Cast":
        return [x[0].astype(_NP_TYPES[a["to"]])]
    if op == "Where":
        return [np.where(x[0], x[1], x[2])]
    if op == "MatMul":
        return [np.matmul(x[0], x[1])]
    if op == "Gemm":
        A = x[0].T if a.get("transA", 0) else x[0]
        B = x[1].T if a.get("transB", 0) else x[1]
        y = a.get("alpha", 1.0) * (A @ B)
        if len(x) > 2 and x[2] is not None:
            y = y + a.get("beta", 1.0) * x[2]
        return [y.astype(x[0].dtype)]
    if op == "Transpose":
        return [np.transpose(x[0], a.get("perm"))]
    if op == "Reshape":
        assert a.get("allowzero", 0) == 0
        shape = [x[0].shape[i] if d == 0 else d for i, d in enumerate(x[1].tolist())]
        return [x[0].reshape(shape)]
    if op == "Flatten":
        ax = a.get("axis", 1)
        return [x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)]
    if op == "Gather":
        return [np.take(x[0], x[1], axis=a.get("axis", 0))]
    if op == "Softmax":
        ax = a.get("axis", -1)
        e = np.exp(x[0] - np.max(x[0], axis=ax, keepdims=True))
        return [(e / np.sum(e, axis=ax, keepdims=True)).astype(x[0].dtype)]
    if op == "LayerNormalization":
        ax = a.get("axis", -1)
        axes = tuple(range(ax % x[0].ndim, x[0].ndim))
        mean = x[0].mean(axis=axes, keepdims=True)
        var = ((x[0] - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x[0] - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * x[1]
        if len(x) > 2 and x[2] is not None:
            y = y + x[2]
        return [y.astype(x[0].dtype)]
    if op == "BatchNormalization":
        X, scale, bias, in_mean, in_var = x[:5]
        eps, mom = a.get("epsilon", 1e-5), a.get("momentum", 0.9)
        shp = (1, -1) + (1,) * (X.ndim - 2)
        if a.get("training_mode", 0):
            axes = (0,) + tuple(range(2, X.ndim))
            mean, var = X.mean(axis=axes), X.var(axis=axes)  # population variance (ONNX spec)
            y = (X - mean.reshape(shp)) / np.sqrt(var.reshape(shp) + eps) * scale.reshape(shp) + bias.reshape(shp)
            return [y.astype(X.dtype), in_mean * mom + mean * (1 - mom), in_var * mom + var * (1 - mom)]
        y = (X - in_mean.reshape(shp)) / np.sqrt(in_var.reshape(shp) + eps) * scale.reshape(shp) + bias.reshape(shp)
        return [y.astype(X.dtype)]
    if op == "Conv":
        return [_conv2d(x[0], x[1], x[2] if len(x) > 2 else None, a.get("pads", [0, 0, 0, 0]),
                        a.get("strides", [1, 1]), a.get("dilations", [1, 1]), a.get("group", 1))]
    if op == "MaxPool":
        assert not a.get("ceil_mode", 0)
        return [_pool_windows(x[0], a["kernel_shape"], a.get("strides", [1, 1]),
                              a.get("pads", [0, 0, 0, 0])).max(axis=(3, 5))]
    if op == "AveragePool":
        assert not a.get("ceil_mode", 0)
        return [_pool_windows(x[0], a["kernel_shape"], a.get("strides", [1, 1]),
                              a.get("pads", [0, 0, 0, 0])).mean(axis=(3, 5)).astype(x[0].dtype)]
    if op == "GlobalAveragePool":
        return [x[0].mean(axis=tuple(range(2, x[0].ndim)), keepdims=True)]
    if op == "SoftmaxCrossEntropyLoss":
        assert len(x) == 2 or x[2] is None, "class weights not supported"
        scores, labels = x[0], x[1]
        ax_max = scores.max(axis=1, keepdims=True)
        logp = scores - ax_max - np.log(np.exp(scores - ax_max).sum(axis=1, keepdims=True))
        ign = a.get("ignore_index", None)
        keep = np.ones(labels.shape, bool) if ign is None else labels != ign
        safe = np.where(keep, labels, 0)
        nll = -np.take_along_axis(logp, safe[:, None], axis=1)[:, 0] * keep
        red = a.get("reduction", b"mean")
        red = red.decode() if isinstance(red, bytes) else red
        if red == "mean":
            loss = nll.sum() / keep.sum()
        elif red == "sum":
            loss = nll.sum()
        else:
            loss = nll
        return [np.asarray(loss, dtype=scores.dtype), logp.astype(scores.dtype)]
    raise NotImplementedError(op)


def run_numpy(proto, feeds):
    """Forward-evaluate `proto` on `feeds` (name -> ndarray); returns name -> ndarray for outputs."""
    env = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    env.update(feeds)
    for node in proto.graph.node:
        outs = _node(node.op_type, _attrs(node), [env[i] if i else None for i in node.input])
        for name, val in zip(node.output, outs):
            if name:
                env[name] = val
    return {o.name: env[o.name] for o in proto.graph.output}
