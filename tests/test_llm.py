"""The model client: bounded retries, Retry-After, no retry on 400, errors never cached; kept
connections and proxies; sampling parameters; the preflight and an endpoint that goes away."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

import judge
import run
from cli import InputError, run_cli
from config import SAMPLING_DEFAULTS, load_config
from conftest import API_KEY, ROOT, write_config
from fake_llm import FakeLLM
from llm import LLMClient, cache_key
from processes import free_port


def records(path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]

MSG = [{"role": "user", "content": "Memories:\n(no memories)\nQuestion: x"}]


def client(tmp_path, **overrides) -> LLMClient:
    return LLMClient(load_config(write_config(tmp_path, **overrides)))


def test_retries_429_honouring_retry_after_then_succeeds(tmp_path, fake_llm):
    fake_llm.script = [{"status": 429, "retry_after": "0"}, {"status": 503}, {}]
    c = client(tmp_path, max_retries=3).complete("m", MSG, 10)
    assert c.error is None and c.text == "I don't know" and c.attempts == 3
    assert fake_llm.requests == 3


def test_retries_stop_at_the_limit(tmp_path, fake_llm):
    fake_llm.script = [{"status": 500}] * 10
    c = client(tmp_path, max_retries=2).complete("m", MSG, 10)
    assert c.error == "server_error: 500" and c.text is None
    assert fake_llm.requests == 3  # one try plus two retries, then it gives up


def test_400_is_recorded_and_not_retried(tmp_path, fake_llm):
    fake_llm.script = [{"status": 400}, {}]
    c = client(tmp_path, max_retries=5).complete("m", MSG, 10)
    assert c.error.startswith("bad_request: injected 400")
    assert fake_llm.requests == 1


def test_errors_are_never_cached(tmp_path, fake_llm):
    cl = client(tmp_path, max_retries=0)
    fake_llm.script = [{"status": 500}]
    assert cl.complete("m", MSG, 10).error is not None
    ok = cl.complete("m", MSG, 10)
    assert ok.error is None and not ok.cached
    again = cl.complete("m", MSG, 10)
    assert again.cached and again.text == ok.text
    assert fake_llm.requests == 2


def test_timeout_is_retried_then_reported(tmp_path, fake_llm):
    fake_llm.script = [{"delay_s": 1.5}, {"delay_s": 1.5}]
    c = client(tmp_path, max_retries=1, request_timeout_s=0.3).complete("m", MSG, 10)
    assert c.error == "timeout" and fake_llm.requests == 2


def test_cache_key_changes_with_what_changes_the_output():
    base = {"model": "m", "messages": MSG, "temperature": 0.0, "seed": 7, "max_tokens": 10}
    k = cache_key("http://a", base)
    assert k == cache_key("http://a", dict(base))
    for change in ({"model": "n"}, {"seed": 8}, {"max_tokens": 11}, {"messages": [{"role": "user", "content": "y"}]}):
        assert cache_key("http://a", {**base, **change}) != k
    assert cache_key("http://b", base) != k


def test_no_endpoint_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    with pytest.raises(InputError, match="LLM_BASE_URL"):
        client(tmp_path)


def test_identical_requests_in_flight_are_sent_once(tmp_path, fake_llm):
    import threading
    cl = client(tmp_path)
    fake_llm.delay_all_s = 0.5
    results = []
    threads = [threading.Thread(target=lambda: results.append(cl.complete("m", MSG, 10))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fake_llm.requests == 1
    assert sorted(r.cached for r in results) == [False, True, True, True]
    assert len({r.text for r in results}) == 1


def test_a_failed_request_in_flight_does_not_fail_the_ones_waiting_for_it(tmp_path, fake_llm):
    import threading
    cl = client(tmp_path, max_retries=0)
    fake_llm.script = [{"status": 500, "delay_s": 0.3}]
    results = []
    threads = [threading.Thread(target=lambda: results.append(cl.complete("m", MSG, 10))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.error is None for r in results) == [False, True] and fake_llm.requests == 2


def test_usage_without_a_count_is_counted_as_missing_not_as_zero(tmp_path, fake_llm):
    llm = client(tmp_path)
    llm.usage.count({"prompt_tokens": 10, "completion_tokens": 2}, cached=False)
    llm.usage.count({"prompt_tokens": 7}, cached=True)
    llm.usage.count(None, cached=False)
    assert llm.usage_snapshot() == {"calls": 3, "cached": 1, "prompt_tokens": 17, "completion_tokens": 2,
                                    "cached_prompt_tokens": 0,
                                    "prompt_tokens_missing": 1, "completion_tokens_missing": 2}


# ---------------------------------------------------------------------------------------------
# The wire: kept connections, the environment read once
# ---------------------------------------------------------------------------------------------

def test_a_kept_connection_the_server_closed_is_replaced_without_an_error_or_a_retry(tmp_path, fake_llm):
    cl = client(tmp_path, max_retries=0)
    fake_llm.script = [{"then_close": True}, {}, {"then_close": True}]
    calls = [cl.complete("m", [{"role": "user", "content": f"q{i}"}], 10) for i in range(4)]
    assert [(c.error, c.attempts) for c in calls] == [(None, 1)] * 4 and fake_llm.requests == 4


def test_a_kept_connection_closed_as_the_request_went_out_is_sent_again_once_without_a_retry(tmp_path, fake_llm):
    cl = client(tmp_path, max_retries=0)
    fake_llm.script = [{}, {"drop": True}]
    calls = [cl.complete("m", [{"role": "user", "content": f"q{i}"}], 10) for i in range(2)]
    assert [(c.error, c.attempts) for c in calls] == [(None, 1)] * 2 and fake_llm.requests == 3


def test_a_fresh_connection_closed_without_a_reply_is_a_connection_error_and_is_not_sent_again(tmp_path, fake_llm):
    fake_llm.script = [{"drop": True}, {"drop": True}]
    c = client(tmp_path, max_retries=0).complete("m", MSG, 10)
    assert (c.error, c.attempts) == ("connection", 1) and fake_llm.requests == 1


def test_a_kept_connection_closed_twice_as_requests_went_out_is_sent_again_only_once(tmp_path, fake_llm):
    cl = client(tmp_path, max_retries=0)
    fake_llm.script = [{}, {"drop": True}, {"drop": True}]
    assert cl.complete("m", MSG, 10).error is None
    c = cl.complete("m", [{"role": "user", "content": "q2"}], 10)
    assert (c.error, c.attempts) == ("connection", 1) and fake_llm.requests == 3


def test_the_worker_threads_share_kept_connections_up_to_their_number(tmp_path, fake_llm):
    import threading
    cl = LLMClient(load_config(write_config(tmp_path)), workers=3)
    fake_llm.delay_all_s = 0.2  # every worker's call in flight at once, each on a connection of its own

    errors = []
    for round_ in range(2):
        threads = [threading.Thread(target=lambda q: errors.append(cl.complete("m", [{"role": "user", "content": q}],
                                                                                10).error), args=(f"{round_}-{t}",))
                   for t in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == [None] * 6 and fake_llm.requests == 6 and fake_llm.connections == 3


def test_requests_go_through_the_proxy_the_environment_names_unless_no_proxy_says_otherwise(tmp_path, fake_llm,
                                                                                          monkeypatch):
    import http.client
    import threading
    import urllib.parse
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    relayed = []

    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:  # a forward proxy: the request line names the whole URL
            relayed.append((self.path, self.headers.get("Proxy-Authorization")))
            target = urllib.parse.urlsplit(self.path)
            upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            upstream.request("POST", target.path, body, {k: v for k, v in self.headers.items()
                                                         if k.lower() not in ("host", "proxy-authorization")})
            r = upstream.getresponse()
            data = r.read()
            self.send_response(r.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("http_proxy", f"http://user:p%40ss@127.0.0.1:{proxy.server_address[1]}")
        monkeypatch.setenv("no_proxy", "")
        assert client(tmp_path).complete("m", MSG, 10).text == "I don't know"
        assert relayed == [(fake_llm.url + "/chat/completions", "Basic dXNlcjpwQHNz")]  # user:p@ss
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        assert client(tmp_path, cache_dir=str(tmp_path / "other")).complete("m", MSG, 10).error is None
        assert len(relayed) == 1 and fake_llm.requests == 2
    finally:
        proxy.shutdown()
        proxy.server_close()


def https_fake_llm(tmp_path) -> tuple[FakeLLM, str]:
    """A FakeLLM serving https with a self-signed certificate for 127.0.0.1, and the certificate's path."""
    import ssl
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    server = FakeLLM()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    return server.start(), str(cert)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's certificate")
def test_an_https_endpoint_is_verified_against_the_bundle_the_environment_names(tmp_path, monkeypatch):
    server, cert = https_fake_llm(tmp_path)
    try:
        monkeypatch.setenv("LLM_BASE_URL", server.url.replace("http://", "https://"))
        monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
        monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
        # A self-signed certificate is not in certifi's bundle.
        with pytest.raises(InputError, match="cannot connect to the model endpoint https://.*CERTIFICATE_VERIFY_FAILED"):
            client(tmp_path).preflight("m", 10)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", cert)
        assert client(tmp_path).complete("m", MSG, 10).text == "I don't know"
    finally:
        server.stop()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's certificate")
