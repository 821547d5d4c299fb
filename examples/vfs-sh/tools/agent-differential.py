#!/usr/bin/env python3
"""Measures vfs-sh against bash on real agent commands.

The commands are the actions of the published InterCode bash trajectories
(princeton-nlp/intercode, data/results/bash/*/*.json, MIT): what GPT-3.5,
GPT-4, PaLM, StarChat, Vicuna and others typed into a bash tool over the
InterCode fixture trees. Each command that does not look like it writes
runs through bash with GNU tools and through a native vfs-sh, with the
trees at /testbed, /system, /workspace and /backup, cwd /, LC_ALL=C and
TZ=UTC; standard output and exit status are compared.

Agents' commands delete, write and set the clock (`find / -name '*.txt'
-delete`, `date -s ...`), and a filter cannot be trusted to catch them
all: bash runs only inside bubblewrap, with a read-only root, a private
/tmp, no capabilities and no network. The script refuses to run without
`bwrap`.

Usage:
    tools/agent-differential.py INTERCODE_CHECKOUT TREES VFS_SH [OUT.json]

INTERCODE_CHECKOUT is a clone of princeton-nlp/intercode; TREES is a
directory built by `tests/intercode/make-fixtures.sh TREES`; VFS_SH is a
native `vfs-sh` binary (`cargo build --release -p vfs-sh`). Misses go to
OUT.json for reading. Commands that depend on the host (`ls /`, `find /`,
`ps`, `uname`, `$HOME`) cannot match and are counted as they fall.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

MOUNTS = ("testbed", "system", "workspace", "backup")
# Commands that plainly write or reach outside the trees; the sandbox, not
# this list, is what keeps the machine safe.
WRITES = re.compile(
    r"(^|[\s;&|(])(rm|mv|cp|mkdir|rmdir|touch|chmod|chown|chgrp|ln|install|truncate|split"
    r"|csplit|shred|dd|kill|pkill|apt|apt-get|pip|git|sudo|useradd|passwd|mount|zip|unzip"
    r"|gzip|bzip2|xz|crontab|ssh|scp|curl|wget|vim|vi|nano|python|python3|perl|ruby|node)(\s|$)"
    r"|sed\s+(-\w*\s+)*-i|>\s*(?!/dev/null|&)[^\s&]|>>|tar\s+-?\w*[cru]\w*\s"
    r"|tee\s+(-a\s+)?(?!/dev/)[\w/]"
)


def actions(checkout):
    """Every distinct action string in the trajectories, in file order."""
    seen = {}

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "actions" and isinstance(v, list):
                    for a in v:
                        if isinstance(a, str) and a.strip():
                            seen.setdefault(a.strip(), None)
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for path in sorted(glob.glob(os.path.join(checkout, "data/results/bash/*/*.json"))):
        try:
            with open(path) as f:
                walk(json.load(f))
        except (OSError, ValueError):
            continue
    return list(seen)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    checkout, trees, vfs_sh = sys.argv[1:4]
    out_path = sys.argv[4] if len(sys.argv) > 4 else "agent-misses.json"
    if not shutil.which("bwrap"):
        sys.exit("bwrap (bubblewrap) is required: agents' commands must not touch this machine")
    trees = os.path.abspath(trees)
    # bwrap mounts the trees over a read-only root, where their mount
    # points must already exist (empty directories).
    for m in MOUNTS:
        if not os.path.isdir(f"/{m}"):
            try:
                os.mkdir(f"/{m}")
            except OSError as e:
                sys.exit(f"/{m} must exist as an empty directory for bwrap to mount on: {e}")
    env = dict(os.environ, LC_ALL="C", TZ="UTC")
    mounts = ",".join(f"{m}={trees}/{m}" for m in MOUNTS)

    def bash(cmd):
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--tmpfs", "/tmp"]
        for m in MOUNTS:
            argv += ["--ro-bind", f"{trees}/{m}", f"/{m}"]
        argv += ["--unshare-all", "--cap-drop", "ALL", "--die-with-parent",
                 "--new-session", "--chdir", "/", "bash", "-c", cmd]
        return run(argv, env)

    def ours(cmd):
        return run([vfs_sh, "-c", cmd], dict(env, VFS_SH_MOUNTS=mounts, VFS_SH_CWD="/"))

    cmds = [c for c in actions(checkout) if not WRITES.search(c)]
    results = []
    with ThreadPoolExecutor(3) as pool:
        for cmd, a, b in pool.map(lambda c: (c, bash(c), ours(c)), cmds):
            results.append({"cmd": cmd, "bash": a, "ours": b, "same": a[:2] == b[:2]})
    same = sum(r["same"] for r in results)
    print(f"{same} of {len(results)} agent commands give bash's output and status "
          f"({100 * same / max(len(results), 1):.1f}%)")
    with open(out_path, "w") as f:
        json.dump([r for r in results if not r["same"]], f, indent=1)
    print(f"misses: {out_path}")


def run(argv, env):
    try:
        p = subprocess.run(argv, capture_output=True, env=env, timeout=15,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return (None, None, "timeout")
    return (p.stdout.decode(errors="replace"), p.returncode,
            p.stderr.decode(errors="replace")[:2000])


if __name__ == "__main__":
    main()
