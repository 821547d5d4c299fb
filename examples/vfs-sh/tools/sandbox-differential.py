#!/usr/bin/env python3
"""Checks that vfs-sh answers the same in the sandbox as natively.

The differential tests and `agent-differential.py` run a native vfs-sh
over a real directory. The service runs the same code as a WebAssembly
component, reading documents through the host's imports (`fs`, `search`,
`budget`). This runs each command both ways over the same trees and
compares standard output, standard error and exit status, so that a
difference in the host's listing order, search, metadata or budget
handling shows up here rather than in an agent's session.

Usage:
    tools/sandbox-differential.py COMMANDS TREES VFS_SH VFSBOX [OUT.json]

COMMANDS is a file of commands, one a line (`#` starts a comment), or
blocks separated by lines holding only `---` when it ends in `.blocks`;
TREES is a directory built by `tests/intercode/make-fixtures.sh TREES`;
VFS_SH is a native `vfs-sh` binary and VFSBOX the `vfsbox` binary
(`vfsbox sh` runs the built-in guest). Differences go to OUT.json.
Neither side runs a host process: both are vfs-sh over a read-only view.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

MOUNTS = ("testbed", "system", "workspace", "backup")


def run(argv, env):
    try:
        p = subprocess.run(argv, capture_output=True, env=env, timeout=60,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return (None, None, "timeout")
    return (p.stdout.decode(errors="replace"), p.returncode,
            p.stderr.decode(errors="replace")[:2000])


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    path, trees, vfs_sh, vfsbox = sys.argv[1:5]
    out_path = sys.argv[5] if len(sys.argv) > 5 else "sandbox-differences.json"
    trees = os.path.abspath(trees)
    with open(path) as f:
        text = f.read()
    if path.endswith(".blocks"):
        cmds = [c for c in text.split("\n---\n") if c.strip()]
    else:
        cmds = [c for c in text.splitlines() if c.strip() and not c.startswith("#")]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", "TZ": "UTC", "HOME": "/"}
    mounts = ",".join(f"{m}={trees}/{m}" for m in MOUNTS)

    def native(cmd):
        return run([vfs_sh, "-c", cmd], dict(env, VFS_SH_MOUNTS=mounts, VFS_SH_CWD="/"))

    def sandboxed(cmd):
        argv = [vfsbox, "sh", cmd]
        for m in MOUNTS:
            argv += ["--mount", f"/{m}={trees}/{m}"]
        return run(argv + ["--cwd", "/"], env)

    results = []
    with ThreadPoolExecutor(2) as pool:
        for cmd, a, b in pool.map(lambda c: (c, native(c), sandboxed(c)), cmds):
            results.append({"cmd": cmd, "native": a, "sandbox": b, "same": a == b})
    same = sum(r["same"] for r in results)
    print(f"{same} of {len(results)} commands answer the same natively and in the sandbox")
    with open(out_path, "w") as f:
        json.dump([r for r in results if not r["same"]], f, indent=1)
    print(f"differences: {out_path}")


if __name__ == "__main__":
    main()
