#!/usr/bin/env python3
"""docs/architecture.md held to the tree and the build.

    check-doc.py --source-root SRC --build-root BUILD [--doc FILE]

Fails (exit 1), naming each, on
  - a file the document names (`name.c`, `dir/name.h`...) that is in
    neither the source tree nor the build tree;
  - a file of a layer's table ("| layer | file |...", "| library (folder) |
    file |...") that is not in that layer's folder, or a source file of
    interpose/, report/ or trace/ that the document never names;
  - the formats ("The formats: `a`, `b`...") other than render.c's table,
    or main.c's --help line "FORMAT: a|b|..." other than that table;
  - a meson suite of the build that the section "Tests" does not name
    ("suite `x`", "suites `x`, `y`"), or one it names that the build
    does not have; a test of the suite unit that the bullet of
    tests/unit does not name, or one it names that is not in that suite;
  - the table "| call | from | reaches |" (the calls routed up) other
    than tests/layers/interpose.routed, which layers-interpose holds to
    the objects;
  - a row of a "| layer | may call |" table that is not what
    tests/layers/meson.build gives check-layers.py: the layers in the
    same order, bottom up, each allowed to call exactly those below it;
  - the model's call order as the section Reporter states it ("`a`, `b`
    ... call no other file of the model; `model-base.c` (...) calls only
    `x` and `y`; `model.c` ... no file calls it") other than the calls
    the objects of the build's libreport-model.a make.
"""
import argparse
import json
import os
import re
import subprocess
import sys

SOURCE_EXT = (".c", ".h", ".def", ".in", ".py", ".css", ".js", ".sh", ".build", ".toml",
              ".md", ".allow", ".routed", ".txt", ".sql")
# files the document names that are not memtrace's
EXTERNAL = {"torch/version.py", "cuda_runtime.h"}


def tree_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                              "--exclude-standard"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
        files = [f for f in out if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
        files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return files


def build_names(build):
    names = set()
    for d, _, files in os.walk(build):
        names.update(files)
    return names


def section(doc, title):
    """The text of the section whose heading is title, to the next heading
    of the same or a higher level."""
    m = re.search(r"^(#+) " + re.escape(title) + r".*$", doc, re.M)
    if not m:
        return ""
    level = len(m.group(1))
    rest = doc[m.end():]
    end = re.search(r"^#{1,%d} " % level, rest, re.M)
    return rest[:end.start()] if end else rest


def tables(doc, header):
    """Rows (lists of cells) of every table whose header row starts with
    the cells of header."""
    rows, inside = [], False
    for line in doc.splitlines():
        if not line.startswith("|"):
            inside = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:len(header)] == header:
            inside = True
        elif inside and not set(line) <= set("|-: "):
            rows.append(cells)
    return rows


def ticked(text):
    return re.findall(r"`([^`]+)`", text)


def check_files(doc, src, build, errors):
    files = tree_files(src)
    paths, bases = set(files), {os.path.basename(f) for f in files}
    built = build_names(build) if build else set()
    named = set()
    for t in ticked(doc):
        if " " in t or not t.endswith(SOURCE_EXT) or not re.match(r"^[\w./*-]+$", t):
            continue
        named.add(os.path.basename(t))
        if "*" in t or "NAME" in t or t in EXTERNAL:  # a pattern, or not ours
            continue
        if "/" in t:
            ok = any(p == t or p.endswith("/" + t) for p in paths)
        else:
            ok = t in bases or t in built
        if not ok:
            errors.append(f"file named that is not in the tree or the build: {t}")
    # the layers' tables: each file in its layer's folder
    for header, top in ((["layer", "file"], "interpose"), (["library (folder)", "file"], "report")):
        for row in tables(doc, header):
            layer = row[0].strip("`").rstrip("/")
            folder = top if layer in ("interpose", "(top)") else f"{top}/{layer}"
            for f in ticked(row[1]):
                if f"{folder}/{f}" not in paths:
                    errors.append(f"{header[0]} table: {f} is not in {folder}/")
    for f in files:
        if f.startswith(("interpose/", "report/", "trace/")) and f.endswith((".c", ".h")) \
                and os.path.basename(f) not in named:
            errors.append(f"source file the document never names: {f}")


