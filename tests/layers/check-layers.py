#!/usr/bin/env python3
"""The file-level call graph of one half of memtrace, from its object files,
checked against its layers (docs/architecture.md, "Capture", "Reporter").

    check-layers.py --allow ALLOWLIST --layer NAME LIB.a... [--layer NAME LIB.a...]...

The layers are given bottom up, each with its static libraries. Every member
of an archive is one source file; an edge a -> b means a's object names a
symbol b's defines (nm: U in a, defined in b). The files of trace/ compiled
into a half (the members named ../trace/...) are the layer "trace", below
all. A symbol libc defines too (close, dlsym, fwrite: the library's own
calls that -Bsymbolic-functions binds to its exported wrappers) is a call to
libc, not to the wrapper's file; with --routed LIST, every such call is a
call routed to the wrapper's file, and LIST must name exactly those
(docs/architecture.md, "Calls routed up", quotes it).

With --build-root, --source-root and --ninja, also the headers each object
was compiled with, as the compiler found them (ninja's record of its
dependency files, `ninja -t deps`): an include path names a layer's folder
and those below, but a quoted include is looked up in the including file's
own folder first, so `#include "../hooks/x.h"` from core/ compiles
whatever the include paths say, and a header of macros, inline functions
or struct layouts leaves no symbol for nm to see. A layer's folders are
those of its objects' sources; trace/'s (members named ../trace/...) are
below all.

Fails (exit 1) on
  - an edge from a file to a file of a higher layer (an upward call);
  - a header included from a higher layer's folder (an upward include),
    or from a folder of the source tree that is no layer's and not named
    by --shared (config/, trace/);
  - a call cycle between files, once the edges of the allowlist (the hook
    tables that interposition makes circular by nature) are taken out;
  - an allowlist edge that is no longer in the graph (so the list stays
    true);
  - with --routed, a call the linker routes to our wrapper of a libc
    function that the list does not name, or one it names that is gone.

With --expect TEXT, the opposite: exit 0 only when one of the errors
contains TEXT (a fixture that breaks a rule on purpose).
"""
import argparse
import collections
import os
import subprocess
import sys


def libc_symbols():
    path = None
    with open("/proc/self/maps") as f:
        for line in f:
            if "/libc.so" in line or "/libc-" in line:
                path = line.split()[-1]
                break
    if not path:
        return set()
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    return {l.split()[-1].split("@")[0] for l in out.splitlines() if l.strip()}


def file_of(member):
    """An archive member (meson: the source path, '/' as '_', then .o) to
    (source file name, whether it is trace/'s)."""
    name = member[:-2] if member.endswith(".o") else member
    shared = name.startswith(".._")
    return name.rsplit("_", 1)[-1], shared


def read_objects(layers):
    """{file: (layer index, defined set, undefined set)}"""
    files = {}
    for index, (layer, libs) in enumerate(layers):
        for lib in libs:
            out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True,
                                 check=True).stdout
            for line in out.splitlines():
                parts = line.split(":")
                if len(parts) < 3:
                    continue
                member = parts[1]
                fields = parts[-1].split()
                name, shared = file_of(os.path.basename(member))
                key = "trace/" + name if shared else name
                entry = files.setdefault(key, [(-1 if shared else index), set(), set()])
                if len(fields) == 2 and fields[0] == "U":
                    entry[2].add(fields[1])
                elif len(fields) == 3 and fields[1] in "TDBRVWGSCiu":
                    entry[1].add(fields[2])
    return files


def graph(files, libc):
    """(edges {a: {b: symbol}}, routed {(a, b, symbol)}: a's calls of a libc
    function whose wrapper b defines)"""
    owner = {}
    for f, (_, defined, _) in files.items():
        for s in defined:
            owner.setdefault(s, f)
    edges, routed = collections.defaultdict(dict), set()
    for f, (_, _, undefined) in files.items():
        for s in undefined:
            g = owner.get(s)
            if g and g != f and s in libc:
                routed.add((f, g, s))
            elif g and g != f:
                edges[f].setdefault(g, s)
    return edges, routed


