"""A small OpenAI-compatible chat server for offline tests, started on 127.0.0.1.

Answers are deterministic: an answer prompt gets the first memory line's text (or "I don't
know" for an empty context); a judge prompt gets a JSON verdict by substring match. Faults are
scripted through POST /_control (or .script): a list of steps consumed one per chat request,
each {"status": 429, "retry_after": "0"} or {"status": 500} or {"status": 400} or
{"delay_s": 1.5}, or {"content": ""} / {"finish_reason": "length"} to change a normal reply;
{"then_close": true} closes the connection after the reply without saying so (a server's idle
keep-alive timeout), {"drop": true} reads the request and closes the connection without any
reply (a server closing a kept connection as a request arrives), {"then_stop": true} also
stops the server, whose port then refuses connections until a FakeLLM(port=...) serves it
again.
.delay_all_s delays every request (a slow endpoint); .fault_rate makes that share of requests
fail at random (a fixed seed) with a 429 + Retry-After, a 500 or a stall of
.fault_stall_s (a client timeout), in equal parts. .judge_always = "correct" makes every judge
prompt get {"verdict": "correct"} (a judge that accepts everything). .responder, when set, is
called with each chat request's body and returns the reply's text, or None for the default reply
(a backend's extraction calls answered with canned output), or a list of tool calls
({"name": ..., "arguments": {...}}), the reply's tool_calls with no text (an agent's step).

A stage's preflight (llm.py's PREFLIGHT_PROMPT) is answered "OK" at once: scripted steps, random
faults and delays are meant for the questions, so it takes none of them. What a preflight is
for is refused for every request, preflight included: .refused_params names request fields
answered with a 400 naming the field (as OpenAI answers max_tokens for a reasoning model),
.models (when set) the only models served (others get a 404), .api_key (when set) the only key
accepted (others get a 401); .fail_all (a status) answers every request so.
.bodies holds every chat request's body, .auth_headers and .proxy_auth_headers its
Authorization and Proxy-Authorization headers (None: not sent); .connections counts the connections accepted.
GET /_stats returns how many chat requests arrived (preflights included, and apart), and the
times of the first question request and of the last reply.
"""
from __future__ import annotations

import json
import random
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LINE = re.compile(r"^\[\d+\] \([^)]*\) (?:[^:\n]+: )?(.*)$", re.M)
PREFLIGHT = "memory-bench preflight"  # how llm.PREFLIGHT_PROMPT begins (tests/test_llm.py checks it)


def answer_for(prompt: str, judge_always: str | None = None) -> str:
    """The deterministic reply to a prompt."""
    if "Reference answer:" in prompt and judge_always is not None:
        return json.dumps({"verdict": judge_always})
    if "Reference answer:" in prompt:
        gold = re.search(r"Reference answer: (.*)", prompt).group(1).strip().lower()
        cand = re.search(r"Candidate answer: (.*)", prompt).group(1).strip().lower()
        if "garble" in cand:
            return "The answer looks fine to me."
        return json.dumps({"verdict": "correct" if gold and gold in cand else "incorrect"})
    if "(no memories)" in prompt:
        return "I don't know"
    m = LINE.search(prompt)
    return m.group(1).strip() if m else "I don't know"


