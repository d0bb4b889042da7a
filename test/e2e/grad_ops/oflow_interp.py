"""A reference interpreter for oflow IR in generic form (torch, float64).

It evaluates what `oflow-opt --oflow-autodiff --mlir-print-op-generic` prints
for the one-op models of grad_ops.py, so the gradient rules are checked
numerically before (and independently of) the compiled executable. Backward
primitives (conv2d_backward_*, pool backward, gather/slice backward, loss
backward) are evaluated as torch vector-Jacobian products of the forward op:
what is checked here is how the autodiff pass composes them.
"""
import re

import numpy as np
import torch
import torch.nn.functional as F

CMP = {0: torch.eq, 1: torch.ne, 2: torch.lt, 3: torch.le, 4: torch.gt, 5: torch.ge}
REDUCTION = {0: "mean", 1: "sum", 2: "none"}
DTYPES = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
          "i1": np.bool_, "i8": np.int8, "i32": np.int32, "i64": np.int64}

LINE = re.compile(
    r'^\s*(?:(%[\w]+)(?::(\d+))? = )?"([\w.]+)"\(([^)]*)\)'
    r'(?: <\{(.*)\}>)?(?: \{(.*)\})? : \((.*)\) -> (.*)$')


def split_top(s, sep=","):
    """Splits at `sep` outside brackets and strings."""
    parts, depth, cur, in_str = [], 0, "", False
    for ch in s:
        if ch == '"':
            in_str = not in_str
        elif not in_str and ch in "<[({":
            depth += 1
        elif not in_str and ch in ">])}":
            depth -= 1
        if ch == sep and depth == 0 and not in_str:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_type(t):
    m = re.match(r"tensor<(.*)>", t.strip())
    dims = m.group(1).split("x")
    return [int(d) for d in dims[:-1]], dims[-1]


def parse_dense(body, type_str):
    shape, elem = parse_type(type_str)
    dtype = DTYPES[elem]
    n = int(np.prod(shape)) if shape else 1
    if body.startswith("0x"):  # one element given by its bits (inf, nan)
        bits = int(body, 16)
        width = np.dtype(dtype).itemsize
        arr = np.frombuffer(bits.to_bytes(width, "little"), dtype=dtype)
        return np.full(shape, arr[0], dtype=dtype)
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        if dtype == np.bool_:  # i1 is bit-packed, least significant bit first
            bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")
            arr = bits[:n].astype(np.bool_) if bits.size >= n else bits[:1].astype(np.bool_)
        else:
            arr = np.frombuffer(raw, dtype=dtype)
        return (np.full(shape, arr[0]) if arr.size == 1 and n != 1 else arr.reshape(shape)).astype(dtype)
    value = eval(body.replace("true", "True").replace("false", "False"))
    arr = np.array(value, dtype=dtype)
    return np.broadcast_to(arr, shape).copy() if arr.ndim == 0 else arr.reshape(shape)


def parse_attr(v):
    v = v.strip()
    m = re.match(r"array<i64(?::(.*))?>$", v)
    if m:
        return [int(x) for x in m.group(1).split(",")] if m.group(1) else []
    m = re.match(r"dense<(.*)> : (tensor<.*>)$", v)
    if m:
        return parse_dense(m.group(1), m.group(2))
    if v.startswith("dense_resource"):
        return None
    m = re.match(r"(-?[\d.eE+-]+|0x[0-9A-F]+) : (\w+)$", v)
    if m:
        if m.group(2).startswith("f"):
            return float(m.group(1)) if not m.group(1).startswith("0x") else float("nan")
        return int(m.group(1))
    if v in ("true", "false"):
        return v == "true"
    if v.startswith('"'):
        return v[1:-1]
    return v  # a type, e.g. f32


def parse_attrs(s):
    attrs = {}
    if not s:
        return attrs
    for item in split_top(s):
        if " = " in item:
            k, v = item.split(" = ", 1)
            attrs[k.strip()] = parse_attr(v)
        else:
            attrs[item.strip()] = True
    return attrs


def parse_function(text):
    ops = []
    args = []
    for line in text.splitlines():
        m = re.match(r"\s*\^bb0\((.*)\):", line)
        if m:
            args = [a.split(":")[0].strip() for a in split_top(m.group(1))]
            continue
        m = LINE.match(line)
        if not m:
            continue
        res, nres, name, operands, props, attrs, _, rtypes = m.groups()
        a = parse_attrs(props)
        a.update(parse_attrs(attrs))
        rtypes = rtypes.strip()
        if rtypes.startswith("("):
            rtypes = rtypes[1:-1]
        types = [parse_type(t) for t in split_top(rtypes)] if rtypes else []
        n = int(nres) if nres else (1 if res else 0)
        results = [res] if n == 1 else [f"{res}#{i}" for i in range(n)]
        ops.append(dict(name=name, results=results, attrs=a, types=types,
                        operands=[o.strip() for o in operands.split(",") if o.strip()]))
    return args, ops