def test_an_https_endpoint_is_reached_through_a_proxy_tunnel_whose_credentials_stay_with_the_proxy(tmp_path,
                                                                                                 monkeypatch):
    import socket
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    tunnels = []

    class Proxy(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_CONNECT(self) -> None:  # relays bytes both ways; it cannot read the TLS inside
            tunnels.append((self.path, self.headers.get("Proxy-Authorization")))
            host, port = self.path.rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)), timeout=10)
            self.send_response(200, "Connection established")
            self.end_headers()

            def pump(src: socket.socket, dst: socket.socket) -> None:
                try:
                    while data := src.recv(65536):
                        dst.sendall(data)
                except OSError:
                    pass
                finally:
                    dst.close()
            threading.Thread(target=pump, args=(upstream, self.connection), daemon=True).start()
            pump(self.connection, upstream)
            self.close_connection = True

    server, cert = https_fake_llm(tmp_path)
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        url = server.url.replace("http://", "https://")
        monkeypatch.setenv("LLM_BASE_URL", url)
        monkeypatch.setenv("LLM_API_KEY", API_KEY)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", cert)
        monkeypatch.setenv("https_proxy", f"http://user:p%40ss@127.0.0.1:{proxy.server_address[1]}")
        monkeypatch.setenv("no_proxy", "")
        assert client(tmp_path).complete("m", MSG, 10).text == "I don't know"
        assert tunnels == [(url.split("//")[1].split("/")[0], "Basic dXNlcjpwQHNz")]  # user:p@ss
        assert server.proxy_auth_headers == [None] and server.auth_headers == [f"Bearer {API_KEY}"]
    finally:
        proxy.shutdown()
        proxy.server_close()
        server.stop()


