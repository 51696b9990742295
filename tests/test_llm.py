"""The model client: bounded retries, Retry-After, no retry on 400, errors never cached."""
from __future__ import annotations

import pytest

from conftest import write_config
from interface import InputError, load_config
from llm import LLMClient, cache_key

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
    llm._count({"prompt_tokens": 10, "completion_tokens": 2}, cached=False)
    llm._count({"prompt_tokens": 7}, cached=True)
    llm._count(None, cached=False)
    assert llm.usage_snapshot() == {"calls": 3, "cached": 1, "prompt_tokens": 17, "completion_tokens": 2,
                                    "prompt_tokens_missing": 1, "completion_tokens_missing": 2}


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
