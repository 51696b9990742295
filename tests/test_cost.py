"""Dollar cost: the price table, score.py's cost per question, of ingestion and per correct
answer (null with its reason for an unpriced model, the same from a cached rerun), run.py
--estimate against what the run then spends, and max_cost stopping a run, and judging, that then
resume to the file an unstopped stage writes.

The fake endpoint reports usage as len(prompt) // 4 prompt tokens and len(reply) // 4
completion tokens, which is the config's `approx` tokenizer (len // 4) on the same prompt: the
estimate counts the prompts run.py sends with the config's tokenizer, so its prompt tokens are
the endpoint's exactly. Its completion tokens are answer_max_tokens per call, an upper bound
where an endpoint stops a reply at max_tokens; the fake ignores max_tokens and replies with a
memory's text, at most 16 tokens on the tiny set (its longest turn), so these tests set
answer_max_tokens to 16 and the bound holds as it would on a real endpoint. With the default 64
the estimate is a bound five times what the fake spends, not a guess."""
from __future__ import annotations

import json
import os

import pytest

import judge
import manifest
import run
import score
from cli import run_cli
from conftest import ROOT, write_config
from prices import load_prices, run_cost, tokens_cost
from test_faults import strip

PRICES = os.path.join(ROOT, "tests", "data", "prices.yaml")  # prices fake-model at $2 in, $8 out
DEV = os.path.join(ROOT, "data", "dev.jsonl")


def records(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def priced_config(tmp_path, **overrides) -> str:
    return write_config(tmp_path, answer_model="fake-model", price_table=PRICES, answer_max_tokens=16, **overrides)


def spent(recs: list[dict]) -> tuple[int, int]:
    return (sum(r["usage"]["prompt_tokens"] for r in recs), sum(r["usage"]["completion_tokens"] for r in recs))


def test_the_shipped_table_loads_and_names_a_source_for_every_model():
    table = load_prices(os.path.join(ROOT, "data", "prices.yaml"))
    assert table.models and all(p["source"].startswith("https://") for p in table.models.values())
    assert table.unpriced("no-such-model") == f"model no-such-model is not in the price table dated {table.date}"


def test_a_table_without_a_source_is_refused_naming_the_model(tmp_path):
    bad = tmp_path / "prices.yaml"
    bad.write_text("date: 2026-01-01\ncurrency: USD\nunit: per million tokens\nmodels:\n"
                   "  m: {input: 1, cached_input: 0.5, output: 2}\n", encoding="utf-8")
    cfg = write_config(tmp_path, price_table=str(bad))
    code = run_cli(manifest.main, [cfg, "--out-dir", str(tmp_path / "m")])
    assert code == 2


def test_the_manifest_records_the_price_table_and_its_sha256(tmp_path, capsys):
    cfg = priced_config(tmp_path)
    assert run_cli(manifest.main, [cfg, "--out-dir", str(tmp_path / "m")]) == 0
    m = json.loads(open(next((tmp_path / "m").iterdir()), encoding="utf-8").read())
    table = load_prices(PRICES)
    assert (m["price_table"], m["price_table_sha256"], m["price_table_date"]) == \
        ("tests/data/prices.yaml", table.sha256, "2026-01-01")


def test_the_estimate_is_within_5_percent_of_what_the_run_spends(tmp_path, fake_llm, capsys):
    cfg = priced_config(tmp_path, judge_model="fake-model")
    out = str(tmp_path / "keyword.jsonl")
    requests = fake_llm.requests
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out, "--estimate"]) == 0
    assert fake_llm.requests == requests and not os.path.exists(out)  # no call made, nothing written
    est = json.loads(capsys.readouterr().out)
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out]) == 0
    recs = records(out)
    prompt, completion = spent(recs)
    assert est["answer"]["calls"] == len(recs)
    assert est["answer"]["prompt_tokens"] == prompt  # the same prompts, the same count (len // 4)
    assert abs(est["answer"]["prompt_tokens"] + est["answer"]["completion_tokens"] - prompt - completion) \
        <= 0.05 * (prompt + completion)
    table = load_prices(PRICES)
    cost = tokens_cost(table, "fake-model", prompt, completion)
    assert abs(est["answer"]["cost_usd"] - cost) <= 0.05 * cost
    assert est["answer"]["completion_tokens"] >= completion and est["answer"]["cost_usd"] >= cost  # a bound
    # The judge: one call per answer at most (the rules decide some), each bounded the same way.
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", out, "--out", verdicts]) == 0
    judged = [v for v in records(verdicts) if v["by"] == "llm"]
    assert 0 < len(judged) <= est["judge"]["calls"]
    assert sum(v["usage"]["prompt_tokens"] for v in judged) <= est["judge"]["prompt_tokens"]


