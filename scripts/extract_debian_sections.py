#!/usr/bin/python3
"""Extracts the text-classification corpus: Debian package descriptions labelled by Section.

Each example is one binary package of Debian 12 (bookworm, main, amd64): its text is the
package's English description (the synopsis line, then the long description), its label the
Section of its archive entry. The long descriptions live in the archive's Translation-en index,
which Debian's container images do not download (Acquire::Languages "none"), so fetch both
indexes into a private lists directory first (this leaves the system's apt state alone):

    mkdir -p /tmp/apt-corpus/lists/partial /tmp/apt-corpus/cache/archives/partial
    apt-get update -o Acquire::Languages=en -o Dir::State::Lists=/tmp/apt-corpus/lists \
        -o Dir::Cache=/tmp/apt-corpus/cache
    /usr/bin/python3 scripts/extract_debian_sections.py --lists /tmp/apt-corpus/lists

and it writes data/debian_sections/{train,test}.tsv (label TAB text, one example a line) and
README.md (the counts). The committed files are the corpus the demo is trained and tested on;
rerunning against a later bookworm point release can change a few packages.

How examples are chosen, and why:
- Classes are eight topical sections whose descriptions talk about different things (CLASSES).
  Language sections (python, perl, ...) would be learned from one word, and libs/devel/utils
  say little about a topic.
- Binary packages of one source package share most of their description ("0ad", "0ad-data",
  ...), so the split is by source package: all of a source's packages are in train or all in
  test, decided by a hash of the source name (stable across runs and Python versions). Without
  that, test accuracy would measure memorised near-duplicates.
- At most MAX_PER_SOURCE packages per source (those with the longest distinct descriptions)
  and at most MAX_PER_CLASS examples per class (the sources in hash order), so that a few big
  sources and the largest sections do not dominate.
- Texts are cut after MAX_WORDS words: the classifier reads at most 128 WordPiece tokens, and
  it keeps the committed test split small.

Licence: each description is part of its package's debian/control file and is distributed under
that package's licence; every package in Debian main is free software (DFSG).
"""

import argparse
import collections
import glob
import hashlib
import os
import subprocess

CLASSES = ["database", "editors", "fonts", "games", "graphics", "mail", "science", "sound"]
MAX_PER_SOURCE = 2
MAX_PER_CLASS = 700
MAX_WORDS = 60
TEST_PERCENT = 15
PACKAGES_GLOB = "*_debian_dists_bookworm_main_binary-amd64_Packages*"
TRANSLATION_GLOB = "*_debian_dists_bookworm_main_i18n_Translation-en*"


def read_index(lists_dir, pattern):
    """Returns the records of the one index matching `pattern`, decompressed by apt itself."""
    paths = sorted(glob.glob(os.path.join(lists_dir, pattern)))
    if len(paths) != 1:
        raise SystemExit(f"{lists_dir}: expected one file matching {pattern}, found {paths}")
    text = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", paths[0]], check=True,
                          capture_output=True).stdout.decode("utf-8")
    records = []
    for block in text.split("\n\n"):
        record, key = {}, None
        for line in block.split("\n"):
            if line.startswith((" ", "\t")) and key is not None:
                record[key] += "\n" + line
            elif ":" in line:
                key, _, value = line.partition(":")
                record[key] = value.strip()
        if record:
            records.append(record)
    return records


def description_text(description):
    """Synopsis and long description as one line: paragraph marks (" .") dropped, words kept."""
    lines = description.split("\n")
    words = lines[0].split()
    for line in lines[1:]:
        line = line.strip()
        if line != ".":
            words.extend(line.split())
    return " ".join(words[:MAX_WORDS])


def source_hash(source):
    return int.from_bytes(hashlib.sha256(source.encode()).digest()[:8], "big")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lists", default="/var/lib/apt/lists",
                        help="apt lists directory holding bookworm's Packages and Translation-en")
    parser.add_argument("--out", default="data/debian_sections")
    args = parser.parse_args()

    descriptions = {(r["Package"], r["Description-md5"]): r["Description-en"]
                    for r in read_index(args.lists, TRANSLATION_GLOB)}
    by_source = collections.defaultdict(list)  # (section, source) -> [(text, package)]
    for record in read_index(args.lists, PACKAGES_GLOB):
        section = record.get("Section", "").split("/")[-1]
        if section not in CLASSES:
            continue
        package = record["Package"]
        key = (package, record.get("Description-md5", ""))
        if key not in descriptions:
            raise SystemExit(f"{package}: no English description in the Translation-en index")
        source = record.get("Source", package).split()[0]
        by_source[(section, source)].append((description_text(descriptions[key]), package))

    splits = {"train": [], "test": []}
    counts = collections.Counter()
    for section in CLASSES:
        sources = sorted((s for (c, s) in by_source if c == section), key=source_hash)
        kept = 0
        for source in sources:
            if kept >= MAX_PER_CLASS:
                break
            texts = sorted(set(t for t, _ in by_source[(section, source)]),
                           key=lambda t: (-len(t), t))[:MAX_PER_SOURCE]
            texts = texts[:MAX_PER_CLASS - kept]
            split = "test" if source_hash(source) % 100 < TEST_PERCENT else "train"
            for text in texts:
                splits[split].append((section, text.replace("\t", " ")))
                counts[(split, section)] += 1
            kept += len(texts)

    os.makedirs(args.out, exist_ok=True)
    for split, rows in splits.items():
        rows.sort(key=lambda row: (CLASSES.index(row[0]), row[1]))
        with open(os.path.join(args.out, f"{split}.tsv"), "w", encoding="utf-8") as f:
            for label, text in rows:
                f.write(f"{label}\t{text}\n")
    lines = ["# Debian package descriptions labelled by Section", "",
             "Written by `scripts/extract_debian_sections.py` (its docstring says how and why)",
             "from Debian 12 (bookworm) main, amd64. Each line of `train.tsv` and `test.tsv` is",
             "`section<TAB>description`. Each description is distributed under its package's",
             "licence (Debian main: DFSG-free).", "",
             "| section | train | test |", "|---|---|---|"]
    for section in CLASSES:
        lines.append(f"| {section} | {counts[('train', section)]} | {counts[('test', section)]} |")
    lines.append(f"| total | {len(splits['train'])} | {len(splits['test'])} |")
    with open(os.path.join(args.out, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[7:]))


if __name__ == "__main__":
    main()
