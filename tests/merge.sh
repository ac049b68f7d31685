#!/bin/bash
# qmetric-merge joins only chunks of one comparison (core/partial.h): a
# chunk that differs from the others in any field of its identity (another
# distorted file, model, subsample, metrics, pixel format, bit depth,
# backend, tool, version, fingerprint, a setting present in one part only,
# a frame both parts read but hashed differently) is refused with exit
# status 2 and a line naming the field; malformed partial files are
# refused; renamed and moved inputs still merge into the whole run's log;
# -o never writes over a part (also through a symbolic or hard link).
#   tests/merge.sh BUILD_DIR
set -uo pipefail
B=$1
YUV=$B/tools/qmetric-yuv
MERGE=$B/tools/qmetric-merge
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# 20 frames of 64x48 4:2:0; dis2.yuv is another encode of the same size;
# long*.yuv: 500 frames (2.3 MB: the fingerprint reads the first and last
# MiB), long_b.yuv differing from long.yuv in frame 247 only
$PY - <<'PY'
import random
random.seed(5)
fs = 64 * 48 * 3 // 2
ref = bytes(random.randrange(256) for _ in range(fs * 20))
open("ref.yuv", "wb").write(ref)
open("dis.yuv", "wb").write(bytes(min(255, b + random.randrange(4)) for b in ref))
open("dis2.yuv", "wb").write(bytes(max(0, b - random.randrange(6)) for b in ref))
long = bytearray(random.randrange(256) for _ in range(fs * 500))
open("long.yuv", "wb").write(long)
long[fs * 247 + 100] ^= 1
open("long_b.yuv", "wb").write(long)
PY
A=(--width 64 --height 48 --threads 1)
score() {  # out.json [args...]: a partial file, or the test fails
  local out=$1; shift
  "$YUV" "${A[@]}" "$@" --partial "$out" 2>"$out.err" || bad "scoring $out: $(cat "$out.err")"
}
refused() {  # name, expected text, merge args...
  local name=$1 want=$2; shift 2
  "$MERGE" -o merged.json "$@" 2>err; local rc=$?
  if [ $rc != 2 ]; then bad "$name: exit $rc, not 2: $(cat err)"
  elif ! grep -qF -- "$want" err; then bad "$name: expected '$want', got: $(cat err)"
  else ok; fi
}
edit() {  # in out python-statements on p (the partial file as a dict)
  $PY - "$1" "$2" "$3" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
exec(sys.argv[3])
open(sys.argv[2], "w").write(json.dumps(p, indent=0))
PY
}

# the reference run: chunks 0..7 and 8..19 merge into the whole run's log
"$YUV" "${A[@]}" -r ref.yuv -d dis.yuv -o whole.json 2>/dev/null || bad "whole run"
score a.json -r ref.yuv -d dis.yuv --frames 8
score b.json -r ref.yuv -d dis.yuv --start 8
if "$MERGE" -o merged.json b.json a.json 2>err &&
   diff <(grep -v '"fps"' whole.json) <(grep -v '"fps"' merged.json) >/dev/null; then ok
else bad "two chunks do not merge into the whole run: $(cat err)"; fi

# one field of the identity changed in the second chunk
score o_dis.json -r ref.yuv -d dis2.yuv --start 8
refused "another distorted file" "differs from a.json (frames 0..7) in inputs.distorted.fingerprint" a.json o_dis.json
score o_model.json -r ref.yuv -d dis.yuv --start 8 --model vmaf_4k_v0.6.1
refused "another model" "in settings.models: vmaf_4k_v0.6.1 sha256:" a.json o_model.json
# the same model's file with one byte more: another content hash
sed 's/"LIBSVMNUSVR"/"LIBSVMNUSVR" /' "$QMETRIC_MODEL_PATH/vmaf_v0.6.1.json" >vmaf_v0.6.1.json
score o_modelfile.json -r ref.yuv -d dis.yuv --start 8 --model "$T/vmaf_v0.6.1.json"
refused "another file of the same model" "in settings.models: vmaf_v0.6.1 sha256:" a.json o_modelfile.json
score o_sub.json -r ref.yuv -d dis.yuv --start 8 --subsample 2
refused "another subsample" "in settings.subsample: 2 against 1" a.json o_sub.json
score o_met.json -r ref.yuv -d dis.yuv --start 8 --metrics vmaf,psnr
refused "other metrics" "in settings.metrics: " a.json o_met.json
# the files read as 10 frames of 4:4:4, or of 10-bit 4:2:0
score a444.json -r ref.yuv -d dis.yuv --pixel_format 444 --frames 4
score b420.json -r ref.yuv -d dis.yuv --start 4
refused "another pixel format" "in inputs.reference.format: 420 against 444" a444.json b420.json
score a10.json -r ref.yuv -d dis.yuv --bitdepth 10 --frames 4
refused "another bit depth" "in inputs.reference.bitdepth: 8 against 10" a10.json b420.json
edit b.json o_backend.json 'p["settings"]["backend"] = "cuda"; p["settings"]["device_metrics"] = p["settings"]["metrics"]'
refused "another backend" "in settings.backend: cuda against cpu" a.json o_backend.json
edit b.json o_tool.json 'p["tool"] = "qmetric-compare"'
refused "another tool" "in tool: qmetric-compare against qmetric-yuv" a.json o_tool.json
edit b.json o_version.json 'p["version"] = "0.0.9"'
refused "another version" "in version: 0.0.9 against" a.json o_version.json
edit b.json o_fp.json 'p["inputs"]["reference"]["fingerprint"] = "0" * 64'
refused "another fingerprint" "in inputs.reference.fingerprint: 0000" a.json o_fp.json
edit b.json o_bytes.json 'p["inputs"]["distorted"]["bytes"] += 4608'
refused "another file size" "in inputs.distorted.bytes: 96768 against 92160" a.json o_bytes.json
edit b.json o_only.json 'del p["settings"]["scale"]'
refused "a setting in one part only" "in settings.scale: (not set) against none" a.json o_only.json
edit b.json o_extra.json 'p["settings"]["scaler"] = "lanczos"'
refused "a setting added" "in settings.scaler: lanczos against (not set)" a.json o_extra.json
# the order of the parts does not matter: the later one is named
refused "named in any order" "o_sub.json (frames 8..19) differs from a.json (frames 0..7)" o_sub.json a.json

