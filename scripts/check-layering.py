#!/usr/bin/env python3
"""make check-layering: who may include whom (docs/ARCHITECTURE.md, "Layers").

Every production C/assembly file and header belongs to one module (by its
path).  Each `#include "..."` is resolved the way the compiler does it (the
including file's folder first, then the module's -I folders, which the
Makefile passes to the compiler and prints with `make print-includes`) and
the header it lands on must belong to a module the includer may see.  A
header that resolves nowhere is an error too: the compiler would refuse it,
and a bare name that only a forbidden folder provides is what the check is
for.  Angle includes (<...>) are system headers and are not checked.

The per-module -I folders make the compiler refuse most crossings by
itself; this check also catches relative paths ("../rocev2/internal.h"),
headers reached through a folder the module is allowed for another reason,
and a Makefile that grows a forbidden -I.

  scripts/check-layering.py [--root DIR] [--includes FILE] [--graph] [--selftest]

--includes FILE: "module: -Idir -Idir ..." lines (default: ask make).
--graph: print the module graph (who includes whom, how many times).
--selftest: run the check on small synthetic trees, one allowed and one
with each kind of crossing, and fail unless it tells them apart.
Exit 0 when every include is allowed, 1 with one line per violation.
"""
import argparse
import os
import re
import subprocess
import sys

# ---- modules: the first matching path prefix wins -------------------------
# (module, path prefix).  A module's public headers are the ones others may
# include; PRIVATE lists the folders only the module itself (and tests) see.
MODULES = [
    ("gen", "build/"),                       # generated board.h (qemu-board/gen-board.py)
    ("lib", "lib/"),
    ("hal", "hal/include/"),                 # the HAL contracts
    ("hal-common", "hal/common/"),
    ("hal-posix", "hal/posix/"),
    ("hal-qemu-virt", "hal/qemu-virt/"),
    ("rocev2", "rocev2/"),
    ("abi", "abi/"),                         # host <-> NIC ABI, shared with the host
    ("mgmt", "mgmt/"),
    ("loader", "boot/loader/"),
    ("boot", "boot/"),
    ("firmware", "firmware/"),
    ("libmnic-api", "hostdrv/include/"),
    ("libmnic", "hostdrv/lib/"),
    ("tools", "hostdrv/tools/"),
    ("kernel", "hostdrv/kernel/"),
    ("provider", "hostdrv/provider/"),       # libmnic-rdmav34.so (rdma-core provider)
    ("criu", "hostdrv/criu/"),               # mnic_criu_plugin.so (CRIU plugin)
    ("fabric", "fabric/"),                   # the test fabric's switch (mnic-switch)
    ("qemu-board", "qemu-board/"),           # mnic-ivshmem-server (libc only)
]

# Headers of a module that other modules may include (path prefixes).  A
# module not listed here exports every header it has.
PUBLIC = {
    "rocev2": ["rocev2/include/"],
    "mgmt": ["mgmt/include/"],
    "boot": ["boot/include/"],
}

