"""An independent MCP client for the tests: the official Python SDK (`mcp`,
pinned in tests/mcp/requirements.txt) drives a vfsbox server and prints what
it saw as one JSON object, which the Rust tests (host/tests/all/mcp.rs)
assert on.

    client.py stdio MODE SCENARIO -- COMMAND [ARG]...
    client.py http  MODE SCENARIO URL [KEY]

MODE is `legacy` (the initialize handshake of 2025 clients) or `2026-07-28`
(the session-less protocol). SCENARIO is one of `tour`, `limit`, `busy`,
`cancel`, `progress`, `run`, `tenant`, `hostile`.
"""

import json
import sys
import time

import anyio
import httpx2
import jsonschema
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

SPIN = "while true; do :; done"


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def summary(result):
    return {
        "is_error": bool(result.is_error),
        "text": text_of(result),
        "structured": result.structured_content,
        "links": [str(c.uri) for c in result.content if getattr(c, "type", "") == "resource_link"],
    }


async def tour(client):
    tools = (await client.list_tools()).tools
    schemas = {}
    for t in tools:
        jsonschema.Draft202012Validator.check_schema(t.input_schema)
        jsonschema.Draft202012Validator.check_schema(t.output_schema)
        schemas[t.name] = t.output_schema
    calls = {
        "sh": {"script": "cd /files && grep -rn refund . | sort; echo done", "cwd": "/"},
        "python": {
            "code": "import os, sys, vfsbox\nprint(sorted(os.listdir('.')), sys.argv[1:])\nprint(vfsbox.grep('TODO', '/files').paths())\nopen('a.txt', 'w')",
            "args": ["x"],
            "cwd": "/files",
        },
        "read": {"path": "/files/notes/b.txt"},
        "grep": {"patterns": ["TODO"], "roots": ["/files"]},
        "list": {"path": "/files", "depth": 2},
        "stat": {"path": "/files/a.txt"},
    }
    out = {
        "protocol": client.protocol_version,
        "tools": sorted(t.name for t in tools),
        "annotations": {
            t.name: [
                t.annotations.read_only_hint,
                t.annotations.idempotent_hint,
                t.annotations.open_world_hint,
                t.annotations.destructive_hint,
            ]
            for t in tools
        },
        "calls": {},
    }
    for name, args in calls.items():
        # The first Python call on a cold machine compiles the interpreter
        # (seconds, tens of them under load); every later one is cached.
        r = await client.call_tool(name, args, read_timeout_seconds=300)
        # The structured result must match the tool's declared output schema.
        jsonschema.validate(r.structured_content, schemas[name])
        out["calls"][name] = summary(r)
    out["bad_grep"] = summary(await client.call_tool("grep", {"patterns": ["("]}))
    templates = (await client.list_resource_templates()).resource_templates
    out["templates"] = [t.uri_template for t in templates]
    res = await client.read_resource("vfs:///files/a.txt")
    out["resource"] = [getattr(c, "text", None) for c in res.contents]
    return out


async def limit(client):
    r = await client.call_tool(
        "sh",
        {"script": "echo before; cat /files/a.txt /files/notes/b.txt /files/notes/c.txt", "limits": {"document_reads": 1}},
    )
    return summary(r)


async def timed_call(client, args, into, key):
    start = time.monotonic()
    r = await client.call_tool("sh", args)
    into[key] = dict(summary(r), seconds=time.monotonic() - start)


async def busy(client):
    # Five long calls on four slots: four run until their deadline, the
    # fifth is refused at once.
    results = {}
    args = {"script": SPIN, "limits": {"deadline_ms": 3000}}
    async with anyio.create_task_group() as tg:
        for i in range(5):
            tg.start_soon(timed_call, client, args, results, i)
            await anyio.sleep(0.2)
    return [results[i] for i in range(5)]


async def cancel(client):
    # A call cancelled while it spins (its deadline 30 s away) frees its
    # slot: soon after, four calls all get one. Tried every half second, so
    # that a loaded machine only makes it later, not wrong.
    started = time.monotonic()
    with anyio.move_on_after(1.0):
        await client.call_tool("sh", {"script": SPIN, "limits": {"deadline_ms": 30000}})
    cancelled = time.monotonic()
    args = {"script": "echo ok", "limits": {"deadline_ms": 5000}}
    while True:
        await anyio.sleep(0.5)
        results = {}
        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(timed_call, client, args, results, i)
        after = [results[i] for i in range(4)]
        freed = time.monotonic() - cancelled
        if all(not r["is_error"] for r in after) or freed > 20:
            break
    return {"cancelled_after": cancelled - started, "freed_within": freed, "after": after}