def vjp(fn, primal, grad):
    p = primal.detach().clone().requires_grad_(True)
    out = fn(p)
    (g,) = torch.autograd.grad(out, p, grad)
    return g


def slice_t(x, offsets, sizes, strides):
    for d, (o, n, s) in enumerate(zip(offsets, sizes, strides)):
        x = torch.index_select(x, d, torch.tensor([o + i * s for i in range(n)], dtype=torch.long))
    return x


def gather_t(data, idx, axis):
    idx = torch.where(idx < 0, idx + data.shape[axis], idx).long()
    out = torch.index_select(data, axis, idx.flatten())
    return out.reshape(tuple(data.shape[:axis]) + tuple(idx.shape) + tuple(data.shape[axis + 1:]))


def pad4(x, pads, value=0.0):
    t, l, b, r = pads
    return F.pad(x, (l, r, t, b), value=value) if any(pads) else x


def conv(x, w, a):
    return F.conv2d(pad4(x, a["pads"]), w, None, a["strides"], 0, a["dilations"], a.get("groups", 1))


def max_pool(x, a):
    t, l, b, r = a["pads"]
    dil = a.get("dilations") or [1, 1]
    if t == b and l == r:
        return F.max_pool2d(x, a["kernel"], a["strides"], (t, l), dil, a.get("ceil_mode", False))
    return F.max_pool2d(pad4(x, a["pads"], float("-inf")), a["kernel"], a["strides"], 0, dil,
                        a.get("ceil_mode", False))


def avg_pool(x, a):
    t, l, b, r = a["pads"]
    assert t == b and l == r, "the interpreter handles symmetric average-pool pads only"
    return F.avg_pool2d(x, a["kernel"], a["strides"], (t, l), a.get("ceil_mode", False),
                        a.get("count_include_pad", False))


def class_loss(fn, x, labels, a):
    kw = dict(reduction=REDUCTION[a["reduction"]])
    if "ignore_index" in a:
        kw["ignore_index"] = a["ignore_index"]
    return fn(x, labels.long(), **kw)


def norm_layer(x, scale, bias, a):
    axis = a["axis"]
    return F.layer_norm(x, x.shape[axis:], scale, bias, a.get("epsilon", 1e-5))


