#!/usr/bin/env bash
# scripts/pack_server.sh on one small binary (flashtick_make_model, which links Abseil's
# shared libraries besides glibc and libstdc++): what is carried and what is left to the
# target (docs/serving.md, "The server on a GPU box: one command"), the checksums, the
# packed binary running from its own lib/, and --verify failing, naming the library, once
# one is missing. About a second; no wheels, no archive.
#   test_pack_server.sh PACK_SCRIPT BINARY
set -uo pipefail
pack_script=$1
binary=$2
command -v ldd > /dev/null || { echo "SKIP: no ldd"; exit 77; }
t=$(mktemp -d /tmp/test_pack_server.XXXXXX)
trap 'rm -rf "$t"' EXIT
fails=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}

mkdir -p "$t/build/sub"
cp "$binary" "$t/build/sub/"
name=$(basename "$binary")
PACK_BINARIES=$name PACK_WHEELS=0 PACK_ARCHIVE=0 bash "$pack_script" "$t/build" "$t/pack" > "$t/pack.log" 2>&1
rc=$?
cat "$t/pack.log"
check "pack exits 0" [ $rc -eq 0 ]
check "binary in bin/" [ -x "$t/pack/bin/$name" ]

# What ldd lists on this machine, split by the script's exclusion list.
ldd "$binary" | awk '/=>/ {print $1}' | sort > "$t/needed"
excluded_re=$(sed -n "s/^EXCLUDE_RE='\(.*\)'\$/\1/p" "$pack_script")
[ -n "$excluded_re" ] || { echo "FAIL: no EXCLUDE_RE in $pack_script"; exit 1; }
grep -Ev "$excluded_re" "$t/needed" > "$t/carried_expected"
if [ ! -s "$t/carried_expected" ]; then
  echo "SKIP: $name links no shared library beyond the system ones (a static build)"
  exit 77
fi
(cd "$t/pack/lib" && ls) | sort > "$t/carried"
check "lib/ holds exactly the non-system libraries ldd lists ($(wc -l < "$t/carried_expected"))" \
  cmp -s "$t/carried" "$t/carried_expected"
check "no glibc, libstdc++ or libgcc_s carried" \
  bash -c "! grep -Eq '^(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux)' '$t/carried'"
check "MANIFEST lists every file with its source" \
  [ "$(grep -vc '^#' "$t/pack/MANIFEST")" -eq "$(($(wc -l < "$t/carried") + 1))" ]
check "SHA256SUMS verify" bash -c "cd '$t/pack' && sha256sum -c --quiet SHA256SUMS"
check "packed binary runs from its lib/" \
  bash -c "LD_LIBRARY_PATH='$t/pack/lib' '$t/pack/bin/$name' --help > /dev/null 2>&1"

victim=$(head -1 "$t/carried")
rm "$t/pack/lib/$victim"
bash "$pack_script" --verify "$t/pack" > "$t/verify.log" 2>&1
rc=$?
cat "$t/verify.log"
check "--verify fails once $victim is gone" [ $rc -ne 0 ]
check "and names it" grep -q "$victim" "$t/verify.log"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
