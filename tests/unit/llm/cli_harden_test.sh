#!/bin/sh
# The poot command refuses bad input up front (issue #13): a FIFO given as a
# model fails at once naming it, the global -v/-vv work before the command,
# bench's flag ranges are errors and a probe too large falls back, and no
# message prints a doubled ": :". Exits 77 (skipped) when a part could not run.
set -u
P=${POOT:?POOT must name the poot binary}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
skipped=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then echo "FAIL $1: expected [$2] got [$3]"; fail=1; else echo "ok $1"; fi
}
has() { # name needle text
  case "$3" in *"$2"*) echo "ok $1" ;; *) echo "FAIL $1: [$3] lacks [$2]"; fail=1 ;; esac
}
lacks() { # name needle text
  case "$3" in *"$2"*) echo "FAIL $1: [$3] has [$2]"; fail=1 ;; *) echo "ok $1" ;; esac
}
mkfifo "$T/model.gguf"
# timeout: a blocking open() would hang here forever; 124 then fails the check.
out=$(timeout 20 "$P" inspect "$T/model.gguf" 2>&1); rc=$?
check inspect-fifo-rc 1 $rc
has inspect-fifo-msg "'$T/model.gguf' is a FIFO (named pipe), not a regular file" "$out"
out=$(timeout 20 "$P" generate -m "$T/model.gguf" -p hi 2>&1); rc=$?
check generate-fifo-rc 1 $rc
has generate-fifo-msg "is a FIFO" "$out"
# Global flags before the command.
out=$("$P" -vv inspect /nonexistent/model.gguf 2>&1); rc=$?
check vv-before-rc 1 $rc
has vv-before-msg "does not exist" "$out"
"$P" -v --help >/dev/null; check v-help-rc 0 $?
# A nested error message has one separator between its parts.
printf "not a model" >"$T/junk.bin"
out=$("$P" generate -m "$T/junk.bin" -p hi 2>&1)
has nested-msg "not GGUF or safetensors; as llama2.c: llama2.c" "$out"
lacks nested-no-double ": :" "$out"
# Bench flag ranges are usage errors before anything loads.
out=$("$P" bench -m "$T/junk.bin" --copy-mib 100000000 2>&1); rc=$?
check bench-range-rc 2 $rc
has bench-range-msg "--copy-mib 100000000 is outside 0..1048576" "$out"
"$P" bench -m "$T/junk.bin" -n -1 >/dev/null 2>&1; check bench-negative-rc 2 $?
# --matmul-precision takes high or medium, one parser for every command.
for c in bench generate serve; do
  out=$("$P" $c -m "$T/junk.bin" --matmul-precision fast 2>&1); rc=$?
  check $c-precision-rc 2 $rc
  has $c-precision-msg "matmul precision 'fast': expected high or medium" "$out"
done
# A probe too large for the device falls back to the largest size that fits
# and says so, never "0.00 GB/s" (--probe-limit-mib stands in for a small
# device, so the fallback stays fast).
D=${POOT_DATA_DIR:-}
m=$D/models/stories260K/stories260K.bin
if [ -n "$D" ] && [ -f "$m" ]; then
  out=$("$P" bench -m "$m" -p 2 -n 2 --eager-steps 1 --copy-mib 1048576 --probe-limit-mib 4 2>&1); rc=$?
  if echo "$out" | grep -q "no device"; then
    echo "SKIP bench-copy-oom: no device"; skipped=1
  else
    check bench-copy-oom-rc 0 $rc
    has bench-copy-oom-msg "--copy-mib 1048576: two buffers of 1048576 MiB do not fit" "$out"
    has bench-copy-oom-size "measured with 4 MiB instead" "$out"
    lacks bench-copy-oom-no-zero " 0.00 GB/s" "$out"
  fi
else
  echo "SKIP bench-copy-oom: the shared data folder is absent (POOT_DATA_DIR)"; skipped=1
fi
[ $fail -ne 0 ] && exit 1
[ $skipped -ne 0 ] && exit 77
exit 0
