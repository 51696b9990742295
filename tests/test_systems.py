"""The memory systems wrapped from their own packages (LlamaIndex memory, cognee, Hindsight,
Graphiti), each run for real on a small fixture: what their adapters add beyond the contract
that tests/test_backends.py checks for every backend (provenance where the system rewrites or
merges, the versions, the no-LLM and LLM modes)."""
from __future__ import annotations

import json

import pytest

from backends import load_backend
from conftest import backend_config
from llm import AuthenticationError
from contract import Hit, MemoryItem


def turn(item_id: str, text: str, stamp: str = "2026-03-02T10:00:00Z", role: str = "user") -> MemoryItem:
    return MemoryItem(item_id=item_id, text=f"{role}: {text}",
                      metadata={"session_id": "s1", "timestamp": stamp, "role": role})


def assert_concurrent_searches_agree(b, namespace: str, query: str, threads: int = 4) -> None:
    """The same search from several threads at once: none fails, all return the same turns."""
    import threading
    results, errors = [], []

    def ask() -> None:
        try:
            results.append([h.source_ids for h in b.search(namespace, query, 2)])
        except Exception as e:  # collected: an assertion in a thread would be lost
            errors.append(e)
    started = [threading.Thread(target=ask) for _ in range(threads)]
    for t in started:
        t.start()
    for t in started:
        t.join()
    assert not errors and len(results) == threads and all(r == results[0] for r in results)


@pytest.fixture
def endpoint(monkeypatch):
    """The test endpoint as LLM_BASE_URL, with a key (LLM_API_KEY); a test sets its responder."""
    from fake_llm import FakeLLM
    fake = FakeLLM().start()
    monkeypatch.setenv("LLM_BASE_URL", fake.url)
    monkeypatch.setenv("LLM_API_KEY", "sk-test-not-a-secret")
    yield fake
    fake.stop()


def test_llamaindex_identical_turns_are_told_apart_by_order(tmp_path):
    pytest.importorskip("llama_index.vector_stores.qdrant")
    pytest.importorskip("wordllama")
    b = load_backend("llamaindex", backend_config(tmp_path, {"llamaindex": {"model": "wordllama"}}))
    b.reset("ns")
    b.add("ns", [turn("t1", "ok, thanks"), turn("t2", "The cache lives in Redis 7."),
                 turn("t3", "ok, thanks", "2026-03-03T10:00:00Z")])
    hits = b.search("ns", "ok, thanks", 3)
    assert sorted(h.source_ids for h in hits) == [("t1",), ("t2",), ("t3",)]
    assert [h.source_ids for h in hits[:2]] in ([("t1",), ("t3",)], [("t3",), ("t1",)])
    stamps = {h.source_ids[0]: h.timestamp for h in hits}
    assert stamps == {"t1": "2026-03-02T10:00:00Z", "t2": "2026-03-02T10:00:00Z", "t3": "2026-03-03T10:00:00Z"}
    assert "VectorMemoryBlock" in b.version and "llama-index-core" in b.version


LLAMAINDEX_FACTS = {"Redis 7": "The cache lives in Redis 7", "Postgres 16": "Billing runs on Postgres 16",
                    "Kafka": "The queue runs on Kafka"}


def llamaindex_reply(body: dict) -> str | None:
    """Canned replies to LlamaIndex's fact block: a fact per turn that states one (the turn is the
    first message), none for small talk; its condensing keeps the cache's fact and merges the
    other two into words no turn produced."""
    prompt = body["messages"][-1]["content"]
    if "fact condensing system" in prompt:
        return "<facts><fact>The cache lives in Redis 7</fact><fact>Billing and the queue moved</fact></facts>"
    if "fact extraction system" not in prompt:
        return None
    said = body["messages"][0]["content"]
    return "<facts>" + "".join(f"<fact>{f}</fact>" for cue, f in LLAMAINDEX_FACTS.items() if cue in said) + "</facts>"


