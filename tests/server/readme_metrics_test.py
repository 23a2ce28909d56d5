"""The README's metrics table lists every family flashtickd exports ("documented
in the README with one line each"): names registered in server/metrics/*.cc through
prometheus-cpp's builders, and the names the scrape-time collectors emit. Fails naming
the families the README lacks, and README rows that name no exported family."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def exported_families():
    names = set()
    for source in (ROOT / "server" / "metrics").glob("*.cc"):
        text = source.read_text()
        names |= set(re.findall(r'\.Name\("([a-z_:]+)"\)', text))  # registry families
        names |= set(re.findall(r'"((?:flashtick|process)_[a-z_]+)"', text))  # collectors
    return names


def readme_rows():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Watching the metrics", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([a-z_]+)[{`]", row.split("|")[1])}


def main():
    exported, documented = exported_families(), readme_rows()
    if not exported:
        print("found no metric families in server/metrics/; the test's patterns are stale")
        return 1
    missing, stale = sorted(exported - documented), sorted(documented - exported)
    print(f"{len(exported)} families exported, {len(documented)} in the README's table")
    for name in missing:
        print(f"not in the README's metrics table: {name}")
    for name in stale:
        print(f"in the README's table but not exported: {name}")
    return 1 if missing or stale else 0


if __name__ == "__main__":
    sys.exit(main())
