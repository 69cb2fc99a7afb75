#!/usr/bin/python3
"""Writes wordpiece_vocab.txt, the vocabulary of the WordPiece reference check, deterministically
from a corpus (by default the Description fields of /var/lib/dpkg/status plus
wordpiece_multilingual.txt):

    python3 src/process/testdata/make_wordpiece_vocab.py [CORPUS_FILE...]

The corpus goes through wordpiece_reference.basic_tokenize (lower-cased, accents stripped);
then, in this order, each token once at its first position:

  1. [PAD] [UNK] [CLS] [SEP] [MASK]
  2. every character seen at least twice, as a word start and as "##c"
  3. the 4000 most frequent words (seen at least twice)
  4. the 1500 most frequent prefixes (2..6 characters) and the 2500 most frequent "##" suffixes
     (2..8 characters) of the words left out, weighted by their counts

so most words are whole tokens, the rest split into pieces, and rare characters are [UNK]. Ties
sort by the token, so the file depends only on the corpus.
"""
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wordpiece_reference  # noqa: E402

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def dpkg_descriptions(path="/var/lib/dpkg/status"):
    """Each line of every Description field (the synopsis and the long text)."""
    lines = []
    with open(path, encoding="utf-8", errors="replace") as f:
        inside = False
        for line in f.read().split("\n"):
            if line.startswith("Description:"):
                inside = True
                lines.append(line[len("Description:"):].strip())
            elif inside and line.startswith(" "):
                text = line.strip()
                if text != ".":
                    lines.append(text)
            else:
                inside = False
    return lines


def corpus_lines(paths):
    lines = []
    for path in paths:
        with open(path, "rb") as f:
            lines.extend(f.read().decode("utf-8").split("\n"))
    return lines


def top(counter, n, min_count=1):
    ranked = sorted((item for item in counter.items() if item[1] >= min_count),
                    key=lambda item: (-item[1], item[0]))
    return [token for token, _ in ranked[:n]]


def build(lines):
    words = collections.Counter()
    for line in lines:
        words.update(wordpiece_reference.basic_tokenize(line))
    chars = collections.Counter()
    for word, count in words.items():
        for ch in word:
            chars[ch] += count
    vocab = list(SPECIAL)
    for ch in top(chars, len(chars), min_count=2):
        vocab.append(ch)
        vocab.append("##" + ch)
    whole = top(words, 4000, min_count=2)
    vocab.extend(whole)
    kept = set(whole)
    prefixes = collections.Counter()
    suffixes = collections.Counter()
    for word, count in words.items():
        if word in kept:
            continue
        for n in range(2, min(6, len(word) - 1) + 1):
            prefixes[word[:n]] += count
        for n in range(2, min(8, len(word) - 1) + 1):
            suffixes["##" + word[-n:]] += count
    vocab.extend(top(prefixes, 1500))
    vocab.extend(top(suffixes, 2500))
    seen = set()
    out = []
    for token in vocab:
        if token not in seen:
            seen.add(token)
            out.append(token)
    return out


def main():
    paths = sys.argv[1:]
    lines = dpkg_descriptions() + corpus_lines([os.path.join(HERE, "wordpiece_multilingual.txt")])
    lines += corpus_lines(paths)
    vocab = build(lines)
    with open(os.path.join(HERE, "wordpiece_vocab.txt"), "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(vocab) + "\n")
    print(f"wordpiece_vocab.txt: {len(vocab)} tokens from {len(lines)} lines")


if __name__ == "__main__":
    main()