def test_llamaindex_fact_block_hits_are_its_facts_in_order_naming_the_turn_that_produced_each(tmp_path, endpoint):
    """LlamaIndex's FactExtractionMemoryBlock, its calls answered by the test endpoint: a hit is a
    fact, in the block's order whatever the question, naming the turn whose put produced it; a
    fact its condensing wrote in new words names none (recall null); search calls no model; a
    reply without <facts> fails the add."""
    pytest.importorskip("llama_index.core")
    endpoint.responder = llamaindex_reply
    b = load_backend("llamaindex", backend_config(tmp_path, {"llamaindex": {"facts": True, "max_facts": 2}}))
    assert b.name == "llamaindex (internal extractor: stub-model)" and b.internal_model == "stub-model"
    assert "FactExtractionMemoryBlock" in b.version
    b.reset("ns")
    b.add("ns", [turn("t1", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z"), turn("t2", "ok, thanks"),
                 turn("t3", "We moved billing to Postgres 16.")])
    b.reset("other")
    b.add("other", [turn("o1", "We moved billing to Postgres 16.")])
    calls = len(endpoint.bodies)
    hits = b.search("ns", "Where does billing run?", 5)
    assert [(h.text, h.source_ids, h.timestamp) for h in hits] == [
        ("The cache lives in Redis 7", ("t1",), "2026-03-03T10:00:00Z"),
        ("Billing runs on Postgres 16", ("t3",), "2026-03-02T10:00:00Z")]
    assert [h.text for h in b.search("ns", "anything at all", 1)] == ["The cache lives in Redis 7"]
    assert [(h.text, h.source_ids) for h in b.search("other", "billing", 5)] == [("Billing runs on Postgres 16", ("o1",))]
    assert len(endpoint.bodies) == calls
    b.add("ns", [turn("t4", "The queue runs on Kafka now.")])  # a third fact: past max_facts, condensed
    assert [(h.text, h.source_ids) for h in b.search("ns", "queue", 5)] == [
        ("The cache lives in Redis 7", ("t1",)), ("Billing and the queue moved", ())]
    assert {body["model"] for body in endpoint.bodies} == {"stub-model"}
    endpoint.script = [{"content": "Sure! The user likes Redis."}]
    with pytest.raises(RuntimeError, match="has no <facts> element"):
        b.add("ns", [turn("t5", "The cache lives in Redis 7 still.")])
    b.reset("ns")
    assert b.search("ns", "cache", 5) == []


def test_cognee_stores_a_session_as_one_document_and_each_turn_as_a_chunk_naming_it(tmp_path):
    """cognee ingests a session as one document, chunked at the turns' boundaries: every hit is
    one turn, named with its time through the chunk's metadata, two turns of one text are two
    chunks, and a turn longer than max_chunk_tokens words comes back in pieces naming it."""
    pytest.importorskip("wordllama")
    b = load_backend("cognee", backend_config(tmp_path, {"cognee": {"model": "wordllama", "max_chunk_tokens": 16}}))
    long_turn = "The deploy runbook: " + " ".join(f"step{i} checks the canary" for i in range(8))
    b.reset("ns")
    b.add("ns", [turn("t1", "ok, thanks"), turn("t2", "The cache lives in Redis 7.\nIt moved in May."),
                 turn("t3", long_turn)])
    b.add("ns", [turn("t4", "ok, thanks", "2026-03-03T10:00:00Z")])
    hits = b.search("ns", "Where does the cache live?", 20)
    assert hits[0].source_ids == ("t2",) and hits[0].text == "user: The cache lives in Redis 7.\nIt moved in May."
    assert all(len(h.source_ids) == 1 for h in hits)
    by_turn: dict[str, list[Hit]] = {}
    for h in hits:
        by_turn.setdefault(h.source_ids[0], []).append(h)
    assert sorted(by_turn) == ["t1", "t2", "t3", "t4"]
    assert [h.text for h in by_turn["t1"] + by_turn["t4"]] == ["user: ok, thanks"] * 2
    assert {h.timestamp for h in by_turn["t4"]} == {"2026-03-03T10:00:00Z"}
    pieces = by_turn["t3"]
    assert len(pieces) == 3 and all(len(p.text.split()) <= 16 for p in pieces)
    assert sorted(w for p in pieces for w in p.text.split()) == sorted(f"user: {long_turn}".split())
    assert "cognee" in b.version and "no LLM" in b.version and "wordllama" in b.version
    assert not hasattr(b, "internal_model")


def test_a_hit_without_provenance_makes_the_questions_retrieval_null_not_zero():
    """A system that cannot name a hit's turns (a merged or rewritten memory) leaves the
    question's retrieved ids null, so recall is not measured there (score.py then says why,
    tests/test_score.py), rather than counting the hit as a miss."""
    import run
    named, merged = Hit("user: billing is on Postgres 16", 0.9, ("t4",)), Hit("a summary", 0.5, ())
    assert run.provenance([named]) == ["t4"]
    assert run.provenance([named, merged]) is None
    assert run.provenance([]) == []


def test_hindsight_server_keeps_namespaces_apart_and_names_each_hits_turn(tmp_path):
    """Hindsight's real server (no LLM) on its embedded PostgreSQL, started by the adapter: each
    hit names its turn through the metadata retain stored; banks are isolated, reset empties one,
    concurrent searches agree; closing stops the server."""
    pytest.importorskip("hindsight_api")
    pytest.importorskip("pg0")
    pytest.importorskip("llama_index.core")
    pytest.importorskip("wordllama")
    import requests
    b = load_backend("hindsight", backend_config(tmp_path, {"hindsight": {"model": "wordllama"}}))
    try:
        assert "hindsight-api-slim" in b.version and "LLM none" in b.version and "wordllama" in b.version
        assert not hasattr(b, "internal_model")
        for ns in ("ns", "other"):
            b.reset(ns)
        b.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                     turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z")])
        b.add("ns", [turn("t3", "My sister adopted a grey cat named Pixel.", "2026-03-04T10:00:00Z")])
        b.add("other", [turn("o1", "The cache lives in Memcached on the old cluster.")])
        b.flush("ns", 10)
        hits = b.search("ns", "Where does the cache live?", 2)
        assert 1 <= len(hits) <= 2 and hits[0].source_ids == ("t2",)
        assert hits[0].text == "user: The cache lives in Redis 7." and hits[0].timestamp == "2026-03-03T10:00:00Z"
        every = b.search("ns", "cache billing cat Postgres Redis Pixel", 10)
        assert {h.source_ids for h in every} <= {("t1",), ("t2",), ("t3",)} and len(every) >= 2
        assert [h.source_ids for h in b.search("other", "Where does the cache live?", 5)] == [("o1",)]
        assert b.search("ns", "cache", 0) == [] and b.search("never-written", "cache", 5) == []
        assert_concurrent_searches_agree(b, "ns", "Where does the cache live?")
        b.reset("ns")
        assert b.search("ns", "Where does the cache live?", 5) == []
        assert [h.source_ids for h in b.search("other", "cache", 5)] == [("o1",)]
        url = b._url
    finally:
        b.close()
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/health", timeout=2)


def hindsight_reply(body: dict) -> str | None:
    """Canned fact extraction for Hindsight's retain calls: a fact per turn that states one (its
    text after "Text:"), none for small talk; any other call gets the test endpoint's default."""
    prompt = "\n".join(m["content"] for m in body["messages"] if isinstance(m.get("content"), str))
    if "Extract facts" not in prompt:
        return None
    text = prompt.rsplit("Text:", 1)[-1]
    facts = [{"what": what, "when": "N/A", "where": "N/A", "who": "N/A", "why": "N/A", "fact_type": "world",
              "entities": entities}
             for cue, what, entities in (("Redis 7", "The cache lives in Redis 7", ["cache", "Redis"]),
                                         ("Postgres 16", "Billing runs on Postgres 16", ["billing", "Postgres"]))
             if cue in text]
    return json.dumps({"facts": facts})


def test_hindsight_extract_mode_recalls_facts_naming_the_turns_they_came_from(tmp_path, endpoint):
    """Hindsight's LLM mode on its real server, its extraction calls answered by the test endpoint
    with canned output through the adapter's relay: a hit is an extracted fact naming its turn; a
    turn with no fact is in no hit; every call went to the pinned model through the project's
    client, and the server never saw the endpoint or its key. A call the client raises on (a
    refused key) fails the retain with the client's error, not the server's 500."""
    for module in ("hindsight_api", "pg0", "llama_index.core", "wordllama"):
        pytest.importorskip(module)
    fake = endpoint
    fake.responder = hindsight_reply
    b = load_backend("hindsight", backend_config(tmp_path, {"hindsight": {"model": "wordllama", "extract": True}}))
    try:
        assert b.name == "hindsight (internal extractor: stub-model)" and b.internal_model == "stub-model"
        assert "facts extracted" in b.version and b.llm_client is not None
        b.reset("ns")
        b.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                     turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z"),
                     turn("t3", "ok, thanks", "2026-03-03T10:01:00Z")])
        b.flush("ns", 10)
        hits = b.search("ns", "Where does the cache live?", 5)
        assert hits and hits[0].source_ids == ("t2",) and "Redis 7" in hits[0].text
        assert hits[0].timestamp == "2026-03-03T10:00:00Z"
        every = b.search("ns", "billing Postgres cache Redis thanks", 10)
        assert {h.source_ids for h in every} == {("t1",), ("t2",)}
        assert all(h.text != "user: ok, thanks" for h in every)
        fake.api_key = "sk-rotated"  # the key is refused from now on: the retain fails with the client's reason
        with pytest.raises(AuthenticationError, match="authentication failed"):
            b.add("ns", [turn("t4", "The queue runs on Kafka 3.")])
        with open(b._log_path, encoding="utf-8", errors="replace") as fh:
            log = fh.read()
        with open(f"/proc/{b._proc.pid}/environ", "rb") as fh:
            environment = fh.read().decode("utf-8", "replace")
        assert "relay_error" in log or "AuthenticationError" in log  # the log read is the server's
        for seen in (log, environment):
            assert "sk-test-not-a-secret" not in seen and fake.url not in seen
    finally:
        b.close()
    extraction = [body for body in fake.bodies if "Extract facts" in json.dumps(body)]
    assert len(extraction) >= 3 and {body["model"] for body in fake.bodies} == {"stub-model"}
    assert set(fake.auth_headers) == {"Bearer sk-test-not-a-secret"}


