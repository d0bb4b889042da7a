"""A small ONNX evaluator in torch (the reference of difftest.py).

Evaluates the ops oflow's importer supports, node by node, in a chosen float
dtype (float64 for the reference, float32 for PyTorch's own float32 error):
ONNX FLOAT tensors are computed in that dtype. Batch normalization in training
mode uses the batch statistics (biased variance), as PyTorch does.

`kink_margin(node, ins)` measures how far a node's inputs are from the points
where its derivative jumps (Relu/Abs at 0, Max/Min/Clip/comparisons at ties,
ReduceMax/MaxPool between the two largest of a window); the generator keeps
every such margin clear of float32 noise.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

NP_OF = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
         TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_}


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def torch_dtype(onnx_type, dt):
    return {TensorProto.FLOAT: dt, TensorProto.DOUBLE: torch.float64,
            TensorProto.INT64: torch.int64, TensorProto.BOOL: torch.bool}[onnx_type]


def tensor_of(array, dt):
    """A numpy array as a torch tensor, float32 computed in dt."""
    t = torch.from_numpy(np.array(array))
    if t.dtype == torch.float32:
        t = t.to(dt)
    return t


def ints(t):
    return [int(v) for v in t.reshape(-1).tolist()]


def window_pads(a, shape, kernel, strides, dilations):
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto == "NOTSET":
        return list(a.get("pads", [0, 0, 0, 0]))
    if auto == "VALID":
        return [0, 0, 0, 0]
    pads = [0] * 4
    for d in range(2):
        size = shape[2 + d]
        out = (size + strides[d] - 1) // strides[d]
        total = max(0, (out - 1) * strides[d] + dilations[d] * (kernel[d] - 1) + 1 - size)
        small, large = total // 2, total - total // 2
        pads[d] = small if auto == "SAME_UPPER" else large
        pads[d + 2] = large if auto == "SAME_UPPER" else small
    return pads


def pad4(x, pads, value=0.0):
    t, l, b, r = pads
    if not any(pads):
        return x
    return F.pad(x, (l, r, t, b), value=value)


def onnx_slice(x, starts, ends, axes, steps):
    for s, e, ax, st in zip(starts, ends, axes, steps):
        ax = ax % x.dim()
        dim = x.shape[ax]

        def clamp(v):
            if v < 0:
                v += dim
            return min(max(v, 0), dim) if st > 0 else min(max(v, -1), dim - 1)
        s, e = clamp(s), clamp(e)
        idx = torch.arange(s, e, st, dtype=torch.int64)
        x = torch.index_select(x, ax, idx)
    return x


def _pool_geometry(a, x):
    kernel = list(a["kernel_shape"])
    strides = list(a.get("strides", [1, 1]))
    dilations = list(a.get("dilations", [1, 1]))
    pads = window_pads(a, x.shape, kernel, strides, dilations)
    return kernel, strides, dilations, pads


def evaluate_node(node, ins, dt):
    """Outputs (a list) of one node; ins are torch tensors (None: absent)."""
    op, a = node.op_type, attrs(node)
    x = ins[0] if ins else None
    if op == "Identity":
        return [x]
    unary = {"Abs": torch.abs, "Neg": torch.neg, "Exp": torch.exp, "Log": torch.log,
             "Sqrt": torch.sqrt, "Reciprocal": torch.reciprocal, "Tanh": torch.tanh,
             "Sigmoid": torch.sigmoid, "Relu": torch.relu, "Erf": torch.erf,
             "Not": torch.logical_not}
    if op in unary:
        return [unary[op](x)]
    binary = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div,
              "Equal": torch.eq, "Less": torch.lt, "LessOrEqual": torch.le,
              "Greater": torch.gt, "GreaterOrEqual": torch.ge}
    if op in binary:
        return [binary[op](ins[0], ins[1])]
    if op == "Pow":
        return [torch.pow(ins[0], ins[1].to(ins[0].dtype))]
    if op in ("Max", "Min", "Sum", "Mean"):
        f = {"Max": torch.maximum, "Min": torch.minimum}.get(op, torch.add)
        acc = ins[0]
        for t in ins[1:]:
            acc = f(acc, t)
        return [acc / len(ins) if op == "Mean" else acc]
    if op == "Where":
        return [torch.where(ins[0], ins[1], ins[2])]
    if op == "HardSigmoid":
        return [torch.clamp(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0, 1)]
    if op == "HardSwish":
        return [x * torch.clamp(x / 6 + 0.5, 0, 1)]
    if op == "Clip":
        if len(ins) > 1 and ins[1] is not None:
            x = torch.maximum(x, ins[1])
        if len(ins) > 2 and ins[2] is not None:
            x = torch.minimum(x, ins[2])
        return [x]
    if op == "Cast":
        return [x.to(torch_dtype(a["to"], dt))]
    if op == "Constant":
        return [tensor_of(numpy_helper.to_array(a["value"]), dt)]
    if op == "ConstantOfShape":
        v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
        return [tensor_of(np.full(ints(x), v.reshape(-1)[0], v.dtype), dt)]
    if op == "Shape":
        return [torch.tensor(list(x.shape), dtype=torch.int64)]
    if op == "Size":
        return [torch.tensor(x.numel(), dtype=torch.int64)]
    if op == "Range":
        return [torch.arange(ins[0].item(), ins[1].item(), ins[2].item(), dtype=ins[0].dtype)]
    if op == "Reshape":
        shape = ints(ins[1])
        shape = [x.shape[i] if (s == 0 and not a.get("allowzero", 0)) else s
                 for i, s in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Flatten":
        axis = a.get("axis", 1) % (x.dim() + 1) if x.dim() else 0
        lead = int(np.prod(x.shape[:axis])) if axis else 1
        return [x.reshape(lead, -1)]
    if op == "Transpose":
        perm = a.get("perm", list(range(x.dim()))[::-1])
        return [x.permute(*perm)]
    if op == "Squeeze":
        axes = ints(ins[1]) if len(ins) > 1 and ins[1] is not None else \
            [i for i, d in enumerate(x.shape) if d == 1]
        axes = sorted(ax % x.dim() for ax in axes)
        return [x.reshape([d for i, d in enumerate(x.shape) if i not in axes])]
    if op == "Unsqueeze":
        rank = x.dim() + ins[1].numel()
        axes = sorted(ax % rank for ax in ints(ins[1]))
        for ax in axes:
            x = x.unsqueeze(ax)
        return [x]
    if op == "Expand":
        shape = torch.broadcast_shapes(tuple(x.shape), tuple(ints(ins[1])))
        return [x.expand(shape)]
    if op == "Concat":
        return [torch.cat([t for t in ins if t is not None], dim=a["axis"])]
    if op == "Slice":
        starts, ends = ints(ins[1]), ints(ins[2])
        axes = ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
        steps = ints(ins[4]) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
        return [onnx_slice(x, starts, ends, axes, steps)]
    if op == "Split":
        axis = a.get("axis", 0) % x.dim()
        if len(ins) > 1 and ins[1] is not None:
            sizes = ints(ins[1])
        else:
            sizes = [x.shape[axis] // len(node.output)] * len(node.output)
        return list(torch.split(x, sizes, dim=axis))
    if op == "Gather":
        axis = a.get("axis", 0) % x.dim()
        idx = ins[1]
        flat = torch.where(idx < 0, idx + x.shape[axis], idx).reshape(-1)
        out = torch.index_select(x, axis, flat)
        return [out.reshape(tuple(x.shape[:axis]) + tuple(idx.shape) + tuple(x.shape[axis + 1:]))]
    if op == "Trilu":
        k = ints(ins[1])[0] if len(ins) > 1 and ins[1] is not None else 0
        return [torch.triu(x, k) if a.get("upper", 1) else torch.tril(x, k)]
    if op == "Pad":
        pads = ints(ins[1])
        n = x.dim()
        if any(pads):
            tp = []
            for d in reversed(range(n)):
                tp += [pads[d], pads[d + n]]
            x = F.pad(x, tp)
        return [x]
    if op == "Dropout":
        return [x] + ([torch.ones_like(x, dtype=torch.bool)] if len(node.output) > 1 else [])
    if op == "MatMul":
        return [torch.matmul(ins[0], ins[1])]
    if op == "Einsum":
        eq = a["equation"]
        return [torch.einsum(eq.decode() if isinstance(eq, bytes) else eq, *ins)]
    if op == "Gemm":
        A = ins[0].t() if a.get("transA", 0) else ins[0]
        B = ins[1].t() if a.get("transB", 0) else ins[1]
        y = a.get("alpha", 1.0) * (A @ B)
        if len(ins) > 2 and ins[2] is not None:
            y = y + a.get("beta", 1.0) * ins[2]
        return [y]
    if op == "Conv":
        w = ins[1]
        kernel = list(a.get("kernel_shape", w.shape[2:]))
        strides = list(a.get("strides", [1, 1]))
        dil = list(a.get("dilations", [1, 1]))
        pads = window_pads(a, x.shape, kernel, strides, dil)
        bias = ins[2] if len(ins) > 2 else None
        return [F.conv2d(pad4(x, pads), w, bias, stride=strides, dilation=dil,
                         groups=a.get("group", 1))]
    if op == "ConvTranspose":
        # The full transposed convolution, cropped: pads trim the begins and
        # ends, output_padding gives back rows at the ends.
        w = ins[1]
        strides = list(a.get("strides", [1, 1]))
        dil = list(a.get("dilations", [1, 1]))
        pads = list(a.get("pads", [0, 0, 0, 0]))
        outpad = list(a.get("output_padding", [0, 0]))
        full = F.conv_transpose2d(x, w, None, stride=strides, dilation=dil,
                                  groups=a.get("group", 1))
        y = full[:, :, pads[0]:full.shape[2] - pads[2] + outpad[0],
                 pads[1]:full.shape[3] - pads[3] + outpad[1]]
        if len(ins) > 2:
            y = y + ins[2].reshape(1, -1, 1, 1)
        return [y]
    if op == "Resize":
        # torch's interpolation for the combinations gen.py makes (sizes
        # given, every output axis at least 2, so half_pixel is
        # pytorch_half_pixel, and nearest with half_pixel and
        # round_prefer_ceil is nearest-exact).
        size = ints(ins[3])[2:]
        mode = a.get("mode", b"nearest")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        coord = a.get("coordinate_transformation_mode", b"half_pixel")
        coord = coord.decode() if isinstance(coord, bytes) else coord
        if mode == "linear":
            return [F.interpolate(x, size=size, mode="bilinear",
                                  align_corners=coord == "align_corners")]
        return [F.interpolate(x, size=size,
                              mode="nearest" if coord == "asymmetric" else "nearest-exact")]
    if op == "MaxPool":
        kernel, strides, dil, pads = _pool_geometry(a, x)
        return [F.max_pool2d(pad4(x, pads, -math.inf), kernel, strides, 0, dil,
                             ceil_mode=bool(a.get("ceil_mode", 0)))]
    if op == "AveragePool":
        kernel, strides, dil, pads = _pool_geometry(a, x)
        ceil = bool(a.get("ceil_mode", 0))
        kk = kernel[0] * kernel[1]
        s = F.avg_pool2d(pad4(x, pads), kernel, strides, 0, ceil_mode=ceil,
                         count_include_pad=True) * kk
        ones = torch.ones_like(x[:1, :1])
        mask = F.pad(ones, (pads[1], pads[3], pads[0], pads[2]),
                     value=1.0 if a.get("count_include_pad", 0) else 0.0) if any(pads) else ones
        cnt = F.avg_pool2d(mask, kernel, strides, 0, ceil_mode=ceil, count_include_pad=True) * kk
        return [s / cnt]
    if op == "GlobalAveragePool":
        return [x.mean(dim=tuple(range(2, x.dim())), keepdim=True)]
    if op == "BatchNormalization":
        scale, bias, mean, var = ins[1:5]
        eps = a.get("epsilon", 1e-5)
        shp = [1, -1] + [1] * (x.dim() - 2)
        if a.get("training_mode", 0):
            dims = [0] + list(range(2, x.dim()))
            bm = x.mean(dim=dims)
            mom = a.get("momentum", 0.9)
            # PyTorch's own kernel (forward and backward), so that "PyTorch
            # float32's error" is what its users get: a decomposed batch norm
            # makes autograd cancel some gradients exactly (a bias before the
            # norm gets sum(g) - sum(g) = 0), which no fused kernel does.
            y = torch.nn.functional.batch_norm(x, None, None, weight=scale, bias=bias,
                                               training=True, eps=eps)
            # Running statistics are buffers: no gradient flows through
            # them (PyTorch updates them under no_grad; so does oflow).
            # The running variance takes the unbiased batch variance, as in
            # PyTorch (and oflow; ONNX's reference uses the biased one).
            bm, uv = bm.detach(), x.var(dim=dims, unbiased=True).detach()
            outs = [y, mean * mom + bm * (1 - mom), var * mom + uv * (1 - mom)]
            return outs[:len(node.output)]
        y = (x - mean.reshape(shp)) / torch.sqrt(var.reshape(shp) + eps) * scale.reshape(shp) \
            + bias.reshape(shp)
        return [y]
    if op == "InstanceNormalization":
        return [torch.nn.functional.instance_norm(x, weight=ins[1], bias=ins[2],
                                                  eps=a.get("epsilon", 1e-5))]
    if op == "LayerNormalization":
        axis = a.get("axis", -1) % x.dim()
        dims = tuple(range(axis, x.dim()))
        eps = a.get("epsilon", 1e-5)
        bias = ins[2] if len(ins) > 2 else None
        shape = tuple(x.shape[axis:])
        if tuple(ins[1].shape) == shape and (bias is None or tuple(bias.shape) == shape):
            # PyTorch's own kernel, for the reason given for BatchNormalization:
            # autograd through the decomposition below makes each row's input
            # gradient sum to zero to the last bit (its rounding errors
            # cancel), which a fused backward's need not; a bias summed over
            # such rows afterwards then looks 10x too precise (s7-O0-977-cpu).
            return [torch.nn.functional.layer_norm(x, shape, ins[1], bias, eps)]
        m = x.mean(dim=dims, keepdim=True)
        v = ((x - m) ** 2).mean(dim=dims, keepdim=True)
        y = (x - m) / torch.sqrt(v + eps) * ins[1]
        if bias is not None:
            y = y + bias
        return [y]
    if op in ("Softmax", "LogSoftmax"):
        f = torch.softmax if op == "Softmax" else torch.log_softmax
        return [f(x, dim=a.get("axis", -1))]
    if op in ("ReduceSum", "ReduceMean", "ReduceMax"):
        if op == "ReduceSum":
            axes = ints(ins[1]) if len(ins) > 1 and ins[1] is not None else []
        else:
            axes = list(a.get("axes", []))
        keep = bool(a.get("keepdims", 1))
        if not axes:
            if a.get("noop_with_empty_axes", 0):
                return [x]
            axes = list(range(x.dim()))
        axes = sorted(ax % x.dim() for ax in axes)
        if x.dim() == 0:
            return [x]
        if op == "ReduceSum":
            return [x.sum(dim=axes, keepdim=keep)]
        if op == "ReduceMean":
            return [x.mean(dim=axes, keepdim=keep)]
        y = x
        for ax in reversed(axes):
            y = y.amax(dim=ax, keepdim=True)
        if not keep:
            y = y.reshape([d for i, d in enumerate(x.shape) if i not in axes])
        return [y]
    if op in ("SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"):
        red = a.get("reduction", b"mean")
        red = red.decode() if isinstance(red, bytes) else red
        kw = {"ignore_index": a["ignore_index"]} if "ignore_index" in a else {}
        if op == "SoftmaxCrossEntropyLoss":
            outs = [F.cross_entropy(ins[0], ins[1], reduction=red, **kw)]
            if len(node.output) > 1:
                outs.append(torch.log_softmax(ins[0], dim=1))
            return outs
        return [F.nll_loss(ins[0], ins[1], reduction=red, **kw)]
    raise NotImplementedError(op)


def _top2_gap(t, dim):
    """Smallest gap between the largest and the second largest along dim."""
    if t.shape[dim] < 2:
        return math.inf
    top = torch.topk(t, 2, dim=dim).values
    a, b = top.select(dim, 0), top.select(dim, 1)
    ok = torch.isfinite(a)
    gap = torch.where(torch.isfinite(b), a - b, torch.full_like(a, math.inf))
    gap = gap[ok]
    return float(gap.min()) if gap.numel() else math.inf


def kink_margin(node, ins):
    """Distance of the inputs from a kink of the node's derivative (inf: none)."""
    op, a = node.op_type, attrs(node)
    with torch.no_grad():
        if op in ("Relu", "Abs"):
            return float(ins[0].abs().min()) if ins[0].numel() else math.inf
        if op in ("Max", "Min") and len(ins) > 1:
            shape = torch.broadcast_shapes(*[tuple(t.shape) for t in ins])
            st = torch.stack([t.expand(shape) for t in ins])
            return _top2_gap(st if op == "Max" else -st, 0)
        if op in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual") and \
                ins[0].is_floating_point():
            return float((ins[0] - ins[1]).abs().min())
        if op in ("HardSigmoid", "HardSwish"):
            alpha, beta = ((a.get("alpha", 0.2), a.get("beta", 0.5)) if op == "HardSigmoid"
                           else (1 / 6, 0.5))
            lo, hi = -beta / alpha, (1 - beta) / alpha
            x = ins[0]
            return float(torch.minimum((x - lo).abs(), (x - hi).abs()).min()) \
                if x.numel() else math.inf
        if op == "Clip":
            m = math.inf
            for b in ins[1:]:
                if b is not None:
                    m = min(m, float((ins[0] - b).abs().min()))
            return m
        if op == "ReduceMax":
            x = ins[0]
            axes = list(a.get("axes", [])) or list(range(x.dim()))
            axes = sorted(ax % x.dim() for ax in axes)
            rest = [i for i in range(x.dim()) if i not in axes]
            y = x.permute(*(rest + axes)).reshape([x.shape[i] for i in rest] + [-1])
            return _top2_gap(y, y.dim() - 1)
        if op == "MaxPool":
            x = ins[0]
            kernel, strides, dil, pads = _pool_geometry(a, x)
            xp = pad4(x, pads, -math.inf)
            if a.get("ceil_mode", 0):
                xp = F.pad(xp, (0, strides[1], 0, strides[0]), value=-math.inf)
            n, c = x.shape[:2]
            u = F.unfold(xp.reshape(n * c, 1, *xp.shape[2:]), kernel, dilation=dil, stride=strides)
            return _top2_gap(u, 1)
    return math.inf


