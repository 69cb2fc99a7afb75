#!/usr/bin/python3
"""Trains the text demo: a WordPiece vocabulary and a classifier of Debian package descriptions.

Run with Debian's python (python3-torch, python3-numpy, python3-onnx to check the export):

    /usr/bin/python3 scripts/train_text_classifier.py

It reads data/debian_sections/{train,test}.tsv (scripts/extract_debian_sections.py wrote them),
and writes into the model repository (--models-dir, default models/):
  text_tokenizer/1/vocab.txt       the vocabulary, built from the training split alone
  text_classifier/1/model.onnx     input_ids, attention_mask INT64 [batch, 128] -> logits FP32
                                   [batch, classes] (opset 13, dynamic batch dimension)
  text_classifier/labels.txt       the class names, in logit order
  text_top3/1/labels.txt           the same names, for the top-k step that reports them
  text_classifier/metrics.json     test accuracy and how it was trained
and prints the test accuracy. The config.pbtxt files are written by hand, not by this script.

The vocabulary (build_vocab), BERT-style: the five special tokens first, then every character of
the training words both as a word start and as a "##" continuation (so almost nothing becomes
[UNK]), then whole words seen at least MIN_WORD_COUNT times, most frequent first, then the most
frequent word starts and "##" word endings (2 to 6 characters) of the words left out, weighted
by how often those words occur: the pieces greedy longest-match-first WordPiece can split a rare
word into ("##ing", "##er", "synth" + "##esizer"). Ties are broken alphabetically, so the file is
the same on every run.

The model: an embedding of each token, averaged over the tokens the attention mask keeps, then a
two-layer MLP. Brigade's ONNX engine runs every op of it (Gather, Cast, Unsqueeze, Mul,
ReduceSum, Clip, Div, Gemm, Relu).

Training is deterministic (fixed seeds, deterministic algorithms, one thread, seeded shuffle):
two runs write the same vocab.txt and the same accuracy. About 30 s on one core of the 2-core
dev machine.
"""

import argparse
import collections
import json
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402  (after the environment is set)
import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from bert_wordpiece import SPECIAL_TOKENS, WordPiece, basic_tokenize  # noqa: E402

MAX_LENGTH = 128
MIN_WORD_COUNT = 3
MAX_WORDS = 5000
MAX_PIECES = 1500


def read_split(path):
    labels, texts = [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            label, sep, text = line.rstrip("\n").partition("\t")
            if not sep:
                raise ValueError(f"{path}:{number}: no tab between label and text")
            labels.append(label)
            texts.append(text)
    return labels, texts


def build_vocab(texts):
    """The token list (id = index); see the module docstring for the method."""
    word_counts = collections.Counter(w for t in texts for w in basic_tokenize(t))
    chars = sorted({c for w in word_counts for c in w})
    tokens = list(SPECIAL_TOKENS) + chars + ["##" + c for c in chars]
    by_frequency = sorted(word_counts.items(), key=lambda item: (-item[1], item[0]))
    words = [w for w, n in by_frequency if n >= MIN_WORD_COUNT and len(w) > 1][:MAX_WORDS]
    tokens += words
    kept = set(words)
    piece_counts = collections.Counter()
    for word, count in word_counts.items():
        if word in kept:
            continue
        for size in range(2, 7):
            if size < len(word):
                piece_counts[word[:size]] += count
                piece_counts["##" + word[-size:]] += count
    known = set(tokens)
    pieces = sorted((item for item in piece_counts.items() if item[0] not in known),
                    key=lambda item: (-item[1], item[0]))
    tokens += [p for p, _ in pieces[:MAX_PIECES]]
    return tokens


class MeanPoolClassifier(nn.Module):
    """Token embeddings, their mean over the unmasked tokens, then Linear-ReLU-Linear."""

    def __init__(self, vocab_size, classes, dim=64, hidden=64):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim)
        self.dropout = nn.Dropout(0.2)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, input_ids, attention_mask):
        mask = attention_mask.to(torch.float32).unsqueeze(-1)
        summed = (self.embedding(input_ids) * mask).sum(1)
        pooled = summed / mask.sum(1).clamp(min=1.0)
        return self.fc2(F.relu(self.fc1(self.dropout(pooled))))


def encode_all(tokenizer, texts):
    pairs = [tokenizer.encode(t, MAX_LENGTH) for t in texts]
    ids = torch.tensor([p[0] for p in pairs], dtype=torch.int64)
    mask = torch.tensor([p[1] for p in pairs], dtype=torch.int64)
    return ids, mask