# cognee's cognify, canned: the graph and summary a model that reads each turn would return.
COGNEE_GRAPHS = {
    "Redis 7": ([("cache", "Component", "the service cache"), ("redis 7", "Software", "a key-value store")],
                ("cache", "lives_in", "redis 7", "The cache lives in Redis 7.")),
    "Postgres 16": ([("billing", "Component", "the billing service"), ("postgres 16", "Software", "a database")],
                    ("billing", "runs_on", "postgres 16", "Billing runs on Postgres 16.")),
    "warms": ([("cache", "Component", "the service cache"), ("noon", "Time", "midday")],
              ("cache", "warms_at", "noon", "The cache warms at noon.")),
}


def cognee_reply(body: dict) -> str | None:
    """The canned reply to one of cognify's calls, chosen by the schema it asks for: the chunk's
    entities and relation (none for small talk), or a summary of it."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    text = body["messages"][-1]["content"]
    if schema == "SummarizedContent":
        return json.dumps({"summary": f"A turn: {text}", "description": "one turn of a chat"})
    if schema != "KnowledgeGraph":
        return None
    nodes, edges = [], []
    for cue, (entities, (source, relation, target, fact)) in COGNEE_GRAPHS.items():
        if cue in text:
            nodes += [{"id": n, "name": n, "type": t, "description": d} for n, t, d in entities]
            edges.append({"source_node_id": source, "target_node_id": target, "relationship_name": relation,
                          "description": fact})
    return json.dumps({"nodes": nodes, "edges": edges})


def test_cognee_graph_mode_returns_triplets_naming_the_turns_they_were_extracted_from(tmp_path, endpoint):
    """cognee's cognify on its real stores, its extraction and summary calls answered by the test
    endpoint with canned output through llm.LLMClient: a hit is a triplet of its knowledge graph
    as GRAPH_COMPLETION retrieves it (no completion), naming the turn it came from, a relation
    between two entities through cognee's own edge evidence; search calls no model; namespaces
    stay apart; every call went to the pinned model with the configured key."""
    pytest.importorskip("cognee")
    pytest.importorskip("wordllama")
    fake = endpoint
    fake.responder = cognee_reply
    b = load_backend("cognee", backend_config(tmp_path, {"cognee": {"model": "wordllama", "graph": True}}))
    assert b.name == "cognee (internal extractor: stub-model)" and b.internal_model == "stub-model"
    assert "GRAPH_COMPLETION" in b.version and b.llm_client is not None
    b.reset("ns")
    b.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                 turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z"), turn("t3", "ok, thanks"),
                 turn("t4", "The cache warms at noon.")])
    b.reset("other")
    b.add("other", [turn("o1", "The cache lives in Redis 7.", "2026-03-04T10:00:00Z")])
    calls = len(fake.bodies)
    # a graph and a summary per chunk; o1 repeats t2's text, so its two come from the response cache
    assert calls == 8
    hits = b.search("ns", "Where does the cache live?", 6)
    assert len(hits) == 6 and all(h.source_ids for h in hits)
    relation = [h for h in hits if "cache --[lives_in]--> redis 7" in h.text]
    # the cache was extracted from t2 and t4; the relation was stated in t2 alone
    assert relation and relation[0].source_ids == ("t2",) and relation[0].timestamp == "2026-03-03T10:00:00Z"
    assert "a key-value store" in relation[0].text  # the nodes' contents, as cognee renders its context
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    billing = b.search("ns", "What does billing run on?", 6)
    assert [h.source_ids for h in billing if "billing --[runs_on]--> postgres 16" in h.text] == [("t1",)]
    assert {t for h in b.search("other", "Where does the cache live?", 6) for t in h.source_ids} == {"o1"}
    assert len(fake.bodies) == calls  # retrieval only: no completion, no model call
    b.reset("ns")
    assert b.search("ns", "Where does the cache live?", 5) == []
    asked = fake.bodies[:calls]
    assert {body["model"] for body in asked} == {"stub-model"}
    assert sorted(body["response_format"]["json_schema"]["name"] for body in asked) == \
        ["KnowledgeGraph"] * 4 + ["SummarizedContent"] * 4
    assert set(fake.auth_headers) == {"Bearer sk-test-not-a-secret"}


def test_cognee_triplet_provenance_chunk_end_then_edge_evidence_then_entities_else_none():
    """A triplet names the turn of a chunk at one of its ends; else the chunks cognee's edge
    evidence records as stating it; else the turns its entities were extracted from; else no
    turn, so the question's recall is null, never 0."""
    from types import SimpleNamespace
    from backends.cognee import edge_turns

    def edge(a, b, edge_id="e"):
        return SimpleNamespace(node1=SimpleNamespace(id=a), node2=SimpleNamespace(id=b),
                               attributes={"edge_object_id": edge_id})
    chunks = {"c1": ("t1", "s1"), "c2": ("t2", "s2")}
    entities = {"cache": {"t2": None, "t1": None}}
    assert edge_turns(edge("c1", "cache"), {"e": ["c2"]}, chunks, entities) == ("t1",)
    assert edge_turns(edge("cache", "redis"), {"e": ["c2", "c2"]}, chunks, entities) == ("t2",)
    assert edge_turns(edge("cache", "component"), {}, chunks, entities) == ("t2", "t1")
    assert edge_turns(edge("redis", "software"), {"e": ["c9"]}, chunks, entities) == ()


