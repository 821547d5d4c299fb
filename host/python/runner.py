"""vfsbox's built-in Python: runs the agent's code as `python3 -c CODE ARGS...`.

The host runs this component with the arguments `-c CODE ARGS...`. The code
runs as `__main__` with `sys.argv == ["-c", *ARGS]`; `sys.exit(n)` exits
with `n`, an uncaught exception prints its traceback to stderr and exits
with 1, as `python3` does. Documents are read with `open()`, `os`, `pathlib`
and `glob` through `wasi:filesystem`: each mount is a directory of that
name (`/files`), read-only; the `vfsbox` module (`vfsbox.py`) searches with
the host's engine and tells the budget left. The code starts in the run's
working directory.
"""

import sys
import traceback

# Imported while componentize-py initialises the interpreter at build time,
# so that they are in its snapshot: at run time there is no standard
# library on a disk to import from, only the documents.
import abc, argparse, array, base64, binascii, bisect, calendar, codecs  # noqa: E401,F401
import collections, collections.abc, contextlib, copy, csv, dataclasses  # noqa: E401,F401
import datetime, decimal, difflib, email, email.parser  # noqa: E401,F401
import encodings.ascii, encodings.cp1252, encodings.cp437, encodings.idna  # noqa: E401,F401
import encodings.latin_1, encodings.utf_16, encodings.utf_8_sig  # noqa: E401,F401
import enum, fnmatch, fractions, functools, glob, gzip, hashlib, heapq  # noqa: E401,F401
import html, html.parser, io, itertools, json, locale, math, numbers  # noqa: E401,F401
import operator, os, pathlib, pprint, random, re, shlex, statistics  # noqa: E401,F401
import string, struct, tarfile, textwrap, time, types, typing  # noqa: E401,F401
import unicodedata, urllib.parse, uuid, weakref, zipfile, zlib  # noqa: E401,F401
import xml.dom.minidom, xml.etree.ElementTree  # noqa: E401,F401
import vfsbox  # noqa: F401  (the host's search and the budget)

from wit_world import exports
from wit_world.imports import exit as wasi_exit


def _main() -> int:
    if len(sys.argv) < 3 or sys.argv[1] != "-c":
        print("usage: python -c CODE [ARG...]", file=sys.stderr)
        return 2
    code = sys.argv[2]
    sys.argv = ["-c", *sys.argv[3:]]
    # The run's working directory, which the host passes as PWD (libc
    # itself starts in `/`, which is not a directory of the mounts).
    cwd = os.environ.get("PWD")
    if cwd and cwd != "/":
        try:
            os.chdir(cwd)
        except OSError:
            pass
    scope = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(compile(code, "<string>", "exec"), scope)
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code & 0xFF
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:
        # As the interpreter prints an uncaught exception, without this
        # runner's own frame.
        etype, value, tb = sys.exc_info()
        traceback.print_exception(etype, value, tb.tb_next if tb else None)
        return 1
    return 0


class Run(exports.Run):
    def run(self) -> None:
        status = _main()
        sys.stdout.flush()
        sys.stderr.flush()
        if status:
            wasi_exit.exit_with_code(status)