def test_score_reports_cost_per_question_ingestion_and_per_correct_answer(tmp_path, fake_llm, capsys):
    cfg = priced_config(tmp_path, judge_model="fake-model")
    out = str(tmp_path / "keyword.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out]) == 0
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", out, "--out", verdicts]) == 0
    js = str(tmp_path / "scores.json")
    assert run_cli(score.main, ["--config", cfg, "--runs", out, "--verdicts", verdicts, "--baseline", "keyword",
                                "--json", js, "--resamples", "50"]) == 0
    scores = json.load(open(js, encoding="utf-8"))
    s = scores["systems"][0]
    recs, vs = records(out), [v for v in records(verdicts) if v["by"] == "llm"]
    answer = sum(r["usage"]["prompt_tokens"] * 2 + r["usage"]["completion_tokens"] * 8 for r in recs) / 1e6
    judge_cost = sum(v["usage"]["prompt_tokens"] * 2 + v["usage"]["completion_tokens"] * 8 for v in vs) / 1e6
    assert s["cost_answer_usd"] == pytest.approx(answer) and s["cost_judge_usd"] == pytest.approx(judge_cost)
    assert s["cost_per_question_usd"] == pytest.approx((answer + judge_cost) / len(recs))
    assert s["cost_ingestion_usd"] == 0.0  # keyword calls no model while writing
    assert s["cost_per_correct_usd"] == pytest.approx((answer + judge_cost) / s["correct"])
    assert scores["prices"]["date"] == "2026-01-01" and "as recorded" in scores["prices"]["basis"]
    assert "dollar cost (price table tests/data/prices.yaml dated 2026-01-01" in capsys.readouterr().out
    # A rerun served wholly from the response cache reports what the calls cost when made.
    out2 = str(tmp_path / "again.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out2]) == 0
    assert all(r["cached"] for r in records(out2))
    v2 = str(tmp_path / "verdicts2.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", out2, "--out", v2]) == 0
    js2 = str(tmp_path / "scores2.json")
    assert run_cli(score.main, ["--config", cfg, "--runs", out2, "--verdicts", v2, "--baseline", "keyword",
                                "--json", js2, "--resamples", "50"]) == 0
    assert json.load(open(js2, encoding="utf-8"))["systems"][0]["cost_per_question_usd"] == \
        pytest.approx(s["cost_per_question_usd"])


def test_an_unpriced_model_has_a_null_cost_with_the_reason_never_0(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, answer_model="unlisted-model", price_table=PRICES)
    out = str(tmp_path / "none.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", out]) == 0
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", out, "--out", verdicts]) == 0
    js = str(tmp_path / "scores.json")
    assert run_cli(score.main, ["--config", cfg, "--runs", out, "--verdicts", verdicts, "--baseline", "none",
                                "--json", js, "--resamples", "50"]) == 0
    s = json.load(open(js, encoding="utf-8"))["systems"][0]
    assert s["cost_per_question_usd"] is None and s["cost_per_correct_usd"] is None
    assert "model unlisted-model is not in the price table dated 2026-01-01" in s["cost_note"]


