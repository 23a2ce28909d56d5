"""A small kustomize resolver for the features deploy/k8s uses, so the manifest
tests also run where `kubectl kustomize` is missing; where it is present,
test_k8s.py renders with both and requires the same objects, which keeps this
resolver honest. Supported: resources (files and directories), namespace, labels
(with includeTemplates; includeSelectors must be false), and patches given by
path as strategic-merge patches whose lists of named items (containers, volumes,
env, ...) merge by name and whose other lists are replaced. Anything else in a
kustomization.yaml is an error here, not silently ignored.
"""
import copy
from pathlib import Path

import yaml

SUPPORTED = {"apiVersion", "kind", "resources", "namespace", "labels", "patches"}
CLUSTER_SCOPED = {"Namespace", "PersistentVolume", "ClusterRole", "ClusterRoleBinding",
                  "StorageClass", "CustomResourceDefinition", "PriorityClass"}
# Pod-template label paths kustomize's labels.includeTemplates writes to.
TEMPLATE_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


def load_docs(path):
    return [d for d in yaml.safe_load_all(Path(path).read_text()) if d]


def merge(base, patch):
    """Strategic merge of `patch` into `base` (both plain YAML data)."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    if (isinstance(base, list) and isinstance(patch, list) and base and patch
            and all(isinstance(x, dict) and "name" in x for x in base + patch)):
        out = [copy.deepcopy(x) for x in base]
        index = {x["name"]: i for i, x in enumerate(out)}
        for item in patch:
            if item["name"] in index:
                out[index[item["name"]]] = merge(out[index[item["name"]]], item)
            else:
                out.append(copy.deepcopy(item))
        return out
    return copy.deepcopy(patch)


def build(directory):
    """The objects `kubectl kustomize directory` would print, as a list of dicts."""
    directory = Path(directory)
    kfile = directory / "kustomization.yaml"
    if not kfile.exists():
        raise FileNotFoundError(f"{directory}: no kustomization.yaml")
    k = yaml.safe_load(kfile.read_text())
    unknown = set(k) - SUPPORTED
    if unknown:
        raise ValueError(f"{kfile}: fields this resolver does not implement: {sorted(unknown)}")

    objects = []
    for res in k.get("resources", []):
        path = (directory / res).resolve()
        if path.is_dir():
            objects.extend(build(path))
        elif path.is_file():
            objects.extend(load_docs(path))
        else:
            raise FileNotFoundError(f"{kfile}: resource {res} does not exist")

    for p in k.get("patches", []):
        if set(p) != {"path"}:
            raise ValueError(f"{kfile}: only `patches: - path:` is supported, got {p}")
        for patch in load_docs(directory / p["path"]):
            key = (patch["kind"], patch["metadata"]["name"])
            hits = [i for i, o in enumerate(objects) if (o["kind"], o["metadata"]["name"]) == key]
            if len(hits) != 1:
                raise ValueError(f"{kfile}: patch {p['path']} matches {len(hits)} objects {key}")
            objects[hits[0]] = merge(objects[hits[0]], patch)

    if "namespace" in k:
        for o in objects:
            if o["kind"] not in CLUSTER_SCOPED:
                o["metadata"]["namespace"] = k["namespace"]

    for spec in k.get("labels", []):
        if spec.get("includeSelectors"):
            raise ValueError(f"{kfile}: labels.includeSelectors is not implemented")
        for o in objects:
            o["metadata"].setdefault("labels", {}).update(spec["pairs"])
            if spec.get("includeTemplates") and o["kind"] in TEMPLATE_KINDS:
                o["spec"]["template"].setdefault("metadata", {}).setdefault(
                    "labels", {}).update(spec["pairs"])
    return objects
