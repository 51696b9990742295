// Mastra Memory's semantic recall behind a line protocol, for backends/mastra.py.
//
// One JSON request per line on stdin, one JSON reply per line on stdout, in order:
//   {"op": "reset", "ns": NS}                              -> {"ok": true}
//   {"op": "add", "ns": NS, "items": [{id, text, role, timestamp}]}  -> {"ok": true}
//   {"op": "search", "ns": NS, "query": Q, "k": K}         -> {"ok": true, "hits": [{id, text}]}
// A failure replies {"ok": false, "error": "..."} and the process goes on.
//
// What stores and ranks is Mastra's: Memory (@mastra/memory) over LibSQLStore and LibSQLVector
// (@mastra/libsql, one SQLite file in MB_FOLDER). Its embedder is an embedding model in the AI
// SDK's interface (doEmbed) over the OpenAI-compatible endpoint at MB_EMBED_URL, which the
// adapter serves on loopback. Mastra embeds each message in its own call; a request per message
// cost ~50 ms on 2 busy cores (the in-process store itself ~3 ms), so an add first embeds all
// its turns in one request and Mastra's calls for them are answered from those vectors (the
// same vectors: the endpoint embeds each text on its own). A namespace is one thread of one
// resource; each turn is one message whose id is the namespace's prefix and the turn's id,
// createdAt the turn's time (plus its position in the add, in ms). Search is Memory.recall with
// semantic recall only (no recent history: lastMessages false; messageRange 0: no neighbouring
// messages; topK K), so the messages returned are the K nearest, in the order recall returns them.
import { Memory } from '@mastra/memory';
import { LibSQLStore, LibSQLVector } from '@mastra/libsql';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const folder = process.env.MB_FOLDER;
const url = `file:${join(folder, 'mastra.db')}`;
const model = process.env.MB_EMBED_MODEL;
const prepared = new Map(); // text -> vector, for the add in progress only

async function embedRemote(values) {
  const r = await fetch(`${process.env.MB_EMBED_URL}/embeddings`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, input: values }),
  });
  if (!r.ok) throw new Error(`embeddings endpoint: HTTP ${r.status}`);
  const data = (await r.json()).data;
  if (!Array.isArray(data) || data.length !== values.length) throw new Error('embeddings endpoint: wrong number of vectors');
  return [...data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
}

const embedder = {
  specificationVersion: 'v2', provider: 'memory-bench', modelId: model, maxEmbeddingsPerCall: 2048,
  supportsParallelCalls: false,
  async doEmbed({ values }) {
    const missing = [...new Set(values.filter((v) => !prepared.has(v)))];
    const fresh = missing.length ? await embedRemote(missing) : [];
    const found = new Map(missing.map((v, i) => [v, fresh[i]]));
    return { embeddings: values.map((v) => prepared.get(v) ?? found.get(v)) };
  },
};
const memory = new Memory({
  storage: new LibSQLStore({ id: 'memory-bench-store', url }),
  vector: new LibSQLVector({ id: 'memory-bench-vector', url }),
  embedder,
  options: { lastMessages: false, semanticRecall: { topK: 10, messageRange: 0, scope: 'thread' } },
});

// A thread id Mastra's stores accept whatever the namespace: a prefix and its sha256.
const threadOf = (ns) => 'mb-' + createHash('sha256').update(ns).digest('hex').slice(0, 32);

async function reset(ns) {
  const threadId = threadOf(ns);
  if (await memory.getThreadById({ threadId })) {
    await memory.deleteThread(threadId);
    await memory.settled(); // deleteThread removes the thread's vectors in the background
  }
  await memory.saveThread({ thread: { id: threadId, resourceId: threadId, title: 'memory-bench',
                                      createdAt: new Date(), updatedAt: new Date(), metadata: {} } });
  return {};
}

async function add(ns, items) {
  const threadId = threadOf(ns);
  // The turns of a session share its timestamp; Mastra keeps one message of those with equal
  // createdAt (measured: five turns of one time came back as the last one), so each turn's time
  // is its timestamp plus its position in the add, in milliseconds: the order is kept.
  const messages = items.map((it, i) => ({
    id: `${threadId}:${it.id}`, threadId, resourceId: threadId, type: 'text',
    role: it.role === 'assistant' ? 'assistant' : 'user',
    createdAt: new Date(new Date(it.timestamp).getTime() + i),
    content: { format: 2, parts: [{ type: 'text', text: it.text }] },
  }));
  const texts = [...new Set(items.map((it) => it.text))];
  const vectors = await embedRemote(texts);
  texts.forEach((t, i) => prepared.set(t, vectors[i]));
  try {
    await memory.saveMessages({ messages });
  } finally {
    prepared.clear();
  }
  return {};
}

async function search(ns, query, k) {
  const threadId = threadOf(ns);
  const { messages } = await memory.recall({
    threadId, resourceId: threadId, vectorSearchString: query,
    threadConfig: { lastMessages: false, semanticRecall: { topK: k, messageRange: 0, scope: 'thread' } },
  });
  const prefix = `${threadId}:`;
  return { hits: messages.map((m) => ({
    id: m.id.startsWith(prefix) ? m.id.slice(prefix.length) : null,
    text: (m.content.parts || []).filter((p) => p.type === 'text').map((p) => p.text).join('\n'),
  })) };
}

const ops = { reset: (r) => reset(r.ns), add: (r) => add(r.ns, r.items), search: (r) => search(r.ns, r.query, r.k) };
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let reply;
  try {
    const request = JSON.parse(line);
    reply = { ok: true, ...(await ops[request.op](request)) };
  } catch (e) {
    reply = { ok: false, error: `${e && e.name}: ${e && e.message}`.slice(0, 500) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
