#!/usr/bin/env bash
# flashtick_make_model end to end: writes a loadable model repository entry, leaves an
# identical one alone, refuses to overwrite a different one without --force, and
# rejects bad flags. usage: make_model_test.sh <path to flashtick_make_model>
set -euo pipefail
tool=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$tool" --out "$dir" --name t --seed 3 --width 32 --heads 2
test -s "$dir/t/1/config.json" && test -s "$dir/t/1/model.safetensors"
grep -q '"width": 32' "$dir/t/1/config.json"
"$tool" --out "$dir" --name t --seed 3 --width 32 --heads 2 | grep -q "leaving it"
if "$tool" --out "$dir" --name t --seed 4 --width 32 --heads 2 2>/dev/null; then
  echo "FAIL: overwrote a different model without --force"; exit 1
fi
"$tool" --out "$dir" --name t --seed 4 --width 32 --heads 2 --force
if "$tool" --out "$dir" --bogus 1 2>/dev/null; then echo "FAIL: accepted --bogus"; exit 1; fi
if "$tool" --out "$dir" --heads 3 2>/dev/null; then echo "FAIL: accepted width 64 with 3 heads"; exit 1; fi
echo "make_model_test: OK"