def test_hindsight_settings_refuse_an_unknown_budget_naming_the_key_before_anything_starts():
    from backends import hindsight
    from cli import InputError
    assert hindsight.settings({})["budget"] == "mid" and hindsight.settings({})["user"] == "nobody"
    with pytest.raises(InputError, match=r"backends\.hindsight\.budget must be one of low, mid, high"):
        hindsight.settings({"budget": "huge"})
    with pytest.raises(InputError, match=r"backends\.hindsight\.startup_timeout_s must be positive"):
        hindsight.settings({"startup_timeout_s": 0})


def test_hindsight_names_a_graph_result_without_metadata_by_its_document_and_no_turn_when_neither():
    """Hindsight returns results reached through its graph retrieval without their metadata;
    their document id is the turn's item id (one document per turn). A result naming no turn
    that was added has no provenance, which leaves the question's recall null."""
    from backends.hindsight import hit_of
    stamps = {"t1": "2026-03-02T10:00:00Z", "t2": "2026-03-03T10:00:00Z"}
    scores = {"final": 0.5, "semantic": 0.8}
    by_meta = hit_of({"text": "user: a", "document_id": "t1", "metadata": {"item_id": "t1"}, "scores": scores}, stamps)
    by_document = hit_of({"text": "user: b", "document_id": "t2", "scores": scores}, stamps)
    unknown = hit_of({"text": "an observation", "document_id": None, "scores": scores}, stamps)
    assert (by_meta.source_ids, by_meta.timestamp) == (("t1",), "2026-03-02T10:00:00Z")
    assert (by_document.source_ids, by_document.timestamp, by_document.score) == (("t2",), "2026-03-03T10:00:00Z", 0.5)
    assert unknown.source_ids == () and unknown.timestamp == ""