def test_the_endpoint_is_named_without_user_password_or_query():
    from llm import endpoint_label
    assert endpoint_label("https://user:secret@api.example.com:8443/v1?key=k#x") == "https://api.example.com:8443/v1"
    assert endpoint_label("http://127.0.0.1:9/v1") == "http://127.0.0.1:9/v1"


def test_a_base_url_that_is_not_http_is_a_clear_error(tmp_path, fake_llm, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", "127.0.0.1:8080/v1")
    with pytest.raises(InputError, match="is not an http"):
        client(tmp_path)


# ---------------------------------------------------------------------------------------------
# Sampling parameters
# ---------------------------------------------------------------------------------------------

def test_the_default_request_is_the_one_this_client_always_sent_so_old_cache_entries_still_hit(tmp_path, fake_llm):
    cl = client(tmp_path)
    request = cl.request("m", MSG, 10)
    assert request == {"model": "m", "messages": MSG, "temperature": 0.0, "seed": 7, "max_tokens": 10}
    assert list(request) == ["model", "messages", "temperature", "seed", "max_tokens"]


def test_a_reasoning_model_gets_max_completion_tokens_and_no_temperature_or_seed(tmp_path, fake_llm):
    sampling = {"max_tokens_param": "max_completion_tokens", "temperature": None, "send_seed": False}
    cl = client(tmp_path, answer_sampling=sampling)
    c = cl.complete("m", MSG, 10)
    assert c.error is None
    assert fake_llm.bodies[-1] == {"model": "m", "messages": MSG, "max_completion_tokens": 10}
    # Another request, so another cache entry: the default client does not hit it.
    assert not client(tmp_path).complete("m", MSG, 10).cached and fake_llm.requests == 2


def test_the_judge_client_takes_the_judge_sampling(tmp_path, fake_llm):
    cfg = load_config(write_config(tmp_path, judge_sampling={"temperature": None}))
    assert "temperature" not in LLMClient(cfg, role="judge").request("m", MSG, 10)
    assert LLMClient(cfg).request("m", MSG, 10)["temperature"] == 0.0


@pytest.mark.parametrize("key, section, says", [
    ("answer_sampling", {"max_tokens_param": "max_output_tokens"}, "answer_sampling.max_tokens_param"),
    ("answer_sampling", {"temperature": "low"}, "answer_sampling.temperature"),
    ("answer_sampling", {"temperature": -0.5}, "answer_sampling.temperature"),
    ("answer_sampling", {"temperature": True}, "answer_sampling.temperature"),
    ("judge_sampling", {"send_seed": "no"}, "judge_sampling.send_seed"),
    ("judge_sampling", {"top_p": 1}, "judge_sampling.top_p"),
    ("answer_sampling", "max_completion_tokens", "answer_sampling"),
])
def test_a_wrong_sampling_setting_is_refused_naming_the_key(tmp_path, key, section, says):
    with pytest.raises(InputError, match=f"key '{says}'"):
        load_config(write_config(tmp_path, **{key: section}))


# ---------------------------------------------------------------------------------------------
# The preflight, and an endpoint that goes away
# ---------------------------------------------------------------------------------------------

def test_the_fake_endpoint_knows_the_preflight():
    from fake_llm import PREFLIGHT
    from llm import PREFLIGHT_PROMPT
    assert PREFLIGHT_PROMPT.startswith(PREFLIGHT)


def test_a_preflight_is_sent_once_and_then_served_from_the_cache(tmp_path, fake_llm):
    client(tmp_path).preflight("m", 10)
    client(tmp_path).preflight("m", 10)
    assert fake_llm.requests == fake_llm.preflights == 1


def stage(name: str, *args: str, env: dict) -> subprocess.CompletedProcess:
    """A stage script run as a user runs it; the timeout only stops a hung test."""
    return subprocess.run([sys.executable, name, *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_a_closed_port_stops_the_run_at_its_preflight_naming_the_endpoint(tmp_path):
    # Retries that would take minutes: the preflight does not retry a refused connection.
    cfg = write_config(tmp_path, max_retries=5, retry_backoff_s=30)
    url = f"http://127.0.0.1:{free_port()}/v1"
    out = tmp_path / "keyword.jsonl"
    r = stage("run.py", "--config", cfg, "--backend", "keyword", "--out", str(out),
              env={"LLM_BASE_URL": url, "LLM_API_KEY": API_KEY})
    assert r.returncode == 2, r.stderr
    assert f"cannot connect to the model endpoint {url}" in r.stderr and "LLM_BASE_URL" in r.stderr
    assert not out.exists() and "Traceback" not in r.stderr


@pytest.mark.parametrize("refused, fix", [
    ("max_tokens", "set max_tokens_param: max_completion_tokens in answer_sampling"),
    ("temperature", "set temperature: null in answer_sampling"),
    ("seed", "set send_seed: false in answer_sampling"),
])
def test_a_parameter_the_endpoint_refuses_stops_the_run_before_any_question_with_the_setting_to_change(
        tmp_path, fake_llm, capsys, refused, fix):
    fake_llm.refused_params = {refused}
    cfg = write_config(tmp_path)
    out = tmp_path / "none.jsonl"
    assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert fix in err and fake_llm.url in err and f"'{refused}' is not supported" in err
    assert fake_llm.requests == 1 and not out.exists()  # the preflight only
    # The setting it names, changed: the run goes through, and its records say how it asked.
    sampling = {"max_tokens": {"max_tokens_param": "max_completion_tokens"}, "temperature": {"temperature": None},
                "seed": {"send_seed": False}}[refused]
    cfg = write_config(tmp_path, answer_sampling=sampling)
    assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(out)]) == 0
    assert all(r["answer_sampling"] == {**SAMPLING_DEFAULTS, **sampling} and r["error"] is None
               for r in records(out))
    assert not any(refused in body for body in fake_llm.bodies[1:])


def test_a_short_key_is_hidden_as_a_word_and_leaves_the_refused_setting_readable(tmp_path, fake_llm, capsys,
                                                                                 monkeypatch):
    # Hidden everywhere, a key "x" turned "'max_tokens' is not supported" into "'ma***_tokens'",
    # and the run advised the wrong fix.
    monkeypatch.setenv("LLM_API_KEY", "x")
    fake_llm.refused_params = {"max_tokens"}
    cfg = write_config(tmp_path)
    assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "'max_tokens' is not supported" in err
    assert "set max_tokens_param: max_completion_tokens in answer_sampling" in err
    client = LLMClient(load_config(cfg))
    assert client.wire.scrub("bad key x; max x-ray x") == "bad key ***; max x-ray ***"
    monkeypatch.setenv("LLM_API_KEY", "sk-long-secret")
    assert LLMClient(load_config(cfg)).wire.scrub("key sk-long-secret1 and sk-long-secret") == "key ***1 and ***"


def test_an_unknown_model_stops_the_run_at_its_preflight(tmp_path, fake_llm, capsys):
    fake_llm.models = {"the-served-model"}
    assert run_cli(run.main, ["--config", write_config(tmp_path), "--backend", "none",
                              "--out", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "answered 404" in err and "set answer_model in the config" in err and fake_llm.requests == 1


def test_judge_with_an_llm_judge_gets_the_same_preflight_with_its_own_settings(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, judge_model="fake-judge")
    runs, verdicts = tmp_path / "keyword.jsonl", tmp_path / "verdicts.jsonl"
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(runs)]) == 0
    fake_llm.refused_params = {"temperature"}
    before = fake_llm.requests
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(runs), "--out", str(verdicts)]) == 2
    assert "set temperature: null in judge_sampling" in capsys.readouterr().err
    assert fake_llm.requests == before + 1  # the judge's preflight only
    cfg = write_config(tmp_path, judge_model="fake-judge", judge_sampling={"temperature": None})
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(runs), "--out", str(verdicts)]) == 0
    assert any(v["by"] == "llm" for v in records(verdicts))


