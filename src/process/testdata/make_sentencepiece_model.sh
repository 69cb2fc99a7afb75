#!/usr/bin/env bash
# Writes the SentencePiece test data of src/process deterministically:
#
#   src/process/testdata/make_sentencepiece_model.sh
#
#   spm_test.model         a 400-piece unigram model trained by Debian's `spm_train`
#                          (package sentencepiece) on the GNU GPL v3 text Debian ships in
#                          base-files (/usr/share/common-licenses/GPL-3), with a pad piece
#                          (id 3) besides <unk>=0, <s>=1, </s>=2, no normalisation
#   spm_sentences.txt      a few lines to encode (the test's inputs)
#   spm_sentences.ids      what `spm_encode --output_format=id` makes of each line, the
#                          reference sentencepiece_tokenizer_test compares with
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The model records its training options, so the prefix is relative (the same on every run);
# identity normalisation keeps the model small (NFKC's table alone is ~240 KB).
(cd "$tmp" && spm_train --input=/usr/share/common-licenses/GPL-3 --model_prefix=spm \
  --vocab_size=400 --model_type=unigram --character_coverage=1.0 --pad_id=3 --num_threads=1 \
  --normalization_rule_name=identity --shuffle_input_sentence=false --minloglevel=2 \
  >/dev/null 2>&1)
cp "$tmp/spm.model" "$here/spm_test.model"

cat > "$here/spm_sentences.txt" <<'TEXT'
This License applies to any program or other work.
You may convey a work based on the Program, or the modifications.
Ünïcödé text, unseen words: zyxwvut qqq 12345!
  leading and   repeated   spaces  
TEXT
spm_encode --model="$here/spm_test.model" --output_format=id < "$here/spm_sentences.txt" \
  > "$here/spm_sentences.ids"
wc -c "$here/spm_test.model"
