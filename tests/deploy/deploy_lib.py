"""Shared helpers of the deployment tests (tests/deploy/test_*.py).

Finds the repository, collects every PromQL expression the deployment uses (the
Grafana dashboard's panel queries and variables, the alert rules) and extracts the
metric names each one reads. The extractor tokenizes PromQL by its grammar
(https://prometheus.io/docs/prometheus/latest/querying/basics/): identifiers
followed by "(" are functions or aggregations, identifiers after by/without/on/
ignoring/group_left/group_right are label lists, strings, label matchers, ranges
and durations are dropped; what is left are metric names.
"""
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "flashtick.json"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
PLANNED = ROOT / "tests" / "deploy" / "planned_metrics.txt"

# Grafana's built-in interval variables become a duration; other $variables only
# appear inside label-matcher strings, which the extractor drops anyway.
GRAFANA_DURATIONS = ("$__rate_interval", "$__interval", "$__range")

_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
             "and", "or", "unless", "offset", "atan2", "inf", "nan"}
_LABEL_LIST_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
_TOKEN = re.compile(r"""
    (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<range>\[[^\]]*\])
  | (?P<number>0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:ms|s|m|h|d|w|y)?(?:\d+(?:ms|s|m|h|d|w|y))*)
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<punct>[(){},=!~<>+\-*/%^@]+)
  | (?P<space>\s+)
""", re.VERBOSE)


def substitute_grafana(expr):
    """A Grafana panel query as plain PromQL (for promtool and the extractor)."""
    for var in GRAFANA_DURATIONS:
        expr = expr.replace(var, "5m")
    return re.sub(r"\$\{?\w+\}?", "x", expr)


def tokenize(expr):
    pos, out = 0, []
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot tokenize PromQL at {expr[pos:pos + 20]!r} in {expr!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind != "space":
            out.append((kind, m.group()))
    return out


def metric_names(expr):
    """The metric names a PromQL expression reads, as a set."""
    tokens = tokenize(substitute_grafana(expr))
    names, i, depth_braces = set(), 0, 0
    while i < len(tokens):
        kind, text = tokens[i]
        nxt = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        if kind == "punct":
            depth_braces += text.count("{") - text.count("}")
        elif kind == "ident" and depth_braces > 0:
            # Inside {...}: label names; only __name__="x" names a metric.
            if text == "__name__" and i + 2 < len(tokens) and tokens[i + 2][0] == "string":
                names.add(tokens[i + 2][1][1:-1])
        elif kind == "ident":
            low = text.lower()
            if low in _LABEL_LIST_KEYWORDS and nxt.startswith("("):
                j = i + 1
                while j < len(tokens) and ")" not in tokens[j][1]:
                    j += 1
                i = j + 1
                continue
            if low in _KEYWORDS:
                pass
            elif nxt.startswith("(") or nxt.lower() in ("by", "without"):
                pass  # function, or aggregation operator (`sum by (x) (...)`)
            else:
                names.add(text)
        i += 1
    return names


def dashboard_queries(dashboard=None):
    """[(where, expr)] for every panel target and query variable of the dashboard."""
    d = dashboard or json.loads(DASHBOARD.read_text())
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append((f"panel {p.get('id')} {p.get('title')!r} {t.get('refId')}", t["expr"]))
            walk(p.get("panels", []))

    walk(d.get("panels", []))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            query = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            m = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query.strip())
            if not m:
                raise ValueError(f"variable {v['name']}: expected label_values(<expr>, <label>)")
            out.append((f"variable {v['name']}", m.group(1)))
    return out


def alert_queries(path=ALERTS):
    groups = yaml.safe_load(Path(path).read_text())["groups"]
    return [(f"rule {r.get('alert') or r.get('record')}", r["expr"])
            for g in groups for r in g["rules"]]


def all_queries():
    return dashboard_queries() + alert_queries()


def referenced_metrics():
    """{metric name: [where it is used]} over the dashboard and the alert rules."""
    used = {}
    for where, expr in all_queries():
        for name in metric_names(expr):
            used.setdefault(name, []).append(where)
    return used


def planned_metrics():
    """Names in planned_metrics.txt: queried by the deployment, not exported yet."""
    out = {}
    for n, line in enumerate(PLANNED.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, issue = line.partition(" ")
            out[name] = issue.strip()
    return out


def exported_names(exposition):
    """Sample names in a Prometheus text exposition, plus the series names implied
    by each `# TYPE` line (a family with no children yet still exists)."""
    names = set()
    for line in exposition.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            kind = kind.strip()
            names.add(name)
            if kind == "histogram":
                names.update({name + "_bucket", name + "_sum", name + "_count"})
            elif kind == "summary":
                names.update({name + "_sum", name + "_count"})
        elif line and not line.startswith("#"):
            names.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group())
    return names