# Graphiti's extraction, canned: what its prompts would get from a model that reads each turn.
# Keyed by a word of the turn: (entities, (source, relation, target, fact)).
GRAPHITI_FACTS = {
    "Postgres": (["billing", "Postgres 16"], ("billing", "RUNS_ON", "Postgres 16", "billing runs on Postgres 16")),
    "Redis": (["cache", "Redis 7"], ("cache", "LIVES_IN", "Redis 7", "the cache lives in Redis 7")),
    "Memcached": (["cache", "Memcached"], ("cache", "LIVES_IN", "Memcached", "the cache lives in Memcached")),
}


def graphiti_reply(body: dict) -> str:
    """The canned reply to one of Graphiti's extraction calls, chosen by the JSON schema the
    adapter sends as response_format and the turn inside the prompt's CURRENT MESSAGE."""
    import re
    name = body["response_format"]["json_schema"]["name"]
    current = re.search(r"<CURRENT[ _]MESSAGE>(.*?)</CURRENT[ _]MESSAGE>", body["messages"][-1]["content"], re.S)
    found = [v for k, v in GRAPHITI_FACTS.items() if current and k in current.group(1)]
    if name == "ExtractedEntities":
        return json.dumps({"extracted_entities": [{"name": e, "entity_type_id": 0} for f in found for e in f[0]]})
    if name == "ExtractedEdges":
        return json.dumps({"edges": [{"source_entity_name": s, "relation_type": r, "target_entity_name": t, "fact": fact}
                                     for _, (s, r, t, fact) in found]})
    canned = {"EdgeTimestamps": {"valid_at": None, "invalid_at": None}, "NodeResolutions": {"entity_resolutions": []},
              "EdgeDuplicate": {"duplicate_facts": [], "contradicted_facts": []}, "SummarizedEntities": {"summaries": []}}
    return json.dumps(canned[name])


