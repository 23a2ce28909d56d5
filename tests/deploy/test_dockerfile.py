#!/usr/bin/env python3
"""Dockerfile tests (no Docker engine runs in CI, so the image is not built here):
the build stage is NVIDIA's CUDA + cuDNN devel image and the final stage its
runtime image, on one CUDA version; the build runs the README's steps (scripts/
setup.sh, then the same CMake preset scripts/test.sh uses), with CUDA_ARCHS
(default "80;90") reaching CMAKE_CUDA_ARCHITECTURES; the targets it builds exist;
COPY sources exist; the image runs as a numeric non-root user, exposes 8001/8002,
health-checks through the flashtick CLI; .dockerignore keeps build trees and the
venv out without dropping any tracked source file.
"""
import json
import re
import shutil
import subprocess
import sys
import unittest

from deploy_lib import ROOT


def instructions(text):
    """[(INSTRUCTION, argument string)] with continuations joined and comments dropped."""
    out, cur = [], ""
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue  # Docker drops comment lines, also inside a continued instruction
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        word, _, rest = cur.partition(" ")
        out.append((word.upper(), rest.strip()))
        cur = ""
    return out


def stages(instrs):
    """[{"from": image, "name": alias, "body": [(INSTR, arg)...]}] per FROM."""
    out = []
    for ins, arg in instrs:
        if ins == "FROM":
            m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", arg, re.I)
            out.append({"from": m.group(1), "name": m.group(2), "body": []})
        elif out:
            out[-1]["body"].append((ins, arg))
    return out


def dockerignore_regex(pattern):
    """Docker's .dockerignore pattern (Go filepath.Match plus **) as a regex."""
    p = pattern.strip().lstrip("/")
    rx, i = "", 0
    while i < len(p):
        if p.startswith("**/", i):
            rx, i = rx + "(?:.*/)?", i + 3
        elif p.startswith("**", i):
            rx, i = rx + ".*", i + 2
        elif p[i] == "*":
            rx, i = rx + "[^/]*", i + 1
        elif p[i] == "?":
            rx, i = rx + "[^/]", i + 1
        else:
            rx, i = rx + re.escape(p[i]), i + 1
    return re.compile(rx)