def check_formats(doc, src, errors):
    with open(os.path.join(src, "report/render/render.c")) as f:
        table = re.findall(r'\.name\s*=\s*"([^"]+)"', f.read())
    m = re.search(r"The formats:(.*?)\(", doc, re.S)
    listed = ticked(m.group(1)) if m else []
    if not m:
        errors.append('no "The formats: `a`, `b`..." in the document')
    for x in table:
        if x not in listed:
            errors.append(f"format {x} of render.c not in the document's list of formats")
    for x in listed:
        if x not in table:
            errors.append(f"format {x} of the document not in render.c's table")
    with open(os.path.join(src, "report/main.c")) as f:
        h = re.search(r"FORMAT: ([\w|-]+)", f.read())
    helped = h.group(1).split("|") if h else []
    if sorted(helped) != sorted(table):
        errors.append(f"main.c's --help formats {helped} are not render.c's {table}")


def meson_words(src):
    """Every quoted word of tests/**/meson.build: a test or suite this
    build left out (an option) is still named there."""
    words = set()
    for d, _, names in os.walk(os.path.join(src, "tests")):
        if "meson.build" in names:
            with open(os.path.join(d, "meson.build")) as f:
                words.update(re.findall(r"'([\w.-]+)'", f.read()))
    return words


def check_suites(doc, src, build, errors):
    tests = []
    for name in ("intro-tests.json", "intro-benchmarks.json"):
        path = os.path.join(build, "meson-info", name)
        if os.path.exists(path):
            with open(path) as f:
                tests += json.load(f)
    if not tests:
        errors.append(f"no meson-info/intro-tests.json in {build}")
        return
    suites, unit = set(), set()
    for t in tests:
        for s in t["suite"]:
            s = s.split(":", 1)[-1]
            suites.add(s)
            if s == "unit":
                unit.add(t["name"])
    text = section(doc, "Tests")
    listed = set()
    for m in re.finditer(r"\bsuites?\s+((?:`[\w.-]+`(?:,?\s+(?:and\s+|or\s+)?)?)+)", text):
        listed.update(ticked(m.group(1)))
    for s in sorted(suites - listed):
        errors.append(f"meson suite {s} not named in the section Tests")
    defined = meson_words(src)
    for s in sorted(listed - suites - defined):
        errors.append(f"suite {s} of the section Tests is not a suite of the build")
    m = re.search(r"^- `tests/unit`[^:\n]*:(.*?)(?=^- |\Z)", text, re.S | re.M)
    named = {t for t in ticked(m.group(1)) if re.match(r"^[\w-]+$", t)} if m else set()
    if not m:
        errors.append("no bullet - `tests/unit`: in the section Tests")
    for t in sorted(unit - named):
        errors.append(f"unit test {t} not named in the bullet of tests/unit")
    for t in sorted(named - unit - {"unit", "thread"} - listed - defined):
        errors.append(f"the bullet of tests/unit names {t}, no test of the suite unit")


def meson_layers(src):
    """{test name: [layer names bottom up]} from tests/layers/meson.build"""
    with open(os.path.join(src, "tests/layers/meson.build")) as f:
        text = f.read()
    out = {}
    for m in re.finditer(r"test\('([\w-]+)'(.*?)suite", text, re.S):
        out[m.group(1)] = re.findall(r"'--layer', '(\w+)'", m.group(2))
    return out


def check_layers(doc, src, errors):
    order = meson_layers(src)
    for title, test in (("Capture", "layers-interpose"), ("Reporter", "layers-report")):
        rows = tables(section(doc, title), ["layer", "may call"])
        layers = order.get(test, [])
        if not rows or not layers:
            errors.append(f"section {title}: no layer table, or no {test} in tests/layers")
            continue
        names = []
        for row in rows:
            name = row[0].split("(")[0].strip().strip("`").rstrip("/")
            names.append({"preload.c": "preload"}.get(name, name))
        # main.c, the reporter's top, is no library of tests/layers: it may call all
        if names[-1] == "main.c" and rows[-1][1] == "all":
            names, rows = names[:-1], rows[:-1]
        got = [n for n in names if n != "trace"]
        if got != layers:
            errors.append(f"section {title}: layers {got}, tests/layers has {layers}")
            continue
        for i, row in enumerate(rows):
            below = {"trace"} | (set() if names[i] == "trace"
                                 else set(layers[:layers.index(names[i])]))
            calls = {c.strip().rstrip("/") for c in row[1].replace("`", "").split(",")}
            if calls == {"all"}:
                calls = {"trace"} | set(layers[:layers.index(names[i])])
            if calls != below:
                errors.append(f"section {title}: {names[i]} may call {sorted(calls)}, "
                              f"tests/layers lets it call {sorted(below)}")


