#!/usr/bin/python3
"""WordPiece tokenization speed, Brigade's C++ tokenizer against the Python reference
(src/process/testdata/wordpiece_reference.py, BERT's algorithm in plain Python), on one corpus
in one run, one thread each, max_length 128 (BERT's [CLS] ... [SEP] + padding):

    ninja -C build tokenizer_bench
    /usr/bin/python3 bench/tokenizer_compare.py [--repeat 5]

The corpus is the Description lines of /var/lib/dpkg/status (English prose) and, separately,
src/process/testdata/wordpiece_multilingual.txt repeated 50 times (non-ASCII: ICU's path), with
the committed test vocabulary (src/process/testdata/wordpiece_vocab.txt). Both tokenizers' ids
are compared first, so the table is of the same work. Prints a Markdown table.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.path.join(ROOT, "src", "process", "testdata")
sys.path.insert(0, TESTDATA)
import make_wordpiece_vocab  # noqa: E402
import wordpiece_reference  # noqa: E402


def python_rate(tokenizer, lines, repeat, max_length):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for line in lines:
            tokenizer.encode(line, max_length)
        best = min(best, time.perf_counter() - start)
    return len(lines) / best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "tokenizer_bench"))
    args = parser.parse_args()
    vocab_path = os.path.join(TESTDATA, "wordpiece_vocab.txt")
    vocab = wordpiece_reference.load_vocab(vocab_path)
    tokenizer = wordpiece_reference.Tokenizer(vocab)
    corpora = [
        ("dpkg descriptions", make_wordpiece_vocab.dpkg_descriptions()),
        ("multilingual x50", make_wordpiece_vocab.corpus_lines(
            [os.path.join(TESTDATA, "wordpiece_multilingual.txt")]) * 50),
    ]
    print("| corpus | lines | tokens | Brigade C++ sentences/s | Python reference sentences/s "
          "| speed-up |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, lines in corpora:
            lines = [line.replace("\n", " ") for line in lines if line]
            path = os.path.join(tmp, "corpus.txt")
            with open(path, "wb") as f:
                f.write("\n".join(lines).encode("utf-8"))
            out = subprocess.run([args.bench, vocab_path, path, f"--repeat={args.repeat}"],
                                 check=True, capture_output=True, text=True).stdout.split()
            fields = dict(zip(out[::2], out[1::2]))
            tokens = sum(sum(tokenizer.encode(line, 128)[1]) for line in lines)
            if int(fields["tokens"]) != tokens:
                sys.exit(f"{name}: C++ counted {fields['tokens']} tokens, Python {tokens}")
            cpp = float(fields["sentences_per_s"])
            py = python_rate(tokenizer, lines, args.repeat, 128)
            print(f"| {name} | {len(lines)} | {tokens} | {cpp:,.0f} | {py:,.0f} | "
                  f"{cpp / py:.0f}x |")


if __name__ == "__main__":
    main()