# Who may include whom.  Own headers are always allowed (public or not).
# A value "module:path" allows one header of that module only.
ALLOWED = {
    # Below everything; the error numbers are a leaf of constants.
    "lib": ["hal:hal/include/hal/errno.h"],
    "hal": ["lib"],
    "hal-common": ["hal", "lib"],
    # The POSIX NIC's doorbell channel speaks the one ABI header it shares
    # with libmnic (the socket protocol, as a PCIe NIC's doorbell register
    # is part of the ABI).
    "hal-posix": ["hal", "lib", "gen", "abi:abi/include/mnic/dbch.h"],
    "hal-qemu-virt": ["hal", "lib", "gen"],
    # The engine: the HAL contracts, the shared library, and two ABI
    # headers: the one it reads host rings through (as rxe reads WQEs
    # through its uapi) and the GIDs' layout it shares with the host.
    "rocev2": ["hal", "lib", "abi:abi/include/mnic/queues.h", "abi:abi/include/mnic/gid.h"],
    "abi": [],
    "mgmt": ["hal", "lib", "abi", "rocev2", "boot"],
    "boot": ["hal", "lib", "abi:abi/include/mnic/fwimage.h"],
    # The loader is a qemu-virt program: it drives the board's flash itself.
    "loader": ["boot", "hal", "lib", "hal-qemu-virt", "gen", "abi:abi/include/mnic/fwimage.h"],
    "firmware": ["hal", "lib", "rocev2", "mgmt", "abi", "boot"],
    "libmnic-api": ["abi"],
    "libmnic": ["libmnic-api", "abi", "lib"],
    # mnicctl builds, signs and checks firmware images with the device's own
    # codec (boot/, on the HAL flash contract over a RAM image), so host and
    # NIC cannot disagree on the format.
    "tools": ["libmnic-api", "abi", "lib", "boot", "hal"],
    "kernel": ["abi"],
    # The rdma-core provider writes the rings with libmnic's one copy of
    # the ring code (wqe.h: pure, no device handle) and its public types.
    "provider": ["abi", "libmnic-api", "libmnic:hostdrv/lib/wqe.h"],
    # The CRIU plugin speaks the kernel's uverbs ABI (mnic/ib_abi.h, ib_mig.h) only.
    "criu": ["abi"],
    # mnic-switch impairs ports with the POSIX NIC's seeded impairment, so
    # both impairment points read one spec and draw the same decisions.
    "fabric": ["lib", "hal", "hal-posix:hal/posix/impair.h"],
    # The ivshmem server speaks QEMU's protocol and nothing of ours.
    "qemu-board": [],
    "gen": [],
}

SRC_RE = re.compile(r"\.(c|h|S)$")
INC_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(path):
    for name, prefix in MODULES:
        if path.startswith(prefix):
            return name
    return None


def exported(mod, path):
    pub = PUBLIC.get(mod)
    return pub is None or any(path.startswith(p) for p in pub)


def allowed(importer, target, path):
    if importer == target:
        return True
    for rule in ALLOWED.get(importer, []):
        name, _, only = rule.partition(":")
        if name != target:
            continue
        if only:
            if path == only:
                return True
        elif exported(target, path):
            return True
    return False


def make_includes(root):
    out = subprocess.run(["make", "-s", "--no-print-directory", "-C", root, "print-includes"],
                         check=True, capture_output=True, text=True).stdout
    return parse_includes(out)


def parse_includes(text):
    incs = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        mod, _, flags = line.partition(":")
        incs[mod.strip()] = [f[2:] for f in flags.split() if f.startswith("-I")]
    return incs


def sources(root):
    try:
        files = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                               text=True).stdout.split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        files = [os.path.relpath(os.path.join(d, f), root)
                 for d, _, fs in os.walk(root) for f in fs]
    return sorted(f for f in files if SRC_RE.search(f) and module_of(f) not in (None, "gen")
                  and os.path.exists(os.path.join(root, f)))


def resolve(root, src, name, dirs):
    cands = [os.path.dirname(src)] + dirs
    for d in cands:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.exists(os.path.join(root, p)):
            return p
    return None