def check_routed(doc, src, errors):
    listed = set()
    with open(os.path.join(src, "tests/layers/interpose.routed")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                a, _, rest = line.partition("->")
                b, _, sym = rest.partition(":")
                listed.add((os.path.basename(a.strip()), b.strip(), sym.strip()))
    told = set()
    for row in tables(doc, ["call", "from", "reaches"]):
        sym = re.sub(r"\(\)$", "", row[0].strip("`"))
        reaches = ticked(row[2])[:1]
        for a in ticked(row[1]):
            told.add((a, reaches[0] if reaches else "", sym))
    for a, b, sym in sorted(listed - told):
        errors.append(f"routed call {a} -> {b}: {sym} (interpose.routed) not in the document")
    for a, b, sym in sorted(told - listed):
        errors.append(f"routed call {a} -> {b}: {sym} of the document not in interpose.routed")


def model_edges(build):
    """{file: files of the model it calls}, from the objects (nm), or None"""
    lib = os.path.join(build, "report", "libreport-model.a")
    if not os.path.exists(lib):
        return None
    out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True, check=True).stdout
    owner, undefined = {}, {}
    for line in out.splitlines():
        parts = line.split(":")
        member = os.path.basename(parts[1]) if len(parts) >= 3 else ""
        if not member or member.startswith(".._"):
            continue  # trace/'s members
        name = member[:-2].rsplit("_", 1)[-1]
        fields = parts[-1].split()
        undefined.setdefault(name, set())
        if len(fields) == 2 and fields[0] == "U":
            undefined[name].add(fields[1])
        elif len(fields) == 3 and fields[1] in "TDBRVWGSCiu":
            owner.setdefault(fields[2], name)
    return {f: {owner[s] for s in u if s in owner and owner[s] != f}
            for f, u in undefined.items()}


def check_model(doc, build, errors):
    edges = model_edges(build)
    if edges is None:
        errors.append(f"no report/libreport-model.a in {build}: build it first")
        return
    text = " ".join(section(doc, "Reporter").split())
    leaves = re.search(r"Inside the model, files call one way too: (.*?) call no other file", text)
    base = re.search(r"`model-base\.c` \(.*?\) calls only (.*?);", text)
    top = re.search(r"`model\.c`, the pass, is on top and no file calls it", text)
    if not (leaves and base and top):
        errors.append("section Reporter: the model's call order is not stated as check-doc.py reads it")
        return
    for f in ticked(leaves.group(1)):
        if f not in edges:
            errors.append(f"the model has no file {f}")
        elif edges[f]:
            errors.append(f"{f} calls {sorted(edges[f])}: the document says it calls no "
                          f"other file of the model")
    said = set(ticked(base.group(1)))
    if edges.get("model-base.c", set()) != said:
        errors.append(f"model-base.c calls {sorted(edges.get('model-base.c', set()))}, "
                      f"the document says only {sorted(said)}")
    callers = sorted(f for f, to in edges.items() if "model.c" in to)
    if callers:
        errors.append(f"{callers} call model.c: the document says no file calls it")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--build-root", required=True)
    ap.add_argument("--doc")
    args = ap.parse_args()
    path = args.doc or os.path.join(args.source_root, "docs/architecture.md")
    with open(path) as f:
        doc = re.sub(r"^```.*?^```", "", f.read(), flags=re.S | re.M)  # no code blocks
    errors = []
    check_files(doc, args.source_root, args.build_root, errors)
    check_formats(doc, args.source_root, errors)
    check_suites(doc, args.source_root, args.build_root, errors)
    check_layers(doc, args.source_root, errors)
    check_routed(doc, args.source_root, errors)
    check_model(doc, args.build_root, errors)
    for e in errors:
        print(e)
    print(f"{path}: {len(errors)} disagreements with the tree and the build")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