def test_max_cost_with_an_unpriced_answer_model_exits_2_before_any_call(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, answer_model="unlisted-model", price_table=PRICES, max_cost=1.0)
    code = run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(tmp_path / "none.jsonl")])
    assert code == 2 and fake_llm.requests == 0
    assert "max_cost" in capsys.readouterr().err


def test_a_run_stopped_by_max_cost_then_resumed_with_it_raised_equals_a_run_never_stopped(tmp_path, fake_llm, capsys):
    (tmp_path / "clean").mkdir()
    clean_cfg = priced_config(tmp_path / "clean", dataset=DEV, workers=1)
    clean = str(tmp_path / "clean.jsonl")
    assert run_cli(run.main, ["--config", clean_cfg, "--backend", "keyword", "--out", clean]) == 0
    full = run_cost(load_prices(PRICES), records(clean))
    (tmp_path / "capped").mkdir()
    cap = full / 3
    cfg = priced_config(tmp_path / "capped", dataset=DEV, workers=1, max_cost=cap)
    out = str(tmp_path / "capped.jsonl")
    argv = ["--config", cfg, "--backend", "keyword", "--out", out]
    capsys.readouterr()
    assert run_cli(run.main, argv) == 3
    err = capsys.readouterr().err
    kept = records(out)
    assert 0 < len(kept) < len(records(clean))
    assert "stopped: max_cost" in err and f"records kept in {out}; the same command resumes" in err
    assert "once max_cost in" in err
    # The same command under the same cap stops at once: the cap is on the file's cost, not this command's.
    assert run_cli(run.main, argv) == 3
    assert "before this command made a call" in capsys.readouterr().err
    cfg = priced_config(tmp_path / "capped", dataset=DEV, workers=1, max_cost=full * 2)
    # The estimate of the resumed run counts the records still to do, and none of those kept.
    assert run_cli(run.main, [*argv, "--estimate"]) == 0
    assert json.loads(capsys.readouterr().out)["records_to_do"] == len(records(clean)) - len(kept)
    assert run_cli(run.main, argv) == 0
    assert strip(records(out)) == strip(records(clean))


def test_prompt_tokens_the_provider_served_from_its_cache_are_priced_at_the_cached_input_price():
    from llm import UsageCounter, completion_entry
    from prices import call_cost, write_cost

    def reply(usage: dict) -> bytes:
        return json.dumps({"model": "fake-model", "usage": usage,
                           "choices": [{"message": {"content": "Kafka"}, "finish_reason": "stop"}]}).encode()
    u = completion_entry(reply({"prompt_tokens": 1000, "completion_tokens": 10,
                                "prompt_tokens_details": {"cached_tokens": 600}}))["usage"]
    assert u == {"prompt_tokens": 1000, "completion_tokens": 10, "cached_prompt_tokens": 600}
    table = load_prices(PRICES)  # fake-model: $2 in, $1 cached in, $8 out per million
    assert call_cost(table, "fake-model", u) == pytest.approx((400 * 2 + 600 * 1 + 10 * 8) / 1e6)
    # Without the provider's count every prompt token is at the input price; a count above the
    # prompt's is not a usage the wire format allows, so the reply is refused as malformed.
    plain = completion_entry(reply({"prompt_tokens": 1000, "completion_tokens": 10}))["usage"]
    assert plain["cached_prompt_tokens"] is None
    assert call_cost(table, "fake-model", plain) == pytest.approx((1000 * 2 + 10 * 8) / 1e6)
    assert completion_entry(reply({"prompt_tokens": 10, "completion_tokens": 1,
                                   "prompt_tokens_details": {"cached_tokens": 11}})) is None
    # A system's own calls while writing are summed with their cached share, and priced the same way.
    counter = UsageCounter()
    counter.count(u, cached=False)
    counter.count(plain, cached=False)
    rec = {"internal_usage": counter.snapshot(), "internal_model": "fake-model"}
    assert rec["internal_usage"]["cached_prompt_tokens"] == 600
    assert write_cost(table, rec) == pytest.approx((1400 * 2 + 600 * 1 + 20 * 8) / 1e6)