def send(handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict | None = None) -> None:
    """One whole JSON reply, its length given."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client killed mid-reply (the tests that kill run.py): not the server's error
        super().handle_error(request, client_address)


class FakeLLM:
    """Start with .start(); .url is the base URL to put in LLM_BASE_URL."""

    def __init__(self, port: int = 0) -> None:
        self.script: list[dict] = []
        self.requests = 0
        self.connections = 0
        self.auth_headers: list[str] = []
        self.proxy_auth_headers: list[str | None] = []
        self.accepted_formats: tuple = ("json_schema", "json_object")  # response_format types it takes
        self.formats_seen: list = []
        self.delay_all_s = 0.0
        self.fault_rate = 0.0
        self.fault_stall_s = 2.0
        self.faults = 0
        self._fault_rng = random.Random(0)
        self.judge_always: str | None = None
        self.responder = None  # body -> reply text, or None for the default reply
        self.preflights = 0
        self.refused_params: set = set()
        self.models: set | None = None
        self.api_key: str | None = None
        self.fail_all: int | None = None
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        server = self

        self.first_at = self.last_at = None  # monotonic times of the first request and last reply

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, as real endpoints do: a client that reuses connections is measured as such.
            # Without TCP_NODELAY the body, sent after the headers, waits out the client's delayed
            # ACK (40 ms a call on Linux).
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:  # keep pytest output clean
                pass

            def setup(self) -> None:  # one handler per connection
                super().setup()
                with server.lock:
                    server.connections += 1

            def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
                send(self, status, json.dumps(body).encode(), headers)

            def do_GET(self) -> None:
                if self.path.endswith("/_stats"):
                    self._send(200, {"requests": server.requests, "preflights": server.preflights,
                                     "faults": server.faults, "first_at": server.first_at, "last_at": server.last_at})
                elif self.path.endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                if self.path.endswith("/_control"):
                    with server.lock:
                        server.script = list(body["script"])
                    self._send(200, {"ok": True})
                    return
                prompt = body["messages"][-1]["content"]
                preflight = prompt.startswith(PREFLIGHT)
                with server.lock:
                    server.bodies.append(body)
                    server.requests += 1
                    server.preflights += preflight
                    if server.first_at is None and not preflight:
                        server.first_at = time.monotonic()
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                    server.proxy_auth_headers.append(self.headers.get("Proxy-Authorization"))
                    step = server.script.pop(0) if server.script and not preflight else {}
                    if (not step and not preflight and server.fault_rate
                            and server._fault_rng.random() < server.fault_rate):
                        server.faults += 1
                        step = server._fault_rng.choice([{"status": 429, "retry_after": "0"}, {"status": 500},
                                                         {"delay_s": server.fault_stall_s, "status": 500}])
                if server.fail_all is not None:
                    self._send(server.fail_all, {"error": {"message": f"injected {server.fail_all}"}})
                    return
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self._send(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
                    return
                refused = sorted(server.refused_params & set(body))
                if refused:
                    self._send(400, {"error": {"message": f"Unsupported parameter: '{refused[0]}' is not supported "
                                                          f"with this model.", "param": refused[0]}})
                    return
                if server.models is not None and body["model"] not in server.models:
                    self._send(404, {"error": {"message": f"The model `{body['model']}` does not exist",
                                               "code": "model_not_found"}})
                    return
                if preflight:
                    self._reply(body, prompt, "OK", {})
                    return
                fmt = body.get("response_format")
                server.formats_seen.append(fmt["type"] if fmt else None)
                if fmt and fmt["type"] not in server.accepted_formats:
                    self._send(400, {"error": {"message": f"response_format {fmt['type']} not supported"}})
                    return
                if step.get("drop"):
                    self.close_connection = True
                    return
                if "delay_s" in step or server.delay_all_s:
                    time.sleep(step.get("delay_s", server.delay_all_s))
                if "status" in step:
                    headers = {"Retry-After": step["retry_after"]} if "retry_after" in step else {}
                    self._send(step["status"], {"error": {"message": f"injected {step['status']}"}}, headers)
                    return
                canned = server.responder(body) if server.responder is not None else None
                default = answer_for(prompt, server.judge_always) if canned is None else canned
                self._reply(body, prompt, step.get("content", default), step)
                server.last_at = time.monotonic()
                if step.get("then_close") or step.get("then_stop"):
                    self.close_connection = True
                if step.get("then_stop"):
                    threading.Thread(target=server.stop).start()

            def _reply(self, body: dict, prompt: str, text, step: dict) -> None:
                message: dict = {"role": "assistant", "content": text}
                if isinstance(text, list):  # tool calls
                    message = {"role": "assistant", "content": None, "tool_calls": [
                        {"id": f"call_{i}", "type": "function",
                         "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                        for i, c in enumerate(text)]}
                    text = json.dumps(text)
                self._send(200, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                    "model": body["model"] + "-served",
                    "choices": [{"index": 0, "finish_reason": step.get("finish_reason", "stop"),
                                 "message": message}],
                    "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4,
                              "total_tokens": (len(prompt) + len(text)) // 4},
                })

        self.httpd = _Server(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> "FakeLLM":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":
    # A stand-alone endpoint for bench scripts: `python tests/fake_llm.py --delay-s 0.2` prints
    # its URL and serves until killed, in its own process (so it does not share the GIL with
    # the client it measures).
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay-s", type=float, default=0.0, help="latency added to every chat request")
    ap.add_argument("--refuse", action="append", default=[], metavar="PARAM",
                    help="answer every request carrying this field with a 400 (e.g. max_tokens)")
    a = ap.parse_args()
    fake = FakeLLM()
    fake.delay_all_s = a.delay_s
    fake.refused_params = set(a.refuse)
    print(fake.url, flush=True)
    fake.httpd.serve_forever()