def test_verdicts_of_a_judge_with_other_sampling_settings_are_graded_again(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, judge_model="fake-judge")
    runs, verdicts = tmp_path / "keyword.jsonl", tmp_path / "verdicts.jsonl"
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(runs)]) == 0
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(runs), "--out", str(verdicts)]) == 0
    by_llm = {v["qid"]: v["judge_prompt_sha256"] for v in records(verdicts) if v["by"] == "llm"}
    assert by_llm and judge.grader_identity("fake-judge") == judge.grader_identity("fake-judge", SAMPLING_DEFAULTS)
    cfg = write_config(tmp_path, judge_model="fake-judge", judge_sampling={"temperature": None})
    capsys.readouterr()
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(runs), "--out", str(verdicts)]) == 0
    assert f"{len(by_llm)} graded again" in capsys.readouterr().err
    again = {v["qid"]: v["judge_prompt_sha256"] for v in records(verdicts) if v["by"] == "llm"}
    assert again.keys() == by_llm.keys() and not set(again.values()) & set(by_llm.values())


def test_an_endpoint_failing_every_request_at_the_preflight_stops_the_stage_with_exit_3(tmp_path, fake_llm, capsys):
    fake_llm.fail_all = 503
    cfg = write_config(tmp_path, max_retries=1)
    assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(tmp_path / "none.jsonl")]) == 3
    err = capsys.readouterr().err
    assert fake_llm.url in err and "rerun the same command" in err and fake_llm.requests == 2