def test_graphiti_facts_name_the_turns_they_were_extracted_from_and_namespaces_stay_apart(tmp_path, endpoint):
    """Graphiti's real engine on embedded Kuzu, its extraction calls answered by the test endpoint
    with canned output: a fact names the turn it came from, a fact found again in a later turn
    names both, a turn with no fact is in no hit; group ids keep namespaces apart and reset
    empties one. Every write went to the pinned answer model, with the schema of its reply."""
    pytest.importorskip("graphiti_core")
    pytest.importorskip("kuzu")
    pytest.importorskip("wordllama")
    fake = endpoint
    fake.responder = graphiti_reply
    b = load_backend("graphiti", backend_config(tmp_path, {"graphiti": {"model": "wordllama"}}))
    try:
        assert b.name == "graphiti (internal extractor: stub-model)" and b.internal_model == "stub-model"
        assert "graphiti-core 0.31.2" in b.version and "kuzu" in b.version and "wordllama" in b.version
        for ns in ("ns", "other"):
            b.reset(ns)
        b.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                     turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z"),
                     turn("t3", "ok, thanks", "2026-03-03T10:01:00Z")])
        b.add("ns", [turn("t4", "Billing is still on Postgres 16.", "2026-03-05T10:00:00Z")])
        b.add("other", [turn("o1", "The cache lives in Memcached on the old cluster.")])
        hits = b.search("ns", "Where does the cache live?", 1)
        assert [(h.text, h.source_ids, h.timestamp) for h in hits] == [
            ("the cache lives in Redis 7", ("t2",), "2026-03-03T10:00:00Z")]
        every = {h.text: h for h in b.search("ns", "billing Postgres cache Redis", 10)}
        assert set(every) == {"the cache lives in Redis 7", "billing runs on Postgres 16"}
        # Found by its words: Kuzu's full-text half, which a question's "?" would otherwise empty.
        billing = b.search("ns", "Which database does billing run on?", 1)[0]
        assert billing.text == "billing runs on Postgres 16"
        assert billing.source_ids == ("t1", "t4") and billing.timestamp == "2026-03-05T10:00:00Z"
        assert [(h.text, h.source_ids) for h in b.search("other", "Where does the cache live?", 5)] == [
            ("the cache lives in Memcached", ("o1",))]
        assert b.search("ns", "cache", 0) == [] and b.search("never-written", "cache", 5) == []
        assert_concurrent_searches_agree(b, "ns", "Where does the cache live?")
        # A reply that is not JSON fails the add (run.py records a backend error), not an empty memory.
        fake.script = [{"content": "Sure! The entities are: queue, Kafka."}]
        with pytest.raises(RuntimeError, match="extract_nodes.extract_message is not a JSON object"):
            b.add("ns", [turn("t5", "The queue runs on Kafka.", "2026-03-06T10:00:00Z")])
        b.reset("ns")
        assert b.search("ns", "billing Postgres cache Redis", 10) == []
        assert [h.source_ids for h in b.search("other", "cache Memcached", 5)] == [("o1",)]
    finally:
        b.close()
    asked = [body for body in fake.bodies if body["response_format"]["type"] == "json_schema"]
    assert asked and len(asked) == len(fake.bodies) and {body["model"] for body in asked} == {"stub-model"}
    assert {body["response_format"]["json_schema"]["name"] for body in asked} >= {"ExtractedEntities", "ExtractedEdges"}


