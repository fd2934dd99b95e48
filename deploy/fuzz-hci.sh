#!/usr/bin/env bash
# Fuzzes the HCI event path (HCIEventParser, beacon frame decoder, H4 stream framer, command answers) with libFuzzer
# for a bounded time, seeded with the shared test vectors and every event of the shared captures.
#
#   deploy/fuzz-hci.sh                 # 30 seconds
#   FUZZ_SECONDS=600 deploy/fuzz-hci.sh
#
# Exits non-zero if the fuzzer finds a crash, a sanitizer report or a broken parser promise; the input that did it
# is kept in $FUZZ_ARTIFACTS (default .build/fuzz-artifacts) — reproduce with `<binary> <that file>`.
# Needs: swiftc with the fuzzer runtime (the swift.org Linux toolchain has it), python3 (to extract the seeds),
# and shared/ beside the repository (or BEACONMESH_SHARED pointing at it).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${BEACONMESH_SHARED:-$repo/../shared}/data/ble"
seconds="${FUZZ_SECONDS:-30}"
artifacts="${FUZZ_ARTIFACTS:-$repo/.build/fuzz-artifacts}"
swiftc="${SWIFTC:-swiftc}"

if [[ ! -d "$shared/vectors" || ! -d "$shared/captures" ]]; then
    echo "fuzz-hci: shared BLE test data not found at $shared (set BEACONMESH_SHARED)" >&2
    exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/fuzz-hci.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/seeds" "$work/corpus" "$artifacts"

echo "fuzz-hci: compiling the fuzz target with the radio path's sources"
# Only what the radio's bytes go through: BeaconMeshCore's Radio folder and the two Wire files it uses (the beacon's
# key, the timestamp helpers). An optimised compile of all of BeaconMeshCore took 77 s of a core beside the build,
# this one 11 s. A new dependency of the radio path fails this compile with its name: add that file here.
core="$repo/Sources/BeaconMeshCore"
# The linker's "Cannot export local symbol '__asan_…'" warnings are harmless noise: show the log only on failure.
if ! "$swiftc" -parse-as-library -sanitize=fuzzer,address -O -module-name HCIEventParserFuzz \
    "$repo/Tests/Fuzz/HCIEventParserFuzz.swift" $(find "$core/Radio" -name '*.swift' | sort) \
    "$core/Wire/BeaconKey.swift" "$core/Wire/Timestamp.swift" \
    -o "$work/fuzz-hci" > "$work/compile.log" 2>&1; then
    cat "$work/compile.log" >&2
    echo "fuzz-hci: the fuzz target did not compile" >&2
    exit 1
fi

echo "fuzz-hci: extracting seeds from $shared"
python3 - "$shared" "$work/seeds" <<'PY'
import glob, hashlib, json, os, struct, sys

shared, out = sys.argv[1], sys.argv[2]
seeds = set()
for path in glob.glob(os.path.join(shared, "vectors", "*.json")):
    for vector in json.load(open(path)).get("vectors", []):
        try:
            seeds.add(bytes.fromhex(vector.get("hex", "")))
        except ValueError:
            pass
for path in glob.glob(os.path.join(shared, "captures", "*", "*")):
    data = open(path, "rb").read()
    if not data.startswith(b"btsnoop\0"):
        continue
    datalink = struct.unpack(">I", data[12:16])[0]
    offset = 16
    while offset + 24 <= len(data):
        _, included, flags, _, _ = struct.unpack(">IIIIq", data[offset:offset + 24])
        packet = data[offset + 24:offset + 24 + included]
        offset += 24 + included
        if datalink == 1001:
            packet = bytes([(4 if flags & 1 else 1) if flags & 2 else 2]) + packet
        if packet[:1] == b"\x04":
            seeds.add(packet)
for seed in seeds:
    with open(os.path.join(out, hashlib.sha1(seed).hexdigest()), "wb") as f:
        f.write(seed)
print(f"fuzz-hci: {len(seeds)} distinct seeds")
PY

echo "fuzz-hci: fuzzing for ${seconds}s"
"$work/fuzz-hci" -max_total_time="$seconds" -max_len=1024 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work/corpus" "$work/seeds"
echo "fuzz-hci: no crash in ${seconds}s"