def test_an_endpoint_that_goes_away_mid_run_stops_it_with_exit_3_and_the_same_command_resumes(tmp_path, fake_llm,
                                                                                              capsys):
    from llm import CONNECTION_FAILURES_TO_STOP
    cfg = write_config(tmp_path, workers=1, max_retries=1, max_error_rate=1.0)
    out = tmp_path / "none.jsonl"
    fake_llm.script = [{}, {"then_stop": True}]  # two answers, then nothing listens on its port
    assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert f"{CONNECTION_FAILURES_TO_STOP} calls in a row could not connect to the model endpoint {fake_llm.url}" in err
    recs = records(out)
    assert [r["error"] for r in recs] == [None, None] + ["connection"] * (CONNECTION_FAILURES_TO_STOP - 1)
    # The first call that could not connect spent its retries; the next try once each, so that a
    # dead endpoint stops the stage after one call's backoff, not after every call's.
    assert [r["retries"] for r in recs[2:]] == [1] + [0] * (CONNECTION_FAILURES_TO_STOP - 2)
    port = int(fake_llm.url.split(":")[-1].split("/")[0])
    again = FakeLLM(port=port).start()  # the endpoint is back
    try:
        assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(out)]) == 0
    finally:
        again.stop()
    recs = records(out)
    assert len(recs) == len({r["qid"] for r in recs}) == 6 and not any(r["error"] for r in recs)


