"""A small OpenAI-compatible chat server for offline tests, started on 127.0.0.1.

Answers are deterministic: an answer prompt gets the first memory line's text (or "I don't
know" for an empty context); a judge prompt gets a JSON verdict by substring match. Faults are
scripted through POST /_control (or .script): a list of steps consumed one per chat request,
each {"status": 429, "retry_after": "0"} or {"status": 500} or {"status": 400} or
{"delay_s": 1.5}, or {"content": ""} / {"finish_reason": "length"} to change a normal reply.
.delay_all_s delays every request (a slow endpoint). .judge_always = "correct" makes every
judge prompt get {"verdict": "correct"} (a judge that accepts everything).
GET /_stats returns how many chat requests arrived.
"""
from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LINE = re.compile(r"^\[\d+\] \([^)]*\) (?:[^:\n]+: )?(.*)$", re.M)


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


class FakeLLM:
    """Start with .start(); .url is the base URL to put in LLM_BASE_URL."""

    def __init__(self) -> None:
        self.script: list[dict] = []
        self.requests = 0
        self.auth_headers: list[str] = []
        self.accepted_formats: tuple = ("json_schema", "json_object")  # response_format types it takes
        self.formats_seen: list = []
        self.delay_all_s = 0.0
        self.judge_always: str | None = None
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep pytest output clean
                pass

            def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.endswith("/_stats"):
                    self._send(200, {"requests": server.requests})
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
                with server.lock:
                    server.requests += 1
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                    step = server.script.pop(0) if server.script else {}
                fmt = body.get("response_format")
                server.formats_seen.append(fmt["type"] if fmt else None)
                if fmt and fmt["type"] not in server.accepted_formats:
                    self._send(400, {"error": {"message": f"response_format {fmt['type']} not supported"}})
                    return
                if "delay_s" in step or server.delay_all_s:
                    time.sleep(step.get("delay_s", server.delay_all_s))
                if "status" in step:
                    headers = {"Retry-After": step["retry_after"]} if "retry_after" in step else {}
                    self._send(step["status"], {"error": {"message": f"injected {step['status']}"}}, headers)
                    return
                prompt = body["messages"][-1]["content"]
                text = step.get("content", answer_for(prompt, server.judge_always))
                self._send(200, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                    "model": body["model"] + "-served",
                    "choices": [{"index": 0, "finish_reason": step.get("finish_reason", "stop"),
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4,
                              "total_tokens": (len(prompt) + len(text)) // 4},
                })

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> "FakeLLM":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
