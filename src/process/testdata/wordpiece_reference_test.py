#!/usr/bin/python3
"""The reference check of Brigade's WordPiece tokenizer (CTest process_wordpiece_reference_test):
every line of a real corpus must get the same ids from the C++ tokenizer
(process_wordpiece_tokenize_lines) as from wordpiece_reference.py, in each of the four
lower_case x strip_accents settings.

    /usr/bin/python3 src/process/testdata/wordpiece_reference_test.py \\
        build/src/process/process_wordpiece_tokenize_lines

The corpus: the Description fields of /var/lib/dpkg/status (what this machine has installed,
so English prose with names, versions, paths and URLs), wordpiece_multilingual.txt (accents,
Greek final sigma, Turkish dotted I, CJK, Hangul, RTL scripts with marks, emoji sequences,
controls, Unicode spaces, long words), and 3000 lines of seeded random characters drawn from
the code points Python's Unicode data assigns (mixed with ASCII), so every category is hit.
The vocabulary is the committed wordpiece_vocab.txt (make_wordpiece_vocab.py).
"""
import os
import random
import subprocess
import sys
import tempfile
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_wordpiece_vocab  # noqa: E402
import wordpiece_reference  # noqa: E402

SETTINGS = [(True, True), (False, False), (True, False), (False, True)]


def random_lines(count, seed=20240601):
    """Lines of assigned code points, a third of them ASCII, with spaces between runs."""
    rng = random.Random(seed)
    pool = [chr(cp) for cp in range(0x80, 0x30000)
            if unicodedata.category(chr(cp)) not in ("Cn", "Cs")]
    ascii_chars = [chr(cp) for cp in range(0x20, 0x7F)]
    lines = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randint(1, 60)):
            r = rng.random()
            if r < 0.33:
                chars.append(rng.choice(ascii_chars))
            elif r < 0.45:
                chars.append(" ")
            else:
                chars.append(rng.choice(pool))
        lines.append("".join(chars))
    return lines


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} PATH_TO_process_wordpiece_tokenize_lines")
    binary = sys.argv[1]
    vocab_path = os.path.join(HERE, "wordpiece_vocab.txt")
    vocab = wordpiece_reference.load_vocab(vocab_path)
    sources = []
    if os.path.exists("/var/lib/dpkg/status"):
        sources.append(("dpkg descriptions", make_wordpiece_vocab.dpkg_descriptions()))
    sources.append(("multilingual", make_wordpiece_vocab.corpus_lines(
        [os.path.join(HERE, "wordpiece_multilingual.txt")])))
    sources.append(("random", random_lines(3000)))

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, lines in sources:
            # A line of the corpus holds no "\n": the C++ driver splits the file at "\n".
            lines = [line.replace("\n", " ") for line in lines]
            path = os.path.join(tmp, "corpus.txt")
            with open(path, "wb") as f:
                f.write("\n".join(lines).encode("utf-8"))
            for lower, strip in SETTINGS:
                reference = wordpiece_reference.Tokenizer(vocab, lower_case=lower, strip=strip)
                result = subprocess.run(
                    [binary, vocab_path, str(int(lower)), str(int(strip)), path],
                    check=True, capture_output=True)
                got = result.stdout.decode("utf-8").split("\n")
                if got and got[-1] == "":
                    got.pop()
                if len(got) != len(lines):
                    print(f"{name} lower={lower} strip={strip}: {len(got)} output lines for "
                          f"{len(lines)} input lines")
                    failures += 1
                    continue
                tokens = 0
                unknown = 0
                bad = 0
                for number, (line, out) in enumerate(zip(lines, got), start=1):
                    want = reference.ids(line)
                    tokens += len(want)
                    unknown += want.count(vocab["[UNK]"])
                    if out != " ".join(str(i) for i in want):
                        bad += 1
                        if bad <= 3:
                            print(f"  MISMATCH {name} line {number} lower={lower} "
                                  f"strip={strip}: {line!r}\n    reference {want}\n"
                                  f"    brigade   {out}")
                failures += bad
                print(f"{name:18} lower_case={int(lower)} strip_accents={int(strip)}: "
                      f"{len(lines)} lines, {tokens} tokens ({unknown} [UNK]), "
                      f"{len(lines) - bad} identical")
    if failures:
        sys.exit(f"FAILED: {failures} lines differ")
    print("all lines identical")


if __name__ == "__main__":
    main()