# frames both parts read, hashed differently: files of the same size,
# start and end (same fingerprint), frame 247 differs, the chunks meet at 250
score la.json -r long.yuv -d long.yuv --metrics psnr --frames 250
score lb.json -r long.yuv -d long_b.yuv --metrics psnr --start 250
refused "a frame read differently" "in frame_hashes: frame 247 of the distorted input" la.json lb.json
score lb_same.json -r long.yuv -d long.yuv --metrics psnr --start 250
"$MERGE" -o merged.json la.json lb_same.json 2>err && ok || bad "long chunks: $(cat err)"
edit lb_same.json o_nohash.json 'p["frame_hashes"] = [h for h in p["frame_hashes"] if h[0] != 245]'
refused "a boundary frame not hashed" "frame 245, read by both parts, has no hash in o_nohash.json" la.json o_nohash.json

# malformed partial files
edit a.json m_v1.json 'p["qmetric_partial"] = 1'
refused "format 1" "m_v1.json: a partial result of format 1, which does not record its inputs and settings: score this chunk again" m_v1.json b.json
sed '0,/"start": 0,/s//"start": 0, "start": 8,/' a.json >m_dup.json
refused "a key given twice" 'member name "start" given twice' m_dup.json b.json
sed '0,/"bitdepth": 8,/s//"bitdepth": 8, "bitdepth": 10,/' a.json >m_dup2.json
refused "a key given twice in an input" 'member name "bitdepth" given twice' m_dup2.json b.json
edit a.json m_type.json 'p["start"] = "0"'
refused "a wrong type" '"start" is not a number' m_type.json b.json
edit a.json m_type2.json 'p["settings"]["subsample"] = 1'
refused "a setting that is not a string" '"settings.subsample" is not a string' m_type2.json b.json
edit a.json m_missing.json 'del p["settings"]'
refused "a missing field" 'no "settings"' m_missing.json b.json
edit a.json m_missing2.json 'del p["inputs"]["distorted"]["fingerprint"]'
refused "a missing input field" 'no "inputs.distorted.fingerprint"' m_missing2.json b.json
edit a.json m_row.json 'p["rows"][3] = p["rows"][3][:-1]'
refused "a row too short" "row 3 does not have" m_row.json b.json
edit a.json m_count.json 'p["frames"] = 9'
refused "a count that does not match" '"frames" is 9 but there are 8 rows' m_count.json b.json
edit a.json m_unknown.json 'p["comment"] = "x"'
refused "an unknown field" 'unknown field "comment"' m_unknown.json b.json
edit a.json m_hash.json 'p["frame_hashes"][0][1] = "xyz"'
refused "a bad frame hash" "frame_hashes entry 0" m_hash.json b.json
edit a.json m_order.json 'p["frame_hashes"].reverse()'
refused "frame hashes out of order" "frame_hashes: frame" m_order.json b.json
edit a.json m_fp.json 'p["inputs"]["reference"]["fingerprint"] = "abc"'
refused "a bad fingerprint" "is not 64 lower-case hex digits" m_fp.json b.json

# renamed and moved inputs: the same files, the same fingerprints
mkdir -p moved/deeper
cp ref.yuv moved/deeper/source.yuv
cp dis.yuv moved/encode.yuv
score b_moved.json -r moved/deeper/source.yuv -d moved/encode.yuv --start 8
if "$MERGE" -o merged.json a.json b_moved.json 2>err &&
   diff <(grep -v '"fps"' whole.json) <(grep -v '"fps"' merged.json) >/dev/null; then ok
else bad "moved inputs do not merge: $(cat err)"; fi

# -o is never a part: the same name, a symbolic link, a hard link
cp b.json b_keep.json
refused "-o is a part" "-o b.json is the part b.json (the same file)" -o b.json a.json b.json
ln -s b.json link.json
refused "-o is a link to a part" "-o link.json is the part b.json (the same file)" -o link.json a.json b.json
ln b.json hard.json
refused "-o is a hard link to a part" "-o hard.json is the part b.json (the same file)" -o hard.json a.json b.json
cmp -s b.json b_keep.json && ok || bad "a part was changed"

echo "merge: $pass passed, $fail failed"
[ "$fail" = 0 ]
