"""ResNet-50 for the GPU check (issue #17): torchvision's stock model with a
cross-entropy loss, 224x224 images, 1000 classes, trained with SGD.

Its 25.6M parameters (100 MB) are not carried to the GPU machine: the bundle
holds the graph (`export`, here, with torch + torchvision), and the GPU check
regenerates the weights and the images there with numpy and onnx only
(`regenerate`): conv and linear weights uniform in +-1/sqrt(fan_in) (as
PyTorch's default initialisation bounds them), biases 0, batch norm weights
and running variances 1, its biases and running means 0, all from one
`numpy.random.RandomState(seed)` in initializer order. The torch side
(`torch_model`) loads the same initializers by name (they are the
state_dict's), so both start from the same point.

  python3 bench/resnet50.py export --out DIR [--batch 64] [--size 224]
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = 1234
CLASSES = 1000


def _initial_value(np, rng, name, shape, dtype):
    if dtype != np.float32:
        return np.zeros(shape, dtype)
    leaf = name.rsplit(".", 1)[-1]
    if leaf in ("running_var",) or (leaf == "weight" and len(shape) == 1):
        return np.ones(shape, np.float32)
    if leaf in ("bias", "running_mean"):
        return np.zeros(shape, np.float32)
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    bound = 1.0 / np.sqrt(fan_in)
    return ((rng.random_sample(shape) * 2.0 - 1.0) * bound).astype(np.float32)


def _np_dtype(onnx, data_type):
    # onnx >= 1.13 has the helper; older ones the mapping table.
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):
        return onnx.helper.tensor_dtype_to_np_dtype(data_type)
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[data_type]


def regenerate(graph, dest, batch, size, rows, seed=SEED):
    """Writes dest/resnet50.onnx with every initializer's values (external
    data dest/resnet50.onnx.data) and dest/{x,y}.npy (`rows` images);
    returns (initializers, bytes)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    model = onnx.load(graph, load_external_data=False)
    rng = np.random.RandomState(seed)
    for i, init in enumerate(model.graph.initializer):
        dtype = _np_dtype(onnx, init.data_type)
        value = _initial_value(np, rng, init.name, tuple(init.dims), dtype)
        model.graph.initializer[i].CopyFrom(numpy_helper.from_array(value, init.name))
    os.makedirs(dest, exist_ok=True)
    data = "resnet50.onnx.data"
    if os.path.exists(os.path.join(dest, data)):
        os.remove(os.path.join(dest, data))
    onnx.save_model(model, os.path.join(dest, "resnet50.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=data, size_threshold=0)
    images = np.random.RandomState(seed + 1)
    np.save(os.path.join(dest, "x.npy"),
            images.standard_normal((rows, 3, size, size)).astype(np.float32))
    np.save(os.path.join(dest, "y.npy"), images.randint(0, CLASSES, size=rows).astype(np.int64))
    return len(model.graph.initializer), os.path.getsize(os.path.join(dest, data))


def torch_model(onnx_path):
    """torchvision's ResNet-50 with the loss, its values from `onnx_path`."""
    import torch
    from torchvision.models import resnet50
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import common
    from onnx import numpy_helper
    import onnx
    model = common.WithCrossEntropy(resnet50(weights=None, num_classes=CLASSES))
    values = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
              for i in onnx.load(onnx_path).graph.initializer}
    missing, _ = model.load_state_dict(values, strict=False)
    params = [m for m in missing if not m.endswith("num_batches_tracked")]
    if params:
        raise RuntimeError("the ONNX model lacks %d of torch's tensors (%s)" % (
            len(params), ", ".join(params[:3])))
    return model


def export(out, batch, size):
    """The training graph (loss included) with external weights, which are
    then deleted: the bundle carries the graph only."""
    import torch
    from torchvision.models import resnet50
    import onnx
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import common
    torch.manual_seed(0)
    model = common.WithCrossEntropy(resnet50(weights=None, num_classes=CLASSES)).train()
    x = torch.zeros(batch, 3, size, size)
    y = torch.zeros(batch, dtype=torch.int64)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "resnet50.onnx")
    common.export_loss_model(model, (x, y), path, ["x", "y"], 17)
    proto = onnx.load(path)
    onnx.save_model(proto, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="resnet50.onnx.data", size_threshold=0)
    json.dump({"batch": batch, "size": size, "classes": CLASSES, "seed": SEED,
               "params": sum(p.numel() for p in model.parameters())},
              open(os.path.join(out, "config.json"), "w"))
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("--out", required=True)
    e.add_argument("--batch", type=int, default=64)
    e.add_argument("--size", type=int, default=224)
    a = p.parse_args()
    print(export(a.out, a.batch, a.size))


if __name__ == "__main__":
    main()
