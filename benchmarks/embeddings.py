"""Benchmark: passage embeddings on ONNX Runtime (the [semantic] extra, no PyTorch) against
sentence-transformers on PyTorch (the baseline of before, in the same run).

For the 4,943 passages of the 500 shared questions: passages/s of each runtime, the cosine of
each ONNX vector with the reference vector of the same passage (the packaged int8 model is
trusted only if the mean is at least 0.99), semantic and hybrid both-hops recall@4 with each, and
the installed size of what each extra pulls in (the distributions of this environment in each
extra's dependency closure).

    python benchmarks/embeddings.py [--questions 500] [--onnx minilm] [--reference PATH]
"""

import argparse
import importlib.metadata as metadata
import re
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages
from rag_eval_pipeline.retrieval.base import document_texts
from rag_eval_pipeline.retrieval.embedded import build_embedded_index, open_embedded_index
from rag_eval_pipeline.retrieval.embedder import (
    MINILM,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
    resolve_embedding_model,
)

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from retrieval_quality import DEFAULT_DATASET, default_model, evaluate_mode  # noqa: E402


def timed_encode(embedder, texts: list[str]) -> tuple[np.ndarray, float]:
    embedder.encode(texts[:64])  # warm-up: first-call allocation and graph setup
    started = time.perf_counter()
    vectors = embedder.encode(texts)
    return vectors, len(texts) / (time.perf_counter() - started)


class Precomputed:
    """The embedder with the passages' vectors already made (timed above): the index build
    reuses them, the questions are embedded as usual."""

    def __init__(self, embedder, texts: list[str], vectors: np.ndarray) -> None:
        self.model_id = embedder.model_id
        self._embedder = embedder
        self._known = {text: row for text, row in zip(texts, vectors)}

    def encode(self, texts, on_progress=None):
        texts = list(texts)
        if all(t in self._known for t in texts):
            return np.stack([self._known[t] for t in texts])
        return self._embedder.encode(texts)


def recall(embedder, passages, cases) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as root:
        manifest = build_embedded_index(passages, Path(root), embedder)
        opened = open_embedded_index(manifest, lambda _: embedder)
        return {
            m: evaluate_mode(opened.for_mode(m), cases)["both_hops_recall@4"] for m in ("semantic", "hybrid")
        }


def closure_bytes(requirements: list[str]) -> tuple[int, set[str]]:
    """Installed bytes of the named distributions and everything they require (as installed here)."""
    seen: set[str] = set()
    pending = [re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements]
    total = 0
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        total += sum((f.size or 0) for f in dist.files or [])
        for requirement in dist.requires or []:
            if "extra ==" in requirement:
                continue
            pending.append(re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-"))
    return total, seen


def extra_requirements(extra: str) -> list[str]:
    return [
        r.split(";")[0] for r in metadata.requires("rag-eval-pipeline") or [] if f'extra == "{extra}"' in r
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--onnx", default=MINILM, help="minilm, an .onnx file or a folder with one")
    parser.add_argument("--reference", default=default_model(), help="a sentence-transformers model")
    args = parser.parse_args()

    questions = read_hotpotqa_file(args.dataset).head(args.questions)
    passages = flatten_passages(questions)
    cases = build_judgement_list(questions)
    texts = document_texts(passages)  # what every backend embeds

    packaged = resolve_embedding_model(args.onnx)
    runtimes = {
        "sentence-transformers, PyTorch (baseline)": SentenceTransformerEmbedder(args.reference),
        f"ONNX Runtime, {args.onnx} as packaged (int8 weights, float compute)": OnnxEmbedder(
            replace(packaged, int8_compute=False)
        ),
        f"ONNX Runtime, {args.onnx} (int8 compute, the default)": make_embedder(packaged),
    }
    vectors, rates = {}, {}
    for label, embedder in runtimes.items():
        vectors[label], rates[label] = timed_encode(embedder, texts)
    baseline = next(iter(runtimes))
    print(f"passages {len(texts)}, reference {args.reference}")
    print()
    print("| runtime | passages/s | x baseline | cosine with reference: mean / p1 / min |")
    print("|---|---|---|---|")
    for label in runtimes:
        cosines = (vectors[baseline] * vectors[label]).sum(axis=1)
        print(
            f"| {label} | {rates[label]:.0f} | {rates[label] / rates[baseline]:.2f} "
            f"| {cosines.mean():.4f} / {np.percentile(cosines, 1):.4f} / {cosines.min():.4f} |"
        )
    print()
    print("| both-hops recall@4 | " + " | ".join(runtimes) + " |")
    print("|---|" + "---|" * len(runtimes))
    recalls = {
        label: recall(Precomputed(embedder, texts, vectors[label]), passages, cases)
        for label, embedder in runtimes.items()
    }
    for mode in ("semantic", "hybrid"):
        print(f"| {mode} | " + " | ".join(f"{recalls[label][mode]:.3f}" for label in runtimes) + " |")
    print()
    base, base_names = closure_bytes(
        [r.split(";")[0] for r in metadata.requires("rag-eval-pipeline") or [] if "extra ==" not in r]
    )
    print("| install | adds to the base install | torch |")
    print("|---|---|---|")
    for extra in ("semantic", "semantic-torch"):
        size, names = closure_bytes(extra_requirements(extra))
        added = size - closure_bytes(sorted(names & base_names))[0]
        print(f"| base + [{extra}] | {added / 1e6:,.0f} MB | {'yes' if 'torch' in names else 'no'} |")
    print(f"| base install (dagster, pandas, SDKs, ...) | {base / 1e6:,.0f} MB | |")


if __name__ == "__main__":
    main()
