"""BERT's WordPiece tokenization in Python: the reference the text demo is trained with and the
end-to-end test checks the server's `wordpiece_tokenize` step against.

Written from the algorithm's description (BERT's BasicTokenizer, then greedy longest-match-first
WordPiece), standard library only:

- clean: drop U+0000, U+FFFD and every character of a C* category except tab, CR and LF, which
  become spaces like every other whitespace character;
- each CJK ideograph becomes a word of its own;
- split at whitespace; with lower_case, lower-case each word (Python's full case mapping), then
  decompose it (NFD) and drop its nonspacing marks (Mn);
- every ASCII punctuation character and every Unicode P* character is a word of its own;
- per word: the longest vocabulary entry that prefixes it, then the longest "##" entry that
  prefixes the rest, and so on; a word where no entry matches, or longer than
  max_input_chars_per_word, is one [UNK];
- encode: [CLS] pieces [SEP], the pieces cut to max_length - 2, then [PAD] to max_length, with
  attention_mask 1 on every token that is not padding.
"""

import unicodedata

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _is_whitespace(char):
    return char in " \t\n\r" or unicodedata.category(char) in ("Zs", "Zl", "Zp")


def _is_control(char):
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


def _is_punctuation(char):
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokenize(text, lower_case=True):
    """The words of `text` before WordPiece: cleaned, lower-cased, accents and punctuation split."""
    chars = []
    for char in text:
        cp = ord(char)
        if cp == 0 or cp == 0xFFFD or _is_control(char):
            continue
        if _is_whitespace(char):
            chars.append(" ")
        elif _is_cjk(cp):
            chars.extend((" ", char, " "))
        else:
            chars.append(char)
    words = []
    for word in "".join(chars).split(" "):
        if not word:
            continue
        if lower_case:
            word = word.lower()
            word = "".join(c for c in unicodedata.normalize("NFD", word)
                           if unicodedata.category(c) != "Mn")
        current = []
        for char in word:
            if _is_punctuation(char):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
    return words


class WordPiece:
    """A vocabulary (token -> id) and the tokenization against it."""

    def __init__(self, tokens, lower_case=True, max_input_chars_per_word=100):
        self.vocab = {}
        for index, token in enumerate(tokens):
            self.vocab[token] = index  # a repeated token: the later id wins
        for token in SPECIAL_TOKENS[:4]:
            if token not in self.vocab:
                raise ValueError(f"vocabulary lacks {token}")
        self.lower_case = lower_case
        self.max_input_chars_per_word = max_input_chars_per_word

    @classmethod
    def from_file(cls, path, **kwargs):
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return cls([line[:-1] if line.endswith("\r") else line for line in lines], **kwargs)

    def word_pieces(self, word):
        """The pieces of one basic-tokenized word, or ["[UNK]"]."""
        if len(word) > self.max_input_chars_per_word:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text):
        return [p for w in basic_tokenize(text, self.lower_case) for p in self.word_pieces(w)]

    def encode(self, text, max_length=128):
        """(input_ids, attention_mask), each max_length ints."""
        pieces = self.tokenize(text)[:max_length - 2]
        ids = ([self.vocab["[CLS]"]] + [self.vocab[p] for p in pieces] + [self.vocab["[SEP]"]])
        mask = [1] * len(ids) + [0] * (max_length - len(ids))
        ids += [self.vocab["[PAD]"]] * (max_length - len(ids))
        return ids, mask