def check(root, incs, graph):
    """The violations in the tree at root; fills graph[(from, to)] = count."""
    bad = []
    # The -I folders themselves: every header under one must belong to a
    # module the includer may see, so that the compiler already refuses a
    # forbidden bare name (a folder may hold several modules).
    files = sources(root)
    for mod, dirs in sorted(incs.items()):
        if mod not in ALLOWED:
            bad.append(f"Makefile: print-includes names unknown module {mod}")
            continue
        for d in dirs:
            probe = os.path.normpath(d) + "/"
            probe = "" if probe == "./" else probe
            if module_of(probe) == "gen":
                if not allowed(mod, "gen", probe + "board.h"):
                    bad.append(f"Makefile: module {mod} compiles with -I{d}, the generated board")
                continue
            hdrs = [f for f in files if f.startswith(probe) and f.endswith(".h")]
            if not hdrs:
                bad.append(f"Makefile: module {mod} compiles with -I{d}, which holds no headers")
            # A module allowed for a single header ("abi:...queues.h") still
            # needs its folder: the per-file check below holds the line.
            partial = {r.partition(":")[0] for r in ALLOWED[mod] if ":" in r}
            forbidden = sorted({module_of(f) + ("" if exported(module_of(f), f) else " private")
                                for f in hdrs if module_of(f) not in partial and
                                not allowed(mod, module_of(f), f)})
            for t in forbidden:
                bad.append(f"Makefile: module {mod} compiles with -I{d}, which holds {t} headers")
    for src in files:
        mod = module_of(src)
        if mod not in incs:
            bad.append(f"{src}: module {mod} has no include list in the Makefile (print-includes)")
            continue
        text = open(os.path.join(root, src), errors="replace").read()
        for m in INC_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            name = m.group(1)
            hit = resolve(root, src, name, incs[mod])
            if hit is None:
                bad.append(f"{src}:{line}: \"{name}\" resolves nowhere with {mod}'s include path")
                continue
            tgt = module_of(hit)
            graph[(mod, tgt)] = graph.get((mod, tgt), 0) + 1
            if tgt is None:
                bad.append(f"{src}:{line}: \"{name}\" -> {hit}: outside every module")
            elif not allowed(mod, tgt, hit):
                bad.append(f"{src}:{line}: {mod} may not include {hit} ({tgt}"
                           f"{'' if exported(tgt, hit) else ', private'})")
    return bad, len(files)


def selftest():
    """Synthetic trees: the check must pass the clean one and name every
    crossing planted in the others."""
    import tempfile
    incs = {"lib": [], "hal": ["lib/include"],
            "rocev2": ["lib/include", "hal/include", "rocev2/include"],
            "mgmt": ["lib/include", "hal/include", "rocev2/include"]}
    clean = {
        "lib/include/lib/crc32.h": "",
        "hal/include/hal/errno.h": "",
        "rocev2/include/rocev2/rocev2.h": '#include "hal/errno.h"\n',
        "rocev2/internal.h": '#include "rocev2/rocev2.h"\n#include "lib/crc32.h"\n',
        "rocev2/qp.c": '#include "internal.h"\n#include <string.h>\n',
        "mgmt/cmd.c": '#include "rocev2/rocev2.h"\n',
        "mgmt/mgmt.h": "",
    }
    cases = [
        ("clean", {}, {}, 0),
        ("relative path to a private header",
         {"mgmt/doorbell.c": '#include "../rocev2/internal.h"\n'}, {}, 1),
        ("bare name only a forbidden folder provides",
         {"mgmt/doorbell.c": '#include "internal.h"\n'}, {}, 1),
        ("-I folder with private headers", {}, {"mgmt": ["rocev2"]}, 1),
        ("-I folder of a module it may not see", {}, {"rocev2": ["."]}, 1),
        ("upward include", {"rocev2/req.c": '#include "../mgmt/mgmt.h"\n'}, {}, 1),
    ]
    ok = True
    for name, extra, more_incs, want in cases:
        with tempfile.TemporaryDirectory() as root:
            for path, text in {**clean, **extra}.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            i = {m: d + more_incs.get(m, []) for m, d in incs.items()}
            bad, _ = check(root, i, {})
            good = len(bad) == want
            ok &= good
            print(f"layering selftest: {name}: {len(bad)} violations (want {want})"
                  f"{'' if good else ' FAIL: ' + '; '.join(bad)}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--includes")
    ap.add_argument("--graph", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    incs = parse_includes(open(a.includes).read()) if a.includes else make_includes(a.root)
    graph = {}
    bad, nfiles = check(a.root, incs, graph)
    if a.graph:
        for (m, t), n in sorted(graph.items()):
            if m != t:
                print(f"  {m:14} -> {t:14} {n}")
    for b in bad:
        print("layering: " + b)
    print(f"layering: {nfiles} files, {sum(graph.values())} includes, {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
