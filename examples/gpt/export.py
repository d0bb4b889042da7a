"""Export the char-level GPT example to ONNX, with its training data and vocabulary.

Run from anywhere:  /usr/bin/python3 examples/gpt/export.py
Writes next to this file: gpt.onnx, tokens.npy, targets.npy, vocab.json
(all byte-reproducible; the text is /usr/share/common-licenses/GPL-3).

Model (examples/gpt/model.py, class GPT, built by make_model(): torch.manual_seed(0)):
    V = 80 (76 distinct characters + 4 unused padding ids), T = 64, d_model C = 64,
    4 heads x 16, 2 pre-LayerNorm blocks, MLP 64 -> 256 -> 64, no dropout, batch B = 8.
    Init: Linear/Embedding weights N(0, 0.02), biases 0, LayerNorm 1/0 (initial loss ~ ln 80).
      h = wte[tokens] + wpe.weight                                     [8, 64, 64]
      per block:  h = h + attn.proj(causal_attention(ln_1(h)))
                  h = h + mlp.fc2(GELU_erf(mlp.fc1(ln_2(h))))
        attention: q/k/v = separate Linear(64,64); heads via view(-1,64,4,16).transpose(1,2);
                   att = (q @ k^T) * 0.25; att.masked_fill(~causal_mask, -inf);
                   softmax(-1); @ v; transpose back; reshape(-1,64,64); proj Linear(64,64)
      h = ln_f(h)
      logits = h.reshape(512, 64) @ wte.weight.T                       [512, 80]  (tied)
    loss = F.cross_entropy(logits.view(-1, 80), targets.view(-1))     scalar f32 (mean)

ONNX (opset 17, static shapes, exported with training=TrainingMode.TRAINING and
do_constant_folding=False, initializers embedded and named after the parameters):
    inputs : tokens  int64 [8, 64]
             targets int64 [8, 64]
    output : loss    float32 []   (scalar)
    initializers (38 = 36 parameters + 2 bool buffers):
      wte.weight [80,64]  -- ONE initializer, used by Gather (embedding) and by
                             Transpose -> MatMul (LM head)
      wpe.weight [64,64]  -- added whole (Add), no Gather / Range
      blocks.{0,1}.ln_1.{weight,bias} [64], blocks.{0,1}.ln_2.{weight,bias} [64]
      blocks.{0,1}.attn.{q,k,v,proj}.weight [64,64], .bias [64]
      blocks.{0,1}.mlp.fc1.weight [256,64], .bias [256]
      blocks.{0,1}.mlp.fc2.weight [64,256], .bias [64]
      ln_f.weight [64], ln_f.bias [64]
      blocks.{0,1}.attn.causal_mask  bool [64,64]  (buffer, lower triangular)
    ops    : ['Add', 'Cast', 'Constant', 'Div', 'Erf', 'Gather', 'LayerNormalization',
              'MatMul', 'Mul', 'Not', 'Reshape', 'Softmax', 'SoftmaxCrossEntropyLoss',
              'Transpose', 'Where']

How torch 1.13 exported the pieces:
  * Linear on 3-D input -> Transpose(weight, perm=[1,0]) -> MatMul -> Add(bias, .)
    (no Gemm; the weight Transpose is a node because constant folding is off, which
    is what keeps every parameter a named initializer and the tie intact).
  * LayerNorm -> LayerNormalization(axis=-1, epsilon=1e-5).
  * nn.GELU() (exact) -> Div(x, 1.4142135) -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5).
  * causal mask -> Not(causal_mask) -> Cast(to=BOOL, a no-op) -> Where(., -inf, scores);
    the 1/sqrt(16) scale is Mul by a Constant 0.25.
  * k.transpose(-2,-1) after the head transpose is fused into one Transpose(perm=[0,2,3,1]).
  * view/reshape -> Reshape with Constant shapes such as [-1, 64, 4, 16]; there are
    no Shape/Gather/Concat chains because model.py reshapes with Python ints.
    logits.view(-1, 80) is a no-op Reshape [512,80] -> [512,80]; targets.view(-1) is
    Reshape [8,64] -> [512].
  * F.cross_entropy -> SoftmaxCrossEntropyLoss(reduction='mean', ignore_index=-100).
  * Scalars (0.25, -inf, 1.4142135, 1.0, 0.5) and shapes are Constant nodes, not initializers.

Data (model.make_data()):
    vocab.json: the sorted set of the 76 characters of GPL-3 (ids 0..75; "itos"/"stoi"),
                vocab_size 80 (ids 76..79 never occur), plus the text's sha256.
    tokens.npy  int64 [549, 64]: window i = ids[64 i : 64 i + 64]  (stride 64,
                                 N = (35149 - 1) // 64 = 549 full windows)
    targets.npy int64 [549, 64]: ids[64 i + 1 : 64 i + 65]  (shifted by one character)
    Note 549 is not a multiple of the batch 8: 68 full batches + 5 rows.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import common  # noqa: E402
import model as M  # noqa: E402

OPSET = 17
EXPECTED_OPS = ['Add', 'Cast', 'Constant', 'Div', 'Erf', 'Gather', 'LayerNormalization',
                'MatMul', 'Mul', 'Not', 'Reshape', 'Softmax', 'SoftmaxCrossEntropyLoss',
                'Transpose', 'Where']


def main():
    onnx_path = os.path.join(HERE, "gpt.onnx")
    tok_path, tgt_path = os.path.join(HERE, "tokens.npy"), os.path.join(HERE, "targets.npy")
    vocab_path = os.path.join(HERE, "vocab.json")

    tokens, targets, vocab = M.make_data()
    np.save(tok_path, tokens)
    np.save(tgt_path, targets)
    with open(vocab_path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(vocab, f, indent=1, sort_keys=True, ensure_ascii=True)
        f.write("\n")
    print("tokens", tokens.dtype, tokens.shape, " targets", targets.dtype, targets.shape,
          " chars", vocab["num_chars"], " vocab_size", vocab["vocab_size"],
          " max id", int(tokens.max()))
    assert np.array_equal(tokens[:, 1:], targets[:, :-1])

    model = M.make_model()
    B = M.BATCH
    common.export_loss_model(model, (torch.from_numpy(tokens[:B]), torch.from_numpy(targets[:B])),
                             onnx_path, ["tokens", "targets"], OPSET)
    summary = common.check_exported(onnx_path, model)
    common.compare_with_torch(onnx_path, model, {"tokens": tokens[:B], "targets": targets[:B]})

    # The tied embedding: exactly one initializer, consumed by the Gather and the LM-head path.
    tied = [i for i in summary["initializers"] if i[0] == "wte.weight"]
    assert len(tied) == 1 and sorted(tied[0][4]) == ["Gather", "Transpose"], tied
    assert not any(name.startswith("onnx::") for name, *_ in summary["initializers"])

    print("op types:", summary["ops"])
    if summary["ops"] != EXPECTED_OPS:
        print("WARNING: op types differ from the docstring:", EXPECTED_OPS)
    common.report_files([onnx_path, tok_path, tgt_path, vocab_path])


if __name__ == "__main__":
    main()