async def progress(client):
    # A call with a progress callback (the SDK sends a progress token)
    # hears about a script that runs for a while.
    heard = []

    async def on_progress(value, total, message):
        heard.append({"progress": value, "message": message})

    r = await client.call_tool(
        "sh", {"script": SPIN, "limits": {"deadline_ms": 2500}}, progress_callback=on_progress
    )
    return {"result": summary(r), "heard": heard}


async def run(client):
    # The stored script whose id is in VFSBOX_SCRIPT_ID, if this tenant may.
    import os

    tools = sorted(t.name for t in (await client.list_tools()).tools)
    r = await client.call_tool(
        "run", {"id": os.environ["VFSBOX_SCRIPT_ID"], "args": ["agents"], "stdin": "unused"}
    )
    return {"tools": tools, "result": summary(r)}


async def tenant(client):
    r = await client.call_tool("list", {"path": "/"})
    other = await client.call_tool("stat", {"path": "/files/a.txt"})
    return {"root": summary(r), "other": summary(other)}


ESCAPES = [
    "/files/../../etc/passwd",
    "/files/%2e%2e/%2e%2e/etc/passwd",
    "/files/..%2f..%2fetc/passwd",
    "/files/escape/passwd",
    "/files/pw",
    "/files/\u0000/etc/passwd",
    "../../../etc/passwd",
    "/etc/passwd",
    "//etc/passwd",
    "/files/" + "x/" * 3000,
]


async def hostile(client):
    """Every tool and the resources, asked for paths that try to leave the
    mount; what came back, for the test to check that nothing did."""
    out = []

    async def attempt(what, call):
        try:
            r = await call()
            if hasattr(r, "contents"):
                out.append({"what": what, "ok": True, "text": json.dumps([c.model_dump() for c in r.contents])})
            else:
                out.append({"what": what, "ok": not r.is_error, "text": text_of(r) + json.dumps(r.structured_content)})
        except Exception as e:  # a protocol error is a refusal too
            out.append({"what": what, "ok": False, "text": str(e)})

    for p in ESCAPES:
        await attempt(f"read {p}", lambda: client.call_tool("read", {"path": p}))
        await attempt(f"stat {p}", lambda: client.call_tool("stat", {"path": p}))
        await attempt(f"list {p}", lambda: client.call_tool("list", {"path": p, "depth": 3}))
        await attempt(f"grep {p}", lambda: client.call_tool("grep", {"patterns": ["root"], "roots": [p]}))
        await attempt(f"sh cat {p}", lambda: client.call_tool("sh", {"script": f"cat '{p}'"}))
        await attempt(f"resource {p}", lambda: client.read_resource("vfs://" + p))
        await attempt(
            f"python open {p}",
            lambda: client.call_tool("python", {"code": f"print(open({p!r}).read())"}, read_timeout_seconds=300),
        )
    # Everything Python can reach in the mount, links followed, each
    # document printed.
    walk = (
        "import os\nfor d, _, fs in os.walk('/files', followlinks=True):\n    for f in fs:\n        try:\n"
        "            print(open(os.path.join(d, f)).read())\n        except OSError as e:\n            print(e)"
    )
    await attempt("walk python /", lambda: client.call_tool("python", {"code": walk}, read_timeout_seconds=300))
    await attempt("list / deep", lambda: client.call_tool("list", {"path": "/", "depth": 10}))
    await attempt("grep / root:", lambda: client.call_tool("grep", {"patterns": ["root:"], "roots": ["/"]}))
    return out


SCENARIOS = {"tour": tour, "limit": limit, "busy": busy, "cancel": cancel, "tenant": tenant, "hostile": hostile, "progress": progress, "run": run}


async def main(argv):
    transport, mode, scenario, *rest = argv
    if transport == "stdio":
        command = rest[rest.index("--") + 1 :]
        server = StdioServerParameters(command=command[0], args=command[1:])
        async with Client(server, mode=mode, read_timeout_seconds=60) as client:
            result = await SCENARIOS[scenario](client)
    else:
        url, *key = rest
        headers = {"Authorization": f"Bearer {key[0]}"} if key else {}
        async with httpx2.AsyncClient(headers=headers, timeout=300) as http:
            async with Client(
                streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=60
            ) as client:
                result = await SCENARIOS[scenario](client)
    print(json.dumps(result))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