def run_op(op, v):
    n, a, ins = op["name"][len("oflow."):], op["attrs"], v
    shape = op["types"][0][0] if op["types"] else None
    unary = {"neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
             "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "tanh": torch.tanh,
             "sigmoid": torch.sigmoid, "relu": torch.relu, "erf": torch.erf, "abs": torch.abs,
             "not": torch.logical_not}
    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
              "pow": torch.pow, "max": torch.maximum, "min": torch.minimum}
    if n in unary:
        return unary[n](ins[0])
    if n in binary:
        return binary[n](ins[0], ins[1])
    if n == "gelu":
        return F.gelu(ins[0], approximate="tanh" if a.get("approximate", 0) == 1 else "none")
    if n == "compare":
        return CMP[a["predicate"]](ins[0], ins[1])
    if n == "where":
        return torch.where(ins[0], ins[1], ins[2])
    if n == "cast":
        to = DTYPES[a["to"]]
        if to in (np.float16, np.float32, np.float64):
            return ins[0].double()
        return ins[0].to(torch.from_numpy(np.zeros(0, to)).dtype)
    if n == "dropout":
        assert a["ratio"] == 0.0
        return ins[0]
    if n == "matmul":
        x, y = ins
        if a.get("transpose_a"):
            x = x.transpose(-1, -2)
        if a.get("transpose_b"):
            y = y.transpose(-1, -2)
        return torch.matmul(x, y)
    if n == "gemm":
        x, y = ins[0], ins[1]
        x = x.t() if a.get("transpose_a") else x
        y = y.t() if a.get("transpose_b") else y
        out = a.get("alpha", 1.0) * (x @ y)
        return out + a.get("beta", 1.0) * ins[2] if len(ins) > 2 else out
    if n in ("reduce_sum", "reduce_mean", "reduce_max"):
        fn = {"reduce_sum": torch.sum, "reduce_mean": torch.mean, "reduce_max": torch.amax}[n]
        return fn(ins[0], dim=tuple(a["axes"]), keepdim=a.get("keepdims", True))
    if n == "softmax":
        return torch.softmax(ins[0], a["axis"])
    if n == "log_softmax":
        return torch.log_softmax(ins[0], a["axis"])
    if n == "layer_norm":
        return norm_layer(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)
    if n == "batch_norm_inference":
        return F.batch_norm(ins[0], ins[3], ins[4], ins[1], ins[2], False, 0.0, a.get("epsilon", 1e-5))
    if n == "batch_norm_statistics":
        dims = [d for d in range(ins[0].dim()) if d != 1]
        return [ins[0].mean(dims), ins[0].var(dims, unbiased=False)]
    if n == "batch_norm_training":
        rm, rv = ins[3].clone(), ins[4].clone()
        y = F.batch_norm(ins[0], rm, rv, ins[1], ins[2], True, 1.0 - a.get("momentum", 0.9),
                         a.get("epsilon", 1e-5))
        return [y, rm, rv]
    if n == "conv2d":
        out = conv(ins[0], ins[1], a)
        return out + ins[2].reshape(1, -1, 1, 1) if len(ins) > 2 else out
    if n == "max_pool2d":
        return max_pool(ins[0], a)
    if n == "avg_pool2d":
        return avg_pool(ins[0], a)
    if n == "global_avg_pool":
        return ins[0].mean(dim=tuple(range(2, ins[0].dim())), keepdim=True)
    if n in ("reshape", "flatten", "squeeze", "unsqueeze"):
        return ins[0].reshape(shape)
    if n == "expand":
        return torch.broadcast_to(ins[0], shape).clone()
    if n == "transpose":
        return ins[0].permute(a["perm"])
    if n == "concat":
        return torch.cat(ins, a["axis"])
    if n == "split":
        return list(torch.split(ins[0], a["sizes"], a["axis"]))
    if n == "slice":
        return slice_t(ins[0], a["offsets"], a["sizes"], a["strides"])
    if n == "gather":
        return gather_t(ins[0], ins[1], a.get("axis", 0))
    if n == "trilu":
        return (torch.triu if a.get("upper", True) else torch.tril)(ins[0], a.get("k", 0))
    if n == "softmax_cross_entropy":
        return class_loss(F.cross_entropy, ins[0], ins[1], a)
    if n == "nll_loss":
        return class_loss(F.nll_loss, ins[0], ins[1], a)
    if n == "mse_loss":
        return F.mse_loss(ins[0], ins[1], reduction=REDUCTION[a["reduction"]])
    # Backward primitives: vector-Jacobian products of the forward ops.
    zeros = lambda s: torch.zeros(s, dtype=torch.float64)
    if n == "conv2d_backward_input":
        return vjp(lambda x: conv(x, ins[1], a), zeros(a["input_shape"]), ins[0])
    if n == "conv2d_backward_filter":
        return vjp(lambda w: conv(ins[1], w, a), zeros(a["filter_shape"]), ins[0])
    if n == "max_pool2d_backward":
        return vjp(lambda x: max_pool(x, a), ins[1], ins[0])
    if n == "avg_pool2d_backward":
        return vjp(lambda x: avg_pool(x, a), zeros(a["input_shape"]), ins[0])
    if n == "gather_backward":
        return vjp(lambda d: gather_t(d, ins[1], a.get("axis", 0)), zeros(a["data_shape"]), ins[0])
    if n == "slice_backward":
        return vjp(lambda x: slice_t(x, a["offsets"], a["sizes"], a["strides"]),
                   zeros(a["input_shape"]), ins[0])
    if n == "softmax_cross_entropy_backward":
        return vjp(lambda x: class_loss(F.cross_entropy, x, ins[1], a), ins[0], ins[2])
    if n == "nll_loss_backward":
        return vjp(lambda x: class_loss(F.nll_loss, x, ins[1], a), ins[0], ins[2])
    raise NotImplementedError(f"interpreter: no semantics for oflow.{n}")


def gradients(text, weights, inputs=()):
    """Runs the function; returns {name: gradient} from its oflow.gradient ops."""
    args, ops = parse_function(text)
    def tensor(x):
        x = np.asarray(x)
        return torch.from_numpy(x.astype(np.float64) if x.dtype.kind == "f" else x)

    env = {a: tensor(x) for a, x in zip(args, inputs)}
    grads = {}
    for op in ops:
        name = op["name"]
        ins = [env[o] for o in op["operands"]]
        if name in ("func.func", "builtin.module"):
            continue
        if name == "func.return":
            break
        if name == "oflow.gradient":
            grads[op["attrs"]["name"]] = ins[0].numpy()
            continue
        if name == "oflow.weight":
            out = tensor(weights[op["attrs"]["name"]])
        elif name == "oflow.constant":
            out = tensor(op["attrs"]["value"])
        else:
            out = run_op(op, ins)
        outs = out if isinstance(out, list) else [out]
        for r, o in zip(op["results"], outs):
            env[r] = o
    return grads
