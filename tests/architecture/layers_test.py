#!/usr/bin/env python3
"""The layer rules of ARCHITECTURE.md ("Layer rules"), checked against every quoted
#include of the source tree.

Each layer folder may include itself and the layers its row of the rules table lists.
kernels/cpu/ and kernels/cuda/ are private to kernels/: other layers reach a backend
through kernels/*.h, kernels/ops/ and kernels/common/. Headers generated from proto/
("flashtick/v1/...", "inference/...") belong to proto/. bench/, tests/, fuzz/ and
examples/ are not layers and may include anything. An include outside these rules
fails the test unless the "Known crossings" table of ARCHITECTURE.md names it; a named
crossing that no longer exists fails too, so the table only shrinks.

Usage: layers_test.py [repository root]   (exit 0: every include follows the rules)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE = re.compile(r"\.(cc|h|cu|cuh)$")
PROTO_GENERATED = ("flashtick/", "inference/")  # generated from proto/*.proto
PRIVATE = ("kernels/cpu/", "kernels/cuda/")  # kernels/ internals
CODE = re.compile(r"`([^`]+)`")


def section_rows(text, heading):
    """The table rows (lists of cells) of the section starting at `heading`."""
    start = text.find(heading)
    if start < 0:
        sys.exit(f"ARCHITECTURE.md has no section {heading!r}")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("#"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header row


def layer_of(path, layers):
    """The layer a repository path (or an include path) belongs to, or None."""
    if path.startswith(PROTO_GENERATED):
        return "proto/"
    top = path.split("/", 1)[0] + "/"
    return top if top in layers else None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    text = open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8").read()
    allowed = {}
    for cells in section_rows(text, "## Layer rules"):
        layer = CODE.findall(cells[0])[0]
        allowed[layer] = set(CODE.findall(cells[1])) | {layer}
    known = set()
    for cells in section_rows(text, "### Known crossings"):
        for inc in CODE.findall(cells[1]):
            known.add((CODE.findall(cells[0])[0], inc))
    if not allowed:
        sys.exit("ARCHITECTURE.md's layer rules table is empty")

    crossings, seen = [], set()
    checked = 0
    for layer in allowed:
        base = os.path.join(root, layer)
        for dirpath, _, names in os.walk(base):
            for name in names:
                if not SOURCE.search(name):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                for inc in INCLUDE.findall(open(os.path.join(root, path), encoding="utf-8",
                                                errors="replace").read()):
                    checked += 1
                    target = layer_of(inc, set(allowed) | {"tests/", "bench/", "fuzz/"})
                    if target is None:
                        continue  # a third-party header, or one beside the file
                    private = inc.startswith(PRIVATE) and layer != "kernels/"
                    if target in allowed[layer] and not private:
                        continue
                    if (path, inc) in known:
                        seen.add((path, inc))
                        continue
                    why = "a private kernels/ header" if private else f"{layer} may not include {target}"
                    crossings.append(f"{path}: #include \"{inc}\" ({why})")
    stale = sorted(known - seen)
    for c in crossings:
        print("CROSSING", c)
    for path, inc in stale:
        print(f"STALE    ARCHITECTURE.md lists {path} -> {inc}, which no longer exists: remove the row")
    print(f"{checked} includes in {len(allowed)} layers checked; {len(crossings)} crossings, "
          f"{len(seen)} known, {len(stale)} stale")
    return 1 if crossings or stale else 0


if __name__ == "__main__":
    sys.exit(main())
