#!/bin/sh
# poot tokenize / detokenize on a vocabulary-only GGUF, a tokenizer.json
# folder and a llama2.c tokenizer.bin: exact ids, round trips, exit codes.
set -u
D=${POOT_DATA_DIR:-}
if [ -z "$D" ] || [ ! -f "$D/vocab/ggml-vocab-llama-spm.gguf" ]; then
  echo "SKIP: the shared data folder is absent (POOT_DATA_DIR)"; exit 77
fi
P=${POOT:?POOT must name the poot binary}
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then echo "FAIL $1: expected [$2] got [$3]"; fail=1; else echo "ok $1"; fi
}
spm=$D/vocab/ggml-vocab-llama-spm.gguf
check spm-bos "1 15043 3186" "$(printf 'Hello world' | "$P" tokenize -m "$spm")"
check spm-no-bos "15043 3186" "$(printf 'Hello world' | "$P" tokenize -m "$spm" --no-bos)"
check spm-special "1 1 6324" "$(printf '<s>Hi' | "$P" tokenize -m "$spm" --parse-special)"
check spm-plain "1 529 29879 29958 18567" "$(printf '<s>Hi' | "$P" tokenize -m "$spm")"
check spm-detok "Hello world" "$(echo '1 15043 3186' | "$P" detokenize -m "$spm")"
check spm-detok-special "<s> Hello" "$(echo '[1, 15043]' | "$P" detokenize -m "$spm" --special)"
l2c=$D/models/stories260K/tok512.bin
check l2c "1 403 407 261 378" "$(printf 'Once upon a time' | "$P" tokenize -m "$l2c")"
check l2c-detok "Once upon a time" "$(echo '1 403 407 261 378' | "$P" detokenize -m "$l2c")"
q3=$D/hf-tokenizers/qwen3
check qwen3-special "151644 872 198 9707" "$(printf '<|im_start|>user\nHello' | "$P" tokenize -m "$q3" --parse-special)"
text='Grüße, 世界! 🦙 tabs	and  spaces
new line'
for m in "$spm" "$D/vocab/ggml-vocab-llama-bpe.gguf" "$D/vocab/ggml-vocab-qwen2.gguf" \
         "$D/vocab/ggml-vocab-gpt-2.gguf" "$D/hf-tokenizers/llama3" "$q3" \
         "$D/hf-tokenizers/llama2/tokenizer.json"; do
  back=$(printf '%s' "$text" | "$P" tokenize -m "$m" | "$P" detokenize -m "$m")
  check "round-trip $(basename "$m")" "$text" "$back"
done
# Exit codes: usage 2, failure 1, help 0.
"$P" tokenize >/dev/null 2>&1; check usage-rc 2 $?
"$P" tokenize -m /nonexistent </dev/null >/dev/null 2>&1; check missing-rc 1 $?
echo "1 x" | "$P" detokenize -m "$spm" >/dev/null 2>&1; check bad-id-rc 1 $?
echo "999999" | "$P" detokenize -m "$spm" >/dev/null 2>&1; check range-rc 1 $?
"$P" detokenize --help >/dev/null; check help-rc 0 $?
exit $fail