@pytest.mark.parametrize("name, package, says", [
    ("graphiti", "graphiti_core", "backend 'graphiti' calls the answer model on every write"),
    ("hindsight_extract", "hindsight_api", "backend 'hindsight' with extract: true calls the answer model on every write"),
    ("cognee_graph", "cognee", "backend 'cognee' with graph: true calls the answer model on every write"),
    ("llamaindex_facts", "llama_index.core", "backend 'llamaindex' with facts: true calls the answer model on every write"),
    ("letta_agent", "wordllama", "backend 'letta' with agent: true calls the answer model on every write"),
])
def test_an_llm_mode_refuses_to_start_without_an_endpoint_naming_llm_base_url(tmp_path, monkeypatch, name, package, says):
    """A mode whose every write calls an LLM (Graphiti, Hindsight's extraction, cognee's graph,
    LlamaIndex's facts, Letta's agent): without an
    endpoint run.py exits 2 naming LLM_BASE_URL, before any store starts or any turn is added."""
    pytest.importorskip(package)
    from conftest import script, write_config
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    out = tmp_path / f"{name}.jsonl"
    r = script("run.py", "--config", write_config(tmp_path), "--backend", name, "--retrieval-only", "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert says in r.stderr and "LLM_BASE_URL" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


def test_graphiti_fact_naming_an_episode_it_did_not_add_has_no_provenance():
    """A fact lists its episodes; each maps to the turn added as it. If one is unknown the hit
    names no turn (recall null for the question) rather than a partial guess."""
    from backends.graphiti import fulltext_text, hit_of, parse_reply
    turns = {"e1": "t1", "e4": "t4"}
    stamps = {"t1": "2026-03-02T10:00:00Z", "t4": "2026-03-05T10:00:00Z"}
    merged = hit_of("billing runs on Postgres 16", 0.5, ["e1", "e4", "e1"], turns, stamps)
    assert (merged.source_ids, merged.timestamp, merged.score) == (("t1", "t4"), "2026-03-05T10:00:00Z", 0.5)
    assert hit_of("a fact", 0.4, ["e1", "e9"], turns, stamps).source_ids == ()
    assert hit_of("a fact", 0.4, [], turns, stamps).source_ids == ()
    assert fulltext_text("Where does the cache live?") == "Where does the cache live"
    assert fulltext_text("what*is it? really") == "what is it  really"
    assert parse_reply('```json\n{"edges": []}\n```', "extract_edges.edge") == {"edges": []}
    with pytest.raises(RuntimeError, match="extract_edges.edge is not a JSON object"):
        parse_reply("Sure! Here are the edges.", "extract_edges.edge")


def test_graphiti_refuses_a_kuzu_module_that_is_another_packages_shim(tmp_path, monkeypatch):
    """cognee's wheel can leave `kuzu` a shim over its fork Ladybug, which has no full-text search
    without a download: the backend says so and how to put Kuzu back, before anything starts."""
    pytest.importorskip("graphiti_core")
    import sys
    import types
    from cli import InputError
    shim = types.ModuleType("kuzu")
    shim.__version__ = "0.19.0"
    monkeypatch.setitem(sys.modules, "kuzu", shim)
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(InputError, match=r"needs Kuzu 0\.11\.3, but the module kuzu is version 0\.19\.0.*"
                                         r"pip install --force-reinstall --no-deps kuzu==0\.11\.3"):
        load_backend("graphiti", backend_config(tmp_path, {"graphiti": {"model": "wordllama"}}))
    assert not (tmp_path / "graphiti").exists()


def test_the_model_free_report_compares_every_system_without_an_llm_with_keyword_bm25_and_dense(tmp_path):
    """The stages a researcher types for the systems that need no LLM on write, on a small
    fixture: run.py --retrieval-only per system, then score.py and report.py beside keyword, bm25
    and dense. Every system gets a measured recall (each hit names its turns), the manifest records
    the version of the package each ran, and the report has a row for each."""
    for module in ("llama_index.vector_stores.qdrant", "cognee", "hindsight_api", "pg0", "wordllama"):
        pytest.importorskip(module)
    from report_pipeline import pipeline
    real = ("llamaindex_wordllama", "cognee_wordllama", "hindsight_wordllama")
    systems = ("none", "oracle", "keyword", "bm25", "dense_wordllama", *real)
    paths = pipeline(tmp_path, systems=systems, run_args=("--retrieval-only",))
    with open(paths["scores"], encoding="utf-8") as fh:
        rows = {s["label"]: s for s in json.load(fh)["systems"]}
    # A row is labelled by its backend's name: the preset's module.
    assert set(rows) == {"none", "oracle", "keyword", "bm25", "dense", "llamaindex", "cognee", "hindsight"}
    for name in ("bm25", "dense", "llamaindex", "cognee", "hindsight"):
        assert 0.0 <= rows[name]["recall_any_at_k"] <= 1.0, name
    assert rows["oracle"]["recall_any_at_k"] == 1.0
    with open(paths["manifest"], encoding="utf-8") as fh:
        versions = {b["id"]: b["version"] for b in json.load(fh)["backends"]}
    for name, package in zip(real, ("llama-index-core 0.", "cognee 1.", "hindsight-api-slim 0.")):
        assert package in versions[name] and "wordllama" in versions[name], versions[name]
    with open(paths["md"], encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    for name in ("bm25", "dense", "llamaindex", "cognee", "hindsight"):  # each a row against the baseline
        assert any(line.startswith(f"| {name} | ") and f"a={name}&b=keyword" in line for line in lines), name
