#!/usr/bin/env bash
# gst-qmetric: one run of a parser fuzzing harness over its corpus.
#   run.sh HARNESS CORPUS_DIR
# A libFuzzer build (meson -Dfuzz=true) fuzzes for $QM_FUZZ_SECONDS (default
# 10) starting from CORPUS_DIR; new inputs go to a scratch directory, never
# into the source tree (set QM_FUZZ_KEEP=DIR to keep them).  A build without
# libFuzzer replays CORPUS_DIR once.  Exit status: the harness's (a finding
# is non-zero and leaves crash-* / leak-* files in $QM_FUZZ_ARTIFACTS, default
# the scratch directory, whose path is printed).
set -u
bin=$1 corpus=$2
[ -x "$bin" ] || { echo "no harness $bin"; exit 77; }
[ -d "$corpus" ] || { echo "no corpus $corpus"; exit 77; }
if "$bin" -help=1 2>&1 | grep -q libFuzzer; then
  work=${QM_FUZZ_KEEP:-$(mktemp -d)}
  mkdir -p "$work"
  art=${QM_FUZZ_ARTIFACTS:-$work}
  echo "fuzzing $(basename "$bin") for ${QM_FUZZ_SECONDS:-10} s; new inputs in $work"
  "$bin" -max_total_time="${QM_FUZZ_SECONDS:-10}" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" "$work" "$corpus"
  rc=$?
  [ -z "${QM_FUZZ_KEEP:-}" ] && [ $rc -eq 0 ] && rm -rf "$work"
  exit $rc
fi
exec "$bin" "$corpus"