def test_a_cache_entry_missing_a_field_is_a_miss_and_is_rewritten_whole(tmp_path, fake_llm):
    cl = client(tmp_path)
    first = cl.complete("m", MSG, 10)
    path = cl.cache.path(cache_key(fake_llm.url, cl.request("m", MSG, 10)))
    entry = json.loads(open(path, encoding="utf-8").read())
    del entry["finish_reason"]
    open(path, "w", encoding="utf-8").write(json.dumps(entry))
    again = cl.complete("m", MSG, 10)
    assert not again.cached and again.text == first.text and fake_llm.requests == 2
    assert "finish_reason" in json.loads(open(path, encoding="utf-8").read())


def test_a_relayed_request_with_tools_gets_the_tool_calls_and_they_are_cached(tmp_path, fake_llm):
    # A system's own agent (Letta's) calls the pinned model through this client with its tools:
    # they reach the endpoint as given, the reply's tool calls come back (a reply of tool calls
    # and no text is an answer, not an empty one), and a second identical call is a cache hit.
    tools = {"tools": [{"type": "function", "function": {"name": "archival_memory_insert", "parameters": {}}}],
             "tool_choice": "required", "parallel_tool_calls": False}
    fake_llm.responder = lambda body: ([{"name": "archival_memory_insert", "arguments": {"content": "a fact"}}]
                                       if "tools" in body else None)
    c = client(tmp_path)
    first = c.complete("m", MSG, 10, tools=tools)
    assert first.error is None and first.text == "" and not first.cached
    assert first.tool_calls == [{"id": "call_0", "type": "function", "function": {
        "name": "archival_memory_insert", "arguments": json.dumps({"content": "a fact"})}}]
    sent = fake_llm.bodies[-1]
    assert {k: sent[k] for k in tools} == tools
    again = c.complete("m", MSG, 10, tools=tools)
    assert again.cached and again.tool_calls == first.tool_calls and fake_llm.requests == 1
    plain = c.complete("m", MSG, 10)  # the same messages without tools: another request
    assert plain.tool_calls is None and plain.text == "I don't know" and fake_llm.requests == 2