def cycles(nodes, edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def ninja_deps(ninja, build_root):
    """{object path relative to build_root: [dependency paths, resolved]}"""
    out = subprocess.run([ninja, "-C", build_root, "-t", "deps"], capture_output=True,
                         text=True, check=True).stdout
    deps, current = {}, None
    for line in out.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith((" ", "\t")):
            current = deps.setdefault(line.split(": #deps", 1)[0], [])
        elif current is not None:
            current.append(os.path.realpath(os.path.join(build_root, line.strip())))
    return deps


def objects_of(lib, build_root, deps):
    """{member name: its dependencies} of the objects meson put in lib"""
    prefix = os.path.relpath(lib, build_root) + ".p/"
    return {t[len(prefix):]: d for t, d in deps.items() if t.startswith(prefix)}


def include_errors(layers, args):
    """Headers from above the including object's layer, or from no layer."""
    deps = ninja_deps(args.ninja, args.build_root)
    src, build = os.path.realpath(args.source_root), os.path.realpath(args.build_root)
    objects = []  # (layer index, member, dependencies); the first is the source
    for index, (_, libs) in enumerate(layers):
        for lib in libs:
            found = objects_of(lib, args.build_root, deps)
            if not found:
                return [f"no objects of {lib} in ninja's dependency log: build it first"]
            for member, d in sorted(found.items()):
                shared = file_of(member)[1]
                objects.append((-1 if shared else index, member, d))
    folder_layer = {}
    for index, _, d in objects:
        if d:
            folder = os.path.dirname(os.path.relpath(d[0], src))
            folder_layer[folder] = max(index, folder_layer.get(folder, -1))
    names = ["trace"] + [l[0] for l in layers]
    errors = []
    print(f"{len(objects)} objects, {sum(len(d) - 1 for _, _, d in objects if d)} includes")
    for index, member, d in objects:
        if not d:
            errors.append(f"{member}: no dependencies recorded")
            continue
        source = os.path.relpath(d[0], src)
        for header in d[1:]:
            if header.startswith(build + os.sep) or not header.startswith(src + os.sep):
                continue  # generated, the system's, CUDA's
            rel = os.path.relpath(header, src)
            folder = os.path.dirname(rel)
            if folder in folder_layer:
                if folder_layer[folder] > index:
                    errors.append(f"upward include: {source} ({names[index + 1]}) includes "
                                  f"{rel} ({names[folder_layer[folder] + 1]})")
            elif folder not in args.shared:
                errors.append(f"include from outside the layers: {source} includes {rel}")
    return errors


def read_allow(path):
    allow = set()
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                a, arrow, b = line.partition("->")
                allow.add((a.strip(), b.strip()))
    return allow


def read_routed(path):
    """{(file, wrapper's file, symbol)} of lines "file -> file: symbol" """
    out = set()
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                a, _, rest = line.partition("->")
                b, _, sym = rest.partition(":")
                out.add((a.strip(), b.strip(), sym.strip()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--allow", required=True)
    ap.add_argument("--layer", nargs="+", action="append", required=True,
                    metavar=("NAME", "LIB"))
    ap.add_argument("--build-root")
    ap.add_argument("--source-root")
    ap.add_argument("--ninja")
    ap.add_argument("--shared", action="append", default=[],
                    help="a folder of the source tree any layer may include from")
    ap.add_argument("--routed", help="the calls routed to our wrappers of libc functions")
    ap.add_argument("--expect")
    args = ap.parse_args()
    layers = [(l[0], l[1:]) for l in args.layer]
    names = ["trace"] + [l[0] for l in layers]
    files = read_objects(layers)
    edges, routed = graph(files, libc_symbols())
    allow = read_allow(args.allow)
    errors = []
    for a in sorted(edges):
        for b, sym in sorted(edges[a].items()):
            la, lb = files[a][0], files[b][0]
            if lb > la and (a, b) not in allow:
                errors.append(f"upward call: {a} ({names[la + 1]}) -> {b} ({names[lb + 1]}): {sym}")
    kept = {a: {b: s for b, s in bs.items() if (a, b) not in allow} for a, bs in edges.items()}
    for comp in cycles(files, kept):
        inner = [f"{a} -> {b} ({kept[a][b]})" for a in comp for b in sorted(kept.get(a, {}))
                 if b in comp]
        errors.append("call cycle not in the allowlist: " + ", ".join(comp) +
                      "\n    " + "\n    ".join(inner))
    if args.ninja:
        errors += include_errors(layers, args)
    if args.routed:
        listed = read_routed(args.routed)
        for a, b, sym in sorted(routed - listed):
            errors.append(f"call routed to our wrapper, not in {args.routed}: "
                          f"{a} ({names[files[a][0] + 1]}) -> {b} ({names[files[b][0] + 1]}): {sym}")
        for a, b, sym in sorted(listed - routed):
            errors.append(f"routed call no longer made: {a} -> {b}: {sym}")
        for a, b, sym in sorted(routed):
            print(f"routed: {a} -> {b}: {sym}")
    present = {(a, b) for a in edges for b in edges[a]}
    for a, b in sorted(allow):
        if a in files and (a, b) not in present:
            errors.append(f"allowlist edge no longer in the graph: {a} -> {b}")
    print(f"{len(files)} files, {sum(len(v) for v in edges.values())} edges, "
          f"layers {' < '.join(names)}")
    for e in errors:
        print(e)
    if args.expect is not None:
        found = any(args.expect in e for e in errors)
        print(("expected error found: " if found else "expected error missing: ") + args.expect)
        return 0 if found else 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