def evaluate(model, ids, mask, y):
    model.eval()
    with torch.inference_mode():
        return float((model(ids, mask).argmax(1) == y).float().mean())


def train(model, ids, mask, y, epochs, lr, batch_size, seed):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps_per_epoch = (ids.shape[0] + batch_size - 1) // batch_size
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=lr, epochs=epochs, steps_per_epoch=steps_per_epoch)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(ids.shape[0], generator=generator)
        total_loss = 0.0
        for step in range(steps_per_epoch):
            index = order[step * batch_size:(step + 1) * batch_size]
            loss = F.cross_entropy(model(ids[index], mask[index]), y[index])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total_loss += float(loss) * index.shape[0]
        print(f"epoch {epoch + 1}/{epochs}: train loss {total_loss / ids.shape[0]:.4f}",
              file=sys.stderr, flush=True)


def export_onnx(model, path, ids, mask):
    model.eval()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    torch.onnx.export(model, (ids[:2], mask[:2]), path, opset_version=13,
                      input_names=["input_ids", "attention_mask"], output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch"}, "attention_mask": {0: "batch"},
                                    "logits": {0: "batch"}},
                      do_constant_folding=True)
    try:
        import onnx  # python3-onnx; only used to validate the export.
        onnx.checker.check_model(onnx.load(path))
    except ImportError:
        print("python3-onnx not installed: ONNX export not checked", file=sys.stderr)


def write_text(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default="data/debian_sections")
    parser.add_argument("--models-dir", default="models", help="model repository to write into")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)

    train_labels, train_texts = read_split(os.path.join(args.data_dir, "train.tsv"))
    test_labels, test_texts = read_split(os.path.join(args.data_dir, "test.tsv"))
    classes = sorted(set(train_labels))
    unknown = sorted(set(test_labels) - set(classes))
    if unknown:
        raise ValueError(f"test split has labels the training split lacks: {unknown}")

    tokens = build_vocab(train_texts)
    tokenizer = WordPiece(tokens)
    x_train, m_train = encode_all(tokenizer, train_texts)
    x_test, m_test = encode_all(tokenizer, test_texts)
    y_train = torch.tensor([classes.index(label) for label in train_labels])
    y_test = torch.tensor([classes.index(label) for label in test_labels])
    unk = tokenizer.vocab["[UNK]"]
    unk_rate = float((x_test == unk).sum()) / float(m_test.sum())

    model = MeanPoolClassifier(len(tokens), len(classes))
    params = sum(p.numel() for p in model.parameters())
    start = time.monotonic()
    train(model, x_train, m_train, y_train, args.epochs, args.lr, args.batch_size, args.seed)
    train_seconds = time.monotonic() - start
    accuracy = evaluate(model, x_test, m_test, y_test)
    print(f"text_classifier: test accuracy {accuracy:.4f} on {len(test_texts)} descriptions, "
          f"{len(tokens)} tokens, {params} parameters, trained in {train_seconds:.1f} s",
          file=sys.stderr)

    write_text(os.path.join(args.models_dir, "text_tokenizer", "1", "vocab.txt"),
               "".join(t + "\n" for t in tokens))
    classifier_dir = os.path.join(args.models_dir, "text_classifier")
    export_onnx(model, os.path.join(classifier_dir, "1", "model.onnx"), x_test, m_test)
    labels = "".join(c + "\n" for c in classes)
    write_text(os.path.join(classifier_dir, "labels.txt"), labels)
    write_text(os.path.join(args.models_dir, "text_top3", "1", "labels.txt"), labels)
    metrics = {
        "model": "text_classifier",
        "corpus": "Debian 12 package descriptions by Section (data/debian_sections)",
        "classes": classes,
        "train_examples": len(train_texts),
        "test_examples": len(test_texts),
        "test_accuracy": round(accuracy, 4),
        "test_unk_rate": round(unk_rate, 4),
        "vocab_size": len(tokens),
        "max_length": MAX_LENGTH,
        "parameter_count": params,
        "training_seconds": round(train_seconds, 1),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "learning_rate": args.lr,
        "seed": args.seed,
        "torch_version": torch.__version__,
    }
    write_text(os.path.join(classifier_dir, "metrics.json"), json.dumps(metrics, indent=2) + "\n")
    print(json.dumps(metrics))


if __name__ == "__main__":
    main()
