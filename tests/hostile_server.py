"""A server on 127.0.0.1 that misbehaves on purpose, for the tests of bounded waits and careful
clients: it answers the model client's preflight as a model server would (so a stage gets past
it; unless answer_preflight is False), and every other request as `behaviour` says:

  drip       headers, then one byte of the body every `drip_every_s`, never the whole of it
  hang       reads the request and never answers
  huge       a 200 whose body never ends (a gigabyte as fast as the socket takes it)
  echo       a 500 whose text repeats the request's Authorization header
  redirect   a 307 to `location`
  raw        a 200 with `body` (bytes) as it is

`requests` counts what it was sent that was not a preflight.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from fake_llm import PREFLIGHT, send


class HostileServer:
    """Start with .start(); .url is its base URL (…/v1 for a model endpoint works as well)."""

    def __init__(self, behaviour: str, drip_every_s: float = 0.2, location: str = "", body: bytes = b"") -> None:
        self.behaviour, self.drip_every_s, self.location, self.body = behaviour, drip_every_s, location, body
        self.requests = 0
        self.answer_preflight = True
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _reply(self, status: int, data: bytes, headers: dict | None = None) -> None:
                send(self, status, data, headers)

            def _handle(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if server.answer_preflight and PREFLIGHT.encode() in data:
                    self._reply(200, json.dumps({"model": "hostile", "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "OK"}}]}).encode())
                    return
                server.requests += 1
                how = server.behaviour
                if how == "drip":
                    self.send_response(200)
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    while not server.stopping.wait(server.drip_every_s):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                elif how == "hang":
                    server.stopping.wait()
                elif how == "huge":
                    self.send_response(200)
                    self.send_header("Content-Length", str(2**30))
                    self.end_headers()
                    chunk = b"0" * 2**20
                    for _ in range(2**10):
                        if server.stopping.is_set():
                            break
                        self.wfile.write(chunk)
                elif how == "echo":
                    self._reply(500, f"bad request from {self.headers.get('Authorization')}".encode())
                elif how == "redirect":
                    self._reply(307, b"", {"Location": server.location})
                else:
                    self._reply(200, server.body)

            def handle_one_request(self) -> None:
                try:
                    super().handle_one_request()
                except (ConnectionError, TimeoutError):
                    self.close_connection = True  # the client cut it off: what the tests want

            do_GET = do_POST = do_DELETE = do_PUT = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> "HostileServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        time.sleep(0.05)
        self.httpd.shutdown()
        self.httpd.server_close()
