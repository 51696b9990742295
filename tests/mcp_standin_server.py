"""A test stand-in, not a system under test: a minimal memory server on the official MCP SDK's
MCPServer, for the mcp adapter's tests of what the reference npm server does not exercise (the
streamable HTTP transport, namespaces kept by the server, a reset tool, provenance by text).
Each namespace holds its turns; `recall` ranks them by how many of the query's words they share
and returns their texts without ids; `forget` empties a namespace.

Usage: python tests/mcp_standin_server.py [--http PORT] [--leaky]
  --leaky  recall searches every namespace and forget empties none: a broken store, for
           check.py's leakage check to catch
A turn whose text holds DIE-NOW makes the process exit with code 7 (a server that dies); one
that holds STALL-NOW makes `remember` sleep for ten minutes (a tool that hangs).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time

from mcp.server.mcpserver import MCPServer

WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    """A text's lower-cased words."""
    return set(WORD.findall(text.lower()))


def build(leaky: bool) -> MCPServer:
    """The server and its three tools."""
    server = MCPServer("standin-memory")
    store: dict[str, list[str]] = {}

    @server.tool()
    def remember(namespace: str, text: str) -> dict:
        """Store one text in a namespace."""
        if "DIE-NOW" in text:
            print(f"standin: told to die; env secret={os.environ.get('STANDIN_SECRET', '')}", file=sys.stderr,
                  flush=True)
            os._exit(7)
        if "STALL-NOW" in text:
            time.sleep(600)
        store.setdefault(namespace, []).append(text)
        return {"stored": len(store[namespace])}

    @server.tool()
    def recall(namespace: str, query: str, k: int) -> dict:
        """The k texts sharing most words with the query, best first (ties: older first)."""
        pool = [t for texts in store.values() for t in texts] if leaky else store.get(namespace, [])
        asked = words(query)
        scored = [(len(asked & words(t)), -i, t) for i, t in enumerate(pool)]
        best = sorted((s for s in scored if s[0] > 0), reverse=True)[:k]
        return {"results": [{"memory": t, "score": float(n)} for n, _, t in best]}

    @server.tool()
    def forget(namespace: str) -> dict:
        """Empty a namespace."""
        if not leaky:
            store.pop(namespace, None)
        return {"ok": True}

    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, help="serve streamable HTTP on 127.0.0.1:PORT (default: stdio)")
    parser.add_argument("--leaky", action="store_true")
    args = parser.parse_args(argv)
    server = build(args.leaky)
    if args.http:
        server.run(transport="streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
