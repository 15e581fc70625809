#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Train the prompt guard's shipped statistical model from guard-data/*.jsonl.

    /usr/bin/python3 python/tools/train_guard_model.py [--out PATH]

Standard library only. Each line of guard-data/positive.jsonl and negative.jsonl is
{"text": ..., "label": 1 or 0, "split": "train" or "heldout"}. The features of a text are its
character 3- to 5-grams (of sandlock_guard's prepared form: normalized, whitespace collapsed),
each counted and divided by the text's number of n-grams, so a score is the sigmoid of the bias
plus the mean weight of the text's n-grams: what StatisticalClassifier computes per window.
Plain logistic regression, full-batch gradient descent with L2, deterministic. The model keeps
the TOP_WEIGHTS largest weights, rounded; the numbers printed at the end are those of the file
written, loaded back through StatisticalClassifier and scored on the held-out lines."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from sandlock_guard._classifier import FORMAT, StatisticalClassifier, prepare  # noqa: E402

NGRAM_MIN, NGRAM_MAX = 3, 5
WINDOW, STRIDE = 256, 128
EPOCHS, RATE, L2 = 200, 3000.0, 1e-6
BIAS = -4.0
MIN_DOCS = 2
TOP_WEIGHTS = 4000
THRESHOLD = 0.5
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "sandlock_guard", "models",
                           "injection-ngram.json")


def load(split: str) -> list[tuple[str, int]]:
    out = []
    for name in ("positive.jsonl", "negative.jsonl"):
        with open(os.path.join(HERE, "guard-data", name), encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                if d["split"] == split:
                    out.append((d["text"], int(d["label"])))
    return out


def features(text: str) -> dict[str, float]:
    s = prepare(text)
    c: Counter[str] = Counter()
    for n in range(NGRAM_MIN, NGRAM_MAX + 1):
        c.update(s[i:i + n] for i in range(len(s) - n + 1))
    total = sum(c.values())
    return {g: k / total for g, k in c.items()}


def train(docs: list[tuple[dict[str, float], int]]) -> tuple[dict[str, float], float]:
    """Weights by full-batch gradient descent on the log loss plus L2, the intercept held at
    BIAS: text made only of n-grams the model never saw scores sigmoid(BIAS), low, so the
    classifier speaks up for what it recognizes and leaves the rest to the rules."""
    df: Counter[str] = Counter()
    for x, _ in docs:
        df.update(x.keys())
    grams = sorted(g for g, k in df.items() if k >= MIN_DOCS)
    index = {g: i for i, g in enumerate(grams)}
    rows = [([index[g] for g in x if g in index], [v for g, v in x.items() if g in index], y)
            for x, y in docs]
    w = [0.0] * len(grams)
    n = len(rows)
    for epoch in range(EPOCHS):
        grad = [0.0] * len(grams)
        loss = 0.0
        for idx, val, y in rows:
            z = BIAS + sum(w[i] * v for i, v in zip(idx, val))
            z = max(-60.0, min(60.0, z))
            p = 1.0 / (1.0 + math.exp(-z))
            loss += math.log1p(math.exp(-z)) if y else math.log1p(math.exp(z))
            e = p - y
            for i, v in zip(idx, val):
                grad[i] += e * v
        for i in range(len(w)):
            w[i] -= RATE * (grad[i] / n + L2 * w[i])
        if epoch % 50 == 0 or epoch == EPOCHS - 1:
            print(f"epoch {epoch}: mean log loss {loss / n:.4f}", file=sys.stderr)
    return dict(zip(grams, w)), BIAS


def evaluate(clf: StatisticalClassifier, docs: list[tuple[str, int]]) -> dict[str, float]:
    tp = fp = fn = tn = 0
    for text, y in docs:
        hit = clf.score(text) >= clf.threshold
        tp += hit and y == 1
        fp += hit and y == 0
        fn += (not hit) and y == 1
        tn += (not hit) and y == 0
    return {"precision": tp / max(1, tp + fp), "recall": tp / max(1, tp + fn),
            "accuracy": (tp + tn) / max(1, len(docs)), "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    training = load("train")
    w, b = train([(features(t), y) for t, y in training])
    top = sorted(w.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:TOP_WEIGHTS]
    model = {"format": FORMAT, "version": 1, "ngram_min": NGRAM_MIN, "ngram_max": NGRAM_MAX,
             "window": WINDOW, "stride": STRIDE, "bias": round(b, 4), "threshold": THRESHOLD,
             "weights": {g: round(v, 4) for g, v in sorted(top)}}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(model, f, ensure_ascii=False, indent=0, sort_keys=True)
        f.write("\n")
    clf = StatisticalClassifier(args.out)
    for name, docs in (("train", training), ("heldout", load("heldout"))):
        m = evaluate(clf, docs)
        print(f"{name}: {len(docs)} texts, precision {m['precision']:.3f}, recall "
              f"{m['recall']:.3f}, accuracy {m['accuracy']:.3f} (tp {m['tp']} fp {m['fp']} "
              f"fn {m['fn']} tn {m['tn']})")
    print(f"sha256 {clf.digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