# Ops whose float results are their inputs' values, moved or selected: exact
# in any precision.
EXACT = {"Identity", "Abs", "Neg", "Relu", "Max", "Min", "Where", "Clip", "Reshape",
         "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Expand", "Concat", "Slice",
         "Split", "Gather", "Trilu", "Pad", "Dropout", "MaxPool", "ReduceMax", "Constant",
         "ConstantOfShape", "Cast", "Shape", "Size", "Range"}


# Sums: a rounding error scales with the magnitude of the terms, which the
# op evaluated on its inputs' absolute values gives.
SUMS = {"Add", "Sum", "Mean", "MatMul", "Einsum", "Gemm", "Conv", "ConvTranspose", "Resize", "ReduceSum", "ReduceMean",
        "GlobalAveragePool", "AveragePool"}


# Normalizations over batch statistics: the result is (x - mean) / std, so
# a rounding of the mean, which any summation order makes, moves a whole
# channel (row) by error / std; where the values are far from zero and close
# together (a log-softmax's output is about -log(classes) +- 0.01) that is
# thousands of times the result's own ulp (s7-O0-364-cuda-emulated).
NORMS = {"BatchNormalization", "LayerNormalization", "InstanceNormalization"}


def _statistics_noise(node, ins, outs, dt, rng):
    """A batch norm (training) or layer norm whose mean is summed in another
    order: the mean off by up to one ulp of its terms' mean magnitude m
    (2*u*m, u = 2^-24 in float32). Four summation orders of s7-O0-364's 80
    terms (sequential both ways, numpy's pairwise, 32 lanes then a tree) were
    0.2 to 1.3 such ulps off. The normalized values move by -error/std, the
    result by that times the scale; the scale and the standard deviation stay
    differentiable, so the backward pass sees the moved values too (the
    scale's gradient sums them, the input's takes -error/std's derivative)."""
    x = ins[0].detach()
    a = attrs(node)
    u = 2.0 ** -24 if dt == torch.float32 else 2.0 ** -53
    if node.op_type == "BatchNormalization":
        if not a.get("training_mode", 0):
            return outs
        dims = [0] + list(range(2, x.dim()))
        scale = ins[1].reshape([1, -1] + [1] * (x.dim() - 2))
    elif node.op_type == "InstanceNormalization":
        dims = list(range(2, x.dim()))
        scale = ins[1].reshape([1, -1] + [1] * (x.dim() - 2))
    else:
        dims = list(range(a.get("axis", -1) % x.dim(), x.dim()))
        scale = ins[1]
    var = ins[0].var(dim=dims, unbiased=False, keepdim=True)
    m = x.abs().mean(dim=dims, keepdim=True)
    z = torch.from_numpy(rng.uniform(-1.0, 1.0, tuple(m.shape))).to(m.dtype)
    err = z * 2 * u * m
    eps = a.get("epsilon", 1e-5)
    y = outs[0] - err / torch.sqrt(var + eps) * scale
    return [y.to(outs[0].dtype)] + list(outs[1:])