def judge_cost(verdicts: list[dict]) -> float:
    return sum(v["usage"]["prompt_tokens"] * 2 + v["usage"]["completion_tokens"] * 8 for v in verdicts
               if v["by"] == "llm") / 1e6


def test_judging_stopped_by_max_cost_then_resumed_with_it_raised_equals_judging_never_stopped(tmp_path, fake_llm,
                                                                                                capsys):
    (tmp_path / "clean").mkdir()
    cfg = priced_config(tmp_path / "clean", dataset=DEV, workers=1, judge_model="fake-model")
    answers = str(tmp_path / "keyword.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", answers]) == 0
    clean = str(tmp_path / "clean-verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", answers, "--out", clean]) == 0
    full = judge_cost(records(clean))
    assert sum(v["by"] == "llm" for v in records(clean)) > 3
    (tmp_path / "capped").mkdir()
    cfg = priced_config(tmp_path / "capped", dataset=DEV, workers=1, judge_model="fake-model", max_cost=full / 3)
    out = str(tmp_path / "capped-verdicts.jsonl")
    argv = ["--config", cfg, "--runs", answers, "--out", out]
    capsys.readouterr()
    assert run_cli(judge.main, argv) == 3
    err = capsys.readouterr().err
    kept = records(out)
    assert 0 < len(kept) < len(records(clean))
    assert full / 3 <= judge_cost(kept) < full
    assert "stopped: max_cost" in err and "this verdicts file's judge calls cost" in err
    assert f"verdicts kept in {out}; the same command resumes" in err and "once max_cost in" in err
    # The same command under the same cap stops at once, having graded nothing more.
    assert run_cli(judge.main, argv) == 3
    assert "before this command made a call" in capsys.readouterr().err and records(out) == kept
    cfg = priced_config(tmp_path / "capped", dataset=DEV, workers=1, judge_model="fake-model", max_cost=full * 2)
    assert run_cli(judge.main, argv) == 0

    def graded(path: str) -> list[dict]:
        return sorted(({k: v for k, v in x.items() if k != "cached"} for x in records(path)),
                      key=lambda x: json.dumps(x, sort_keys=True))
    assert graded(out) == graded(clean)


def test_max_cost_with_an_unpriced_judge_model_exits_2_before_any_call(tmp_path, fake_llm, capsys):
    cfg = priced_config(tmp_path, judge_model="unlisted-judge")
    answers = str(tmp_path / "keyword.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", answers]) == 0
    cfg = priced_config(tmp_path, judge_model="unlisted-judge", max_cost=1.0)
    requests = fake_llm.requests
    code = run_cli(judge.main, ["--config", cfg, "--runs", answers, "--out", str(tmp_path / "verdicts.jsonl")])
    assert code == 2 and fake_llm.requests == requests
    assert "key 'max_cost' is set, but judge_model" in capsys.readouterr().err


@pytest.mark.parametrize("cost", ["cost_per_question_usd", "search_ms_p95"])
def test_the_frontier_marks_the_systems_no_other_beats_on_both_accuracy_and_cost(cost):
    from prices import frontier

    def row(label: str, acc, value, backend: str | None = None, budget: int = 270) -> dict:
        return {"label": label, "backend": backend or label, "budget": budget, "accuracy": acc, cost: value}
    rows = [row("cheap", 0.4, 0.001), row("good", 0.7, 0.01), row("worse_and_dearer", 0.5, 0.02),
            row("tie_but_dearer", 0.7, 0.02), row("oracle", 0.9, 0.0001), row("unpriced", 0.99, None),
            row("other_budget", 0.3, 0.05, budget=500)]
    assert frontier(rows, {"oracle"}, cost) == {"cheap": True, "good": True, "worse_and_dearer": False,
                                                "tie_but_dearer": False, "oracle": None, "unpriced": None,
                                                "other_budget": True}
