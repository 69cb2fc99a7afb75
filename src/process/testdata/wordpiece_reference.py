#!/usr/bin/python3
"""BERT's WordPiece tokenization in plain Python: the reference Brigade's C++ tokenizer
(src/process/wordpiece_tokenizer.h) is checked against, line by line.

Written from the published algorithm (BERT's BasicTokenizer followed by its greedy
longest-match-first WordpieceTokenizer), with Python's unicodedata for the character categories
and NFD, and str.lower() for lower-casing:

  clean        drop U+0000, U+FFFD and C* characters except tab/CR/LF; whitespace becomes " "
  CJK          spaces around each CJK ideograph
  words        split at whitespace; lower-case and/or NFD + drop Mn, per word
  punctuation  each punctuation character (ASCII ranges, P*) a word of its own
  wordpiece    longest prefix in the vocabulary, then "##" pieces; [UNK] for the word when a
               position matches nothing or the word is over max_input_chars_per_word

Used as a module by wordpiece_reference_test.py and bench/tokenizer_bench.py; run alone it
tokenizes stdin, one line per line, and prints the ids:

    python3 src/process/testdata/wordpiece_reference.py VOCAB [--cased] [--no-strip-accents]
"""
import argparse
import sys
import unicodedata


def load_vocab(path):
    """token -> id (line number from 0); a later duplicate wins, an empty line counts."""
    with open(path, "rb") as f:
        data = f.read().decode("utf-8")
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vocab = {}
    for index, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]
        vocab[line] = index
    return vocab


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def clean_text(text):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or is_control(ch):
            continue
        out.append(" " if is_whitespace(ch) else ch)
    return "".join(out)


def space_cjk(text):
    out = []
    for ch in text:
        if is_cjk(ord(ch)):
            out.extend((" ", ch, " "))
        else:
            out.append(ch)
    return "".join(out)


def strip_accents(word):
    return "".join(ch for ch in unicodedata.normalize("NFD", word)
                   if unicodedata.category(ch) != "Mn")


def split_punctuation(word):
    pieces = []
    current = []
    for ch in word:
        if is_punctuation(ch):
            if current:
                pieces.append("".join(current))
                current = []
            pieces.append(ch)
        else:
            current.append(ch)
    if current:
        pieces.append("".join(current))
    return pieces


def basic_tokenize(text, lower_case=True, strip=True):
    """The words of `text` after cleaning, CJK spacing, case/accents and punctuation."""
    words = []
    for token in space_cjk(clean_text(text)).split():
        if lower_case:
            token = token.lower()
        if strip:
            token = strip_accents(token)
        words.extend(split_punctuation(token))
    return " ".join(words).split()


def wordpiece(word, vocab, max_chars=100):
    """The pieces of one word (a list of tokens), or ["[UNK]"]."""
    if len(word) > max_chars:
        return ["[UNK]"]
    pieces = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end]
            if start > 0:
                piece = "##" + piece
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return ["[UNK]"]
        pieces.append(found)
        start = end
    return pieces


class Tokenizer:
    def __init__(self, vocab, lower_case=True, strip=None, max_chars=100):
        self.vocab = vocab
        self.lower_case = lower_case
        self.strip = lower_case if strip is None else strip
        self.max_chars = max_chars

    def tokens(self, text):
        out = []
        for word in basic_tokenize(text, self.lower_case, self.strip):
            out.extend(wordpiece(word, self.vocab, self.max_chars))
        return out

    def ids(self, text):
        return [self.vocab[t] for t in self.tokens(text)]

    def encode(self, text, max_length):
        """input_ids and attention_mask: [CLS] ids[:max_length - 2] [SEP], padded."""
        ids = [self.vocab["[CLS]"]] + self.ids(text)[:max_length - 2] + [self.vocab["[SEP]"]]
        mask = [1] * len(ids) + [0] * (max_length - len(ids))
        return ids + [self.vocab["[PAD]"]] * (max_length - len(ids)), mask


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vocab")
    parser.add_argument("--cased", action="store_true", help="no lower-casing")
    parser.add_argument("--no-strip-accents", action="store_true")
    args = parser.parse_args()
    tokenizer = Tokenizer(load_vocab(args.vocab), lower_case=not args.cased,
                          strip=False if args.no_strip_accents else None)
    for line in sys.stdin.read().split("\n"):
        print(" ".join(str(i) for i in tokenizer.ids(line)))


if __name__ == "__main__":
    main()