def rounding_noise(node, ins, outs, dt, rng):
    """`outs` rounded once more: another valid rounding of the node, as a
    different summation order or math library would give. A sum moves by up
    to half an ulp of the sum of its terms' magnitudes (where they cancel,
    many ulps of the result); any other result to a neighbouring float or
    not, since in its own precision a step under half an ulp rounds away."""
    if node.op_type in EXACT:
        return outs
    if node.op_type in NORMS:
        outs = _statistics_noise(node, ins, outs, dt, rng)
    scales = [v.detach().abs() if v.is_floating_point() else None for v in outs]
    if node.op_type in SUMS:
        absolute = [i.detach().abs() if i is not None and i.is_floating_point() else i for i in ins]
        scales = [s.abs() for s in evaluate_node(node, absolute, dt)]
    noisy = []
    for v, s in zip(outs, scales):
        if v.is_floating_point():
            a = s.numpy()
            if node.op_type in SUMS:
                step = np.spacing(a) * rng.uniform(-0.5, 0.5, a.shape)
            else:
                step = np.spacing(a) * rng.integers(-1, 2, a.shape)
            v = v + torch.from_numpy(np.asarray(step, dtype=a.dtype))
        noisy.append(v)
    return noisy


def _gradient_noise(rng):
    """A backward hook rounding a gradient once more, each element to a
    neighbouring value or not: the backward pass's own sums (a value's gradient adds
    its consumers' contributions, a bias's adds positions) have other valid
    orders too. Forward noise alone misses them where the forward values
    are exact: a batch norm of a constant gives PyTorch a bias gradient of
    exactly 0 out of 25 terms of +-5e6 (s8-O0-586-cpu), where any other
    order leaves ~1."""
    def hook(g):
        if g is None:  # an output no gradient reaches
            return None
        # Whole ulps: in the gradient's own precision a step under half an
        # ulp rounds away (g + step == g), so each element moves to a
        # neighbouring value or stays, as another rounding would leave it.
        a = g.detach().abs().numpy()
        step = np.spacing(a) * rng.integers(-1, 2, a.shape)
        return g + torch.from_numpy(np.asarray(step, dtype=a.dtype))
    return hook


def run_graph(nodes, feeds, dt, keep=False, noise=None):
    """Evaluates nodes in order from feeds (name -> tensor); returns env.
    With `noise` (a numpy Generator), each result is rounded once more
    (rounding_noise), and so is its gradient in the backward pass
    (_gradient_noise)."""
    env = dict(feeds)
    for n in nodes:
        ins = [env[i] if i else None for i in n.input]
        outs = evaluate_node(n, ins, dt)
        if noise is not None:
            outs = rounding_noise(n, ins, outs, dt, noise)
            for v in outs:
                if v.is_floating_point() and v.requires_grad:
                    v.register_hook(_gradient_noise(noise))
        for name, v in zip(n.output, outs):
            if name:
                env[name] = v
    return env