def ignored(path, patterns):
    """True when `path` or one of its parent directories matches a pattern."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]
    result = False
    for pat in patterns:
        neg = pat.startswith("!")
        rx = dockerignore_regex(pat[1:] if neg else pat)
        if any(rx.fullmatch(p) for p in prefixes):
            result = not neg
    return result


class DockerfileTest(unittest.TestCase):
    def setUp(self):
        self.text = (ROOT / "Dockerfile").read_text()
        self.instrs = instructions(self.text)
        self.stages = stages(self.instrs)
        self.build, self.runtime = self.stages[0], self.stages[-1]
        self.global_args = {}
        for ins, arg in self.instrs:
            if ins == "FROM":
                break
            if ins == "ARG":
                k, _, v = arg.partition("=")
                self.global_args[k] = v.strip('"')
        self.runs = [a for i, a in self.build["body"] if i == "RUN"]

    def test_cuda_cudnn_stages(self):
        self.assertEqual(len(self.stages), 2)
        self.assertEqual(self.build["name"], "build")
        self.assertEqual(self.build["from"], "nvidia/cuda:${CUDA_VERSION}-cudnn-devel-${BASE_OS}")
        self.assertEqual(self.runtime["from"], "nvidia/cuda:${CUDA_VERSION}-cudnn-runtime-${BASE_OS}")
        self.assertRegex(self.global_args["CUDA_VERSION"], r"^13\.\d+\.\d+$")
        self.assertEqual(self.global_args["BASE_OS"], "ubuntu24.04")

    def test_cuda_archs(self):
        args = dict(a.partition("=")[::2] for i, a in self.build["body"] if i == "ARG")
        self.assertEqual(args["CUDA_ARCHS"].strip('"'), "80;90")
        self.assertTrue(any('-DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS}"' in r for r in self.runs))
        self.assertTrue(any("-DFLASHTICK_WITH_CUDA=ON" in r for r in self.runs),
                        "the image must not silently build CPU-only")

    def test_build_steps_are_the_readmes(self):
        readme = (ROOT / "README.md").read_text()
        test_sh = (ROOT / "scripts/test.sh").read_text()
        self.assertIn("scripts/setup.sh", readme)
        self.assertIn("scripts/test.sh", readme)
        m = re.search(r"preset=\$\{FLASHTICK_PRESET:-(\w+)\}", test_sh)
        self.assertIsNotNone(m, "scripts/test.sh no longer names its default preset")
        preset = m.group(1)
        self.assertIn('cmake --preset "$preset"', test_sh)
        self.assertIn('cmake --build --preset "$preset"', test_sh)
        self.assertTrue(any(re.search(r"(^|&&\s*)scripts/setup\.sh(\s|$)", r) for r in self.runs),
                        "the build stage must run scripts/setup.sh")
        self.assertTrue(any(f"cmake --preset {preset} " in r for r in self.runs))
        self.assertTrue(any(f"cmake --build --preset {preset} " in r for r in self.runs))
        presets = json.loads((ROOT / "CMakePresets.json").read_text())
        configure = {p["name"]: p for p in presets["configurePresets"]}
        self.assertIn(preset, configure)
        self.assertIn(preset, [p["name"] for p in presets["buildPresets"]])
        base = configure[configure[preset].get("inherits", preset)]
        binary_dir = (configure[preset].get("binaryDir") or base["binaryDir"]).replace(
            "${sourceDir}/", "").replace("${presetName}", preset)
        self.assertTrue(any(f"deploy/docker/stage-runtime.sh {binary_dir} /stage" in r for r in self.runs))

    def test_built_targets_exist(self):
        run = next(r for r in self.runs if "cmake --build" in r)
        targets = re.search(r"--target\s+([\w\s]+)", run).group(1).split()
        self.assertEqual(set(targets), {"flashtickd", "flashtick", "flashtick_make_model",
                                         "flashtick_sweep"})
        cmake_files = [p for p in ROOT.rglob("CMakeLists.txt")
                       if not any(part.startswith(("build", ".venv")) for part in p.relative_to(ROOT).parts)]
        text = "\n".join(p.read_text() for p in cmake_files)
        missing = [t for t in targets if not re.search(rf"add_executable\(\s*{t}\b", text)]
        self.assertEqual(missing, [], "the image builds CMake targets that do not exist")

    def test_copy_sources_exist(self):
        stage_names = {s["name"] for s in self.stages}
        for s in self.stages:
            for ins, arg in s["body"]:
                if ins != "COPY":
                    continue
                parts = arg.split()
                frm = [p for p in parts if p.startswith("--from=")]
                srcs = [p for p in parts if not p.startswith("--")][:-1]
                if frm:
                    self.assertIn(frm[0].split("=", 1)[1], stage_names)
                    continue
                for src in srcs:
                    if src != ".":
                        self.assertTrue((ROOT / src).exists(), f"COPY {src}: missing")

    def test_runtime_stage(self):
        body = self.runtime["body"]
        users = [a for i, a in body if i == "USER"]
        self.assertEqual(len(users), 1)
        uid = users[0].split(":")[0]
        self.assertTrue(uid.isdigit() and int(uid) >= 1000, "numeric non-root USER (k8s runAsNonRoot)")
        self.assertIn(f"--uid {uid}", " ".join(a for i, a in body if i == "RUN"))
        self.assertEqual([a for i, a in body if i == "EXPOSE"], ["8001 8002"])
        health = [a for i, a in body if i == "HEALTHCHECK"]
        self.assertEqual(len(health), 1)
        cmd = json.loads(re.search(r"CMD (\[.*\])", health[0]).group(1))
        self.assertEqual((cmd[0], cmd[-1]), ("flashtick", "health"), "HEALTHCHECK runs `flashtick ... health`")
        self.assertIn("--server=127.0.0.1:8001", cmd)
        timeout = int(re.search(r"--timeout=(\d+)s", health[0]).group(1))
        self.assertLess(float(next(a for a in cmd if a.startswith("--timeout=")).split("=")[1]), timeout,
                        "the CLI's deadline must end before Docker's healthcheck timeout")
        self.assertEqual([a for i, a in body if i == "ENTRYPOINT"], ['["flashtickd"]'])
        cmd = json.loads([a for i, a in body if i == "CMD"][0])
        self.assertIn("--listen=0.0.0.0:8001", cmd)
        self.assertIn("--metrics-port=8002", cmd)
        self.assertIn("--model-repository=/models", cmd)
        # Only staged files come from the build stage: binaries, libraries, model.
        self.assertEqual([a for i, a in body if i == "COPY"], ["--from=build /stage/ /"])

    def test_stage_script(self):
        script = ROOT / "deploy/docker/stage-runtime.sh"
        r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        if shutil.which("shellcheck"):  # in the machine image; not installed by setup.sh
            r = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        mode = subprocess.run(["git", "ls-files", "-s", str(script)], cwd=ROOT,
                              capture_output=True, text=True).stdout.split()
        if mode:  # committed: must be executable in git, as the RUN line calls it directly
            self.assertEqual(mode[0], "100755")


class DockerignoreTest(unittest.TestCase):
    def setUp(self):
        self.patterns = [l.strip() for l in (ROOT / ".dockerignore").read_text().splitlines()
                         if l.strip() and not l.strip().startswith("#")]

    def test_matcher(self):
        self.assertTrue(ignored("build/release/x.o", ["build"]))
        self.assertFalse(ignored("deploy/build.txt", ["build"]))
        self.assertTrue(ignored("a/b/__pycache__/c.pyc", ["**/__pycache__"]))
        self.assertFalse(ignored("build/keep", ["build", "!build/keep"]))

    def test_excludes_build_trees_and_venv(self):
        for p in ("build/release/CMakeCache.txt", ".venv/bin/python", ".git/HEAD",
                  "build-deploy/x", "tests/deploy/__pycache__/deploy_lib.cpython-311.pyc"):
            self.assertTrue(ignored(p, self.patterns), p)

    def test_keeps_every_tracked_source(self):
        files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.splitlines()
        self.assertGreater(len(files), 20)
        dropped = [f for f in files if ignored(f, self.patterns) and f != ".gitignore"]
        self.assertEqual(dropped, [], "tracked files the image build would not see")


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
