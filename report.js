"use strict";
(function () {
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const PAGE = 25;
  const FIELDS = ["a", "b", "v", "type", "cause", "by", "q", "sort", "page", "open"];
  const BLANK = { a: "", b: "", v: "", type: "", cause: "", by: "", q: "", sort: "order", page: 0 };
  const S = Object.assign({}, BLANK);
  const open = new Set();
  const byQid = new Map(D.questions.map((q, i) => [q.qid, i]));
  const byLabel = new Map(D.systems.map((s, i) => [s.label, i]));
  const $ = (id) => document.getElementById(id);
  // Each answer carries what it counts as in the tables, decided by metrics.py: v, the word for
  // its verdict, and ok, right (true), wrong (false) or neither (null); with no answers (the
  // model-free report), ok is whether every evidence turn reached the context.
  const GOOD = D.model_free ? "has all evidence in context" : "right";
  const BAD = D.model_free ? "misses evidence in context" : "wrong";
  const RELATIONS = [["", "any"], ["a_right", "A " + GOOD], ["a_wrong", "A " + BAD],
    ["a_only", "A " + GOOD + ", B " + BAD], ["b_only", "A " + BAD + ", B " + GOOD],
    ["differ", "A and B differ"], ["both_wrong", "both " + BAD], ["both_right", "both " + GOOD]];
  const SORTS = [["order", "dataset order"], ["qid", "question id"], ["type", "type"], ["a", "A: wrong first, by cause"]];

  // Every text goes in as a text node (append of a string), never as markup; a long one is cut
  // (shown).
  function el(tag, cls, ...kids) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    for (const k of kids) {
      if (k !== null && k !== undefined && k !== false) e.append(typeof k === "string" ? shown(k) : k);
    }
    return e;
  }
  // A text longer than CUT characters shows its first CUT and a button for the rest. A browser
  // lays a text out in time that grows with its length and with the writing systems it mixes:
  // in Chromium, a question whose evidence turn is one line of 200,000 characters of Latin,
  // Hebrew, Arabic, CJK and emoji (the turn shows six times in it) took 6 to 20 s to open, the
  // page not responding meanwhile; cut, a few tenths. The button shows the whole text in its
  // place, as opening the prompt shows the prompt whole: the reader asked for it. The search
  // reads every text whole.
  const CUT = 2000;
  function shown(text) {
    if (text.length <= CUT) return text;
    const high = text.charCodeAt(CUT - 1);
    const end = high >= 0xd800 && high <= 0xdbff ? CUT - 1 : CUT;  // not inside a surrogate pair
    let more = 0;
    for (const _ of text.slice(end)) more += 1;  // characters (code points), as Python's len counts them
    const button = el("button", "more", "… (" + more.toLocaleString("en-US") + " more characters)");
    button.type = "button";
    const span = el("span", "long", text.slice(0, end), button);
    button.addEventListener("click", (e) => { e.preventDefault(); e.stopPropagation(); span.replaceChildren(text); });
    return span;
  }
  function first(q, si) { const a = q.r[si]; return a ? a[0] : null; }
  function sysIndex(label) { return label === "" || !byLabel.has(label) ? null : byLabel.get(label); }
  function right(a) { return a !== null && a.ok === true; }
  function wrong(a) { return a !== null && a.ok === false; }
  function relation(q, ai, bi) {
    if (!S.v || ai === null) return true;
    const A = first(q, ai), B = bi === null ? null : first(q, bi);
    switch (S.v) {
      case "a_right": return right(A);
      case "a_wrong": return wrong(A);
      case "a_only": return right(A) && wrong(B);
      case "b_only": return wrong(A) && right(B);
      case "differ": return (right(A) && wrong(B)) || (wrong(A) && right(B));
      case "both_wrong": return wrong(A) && wrong(B);
      case "both_right": return right(A) && right(B);
    }
    return true;
  }
  function answerText(q, si) { const a = first(q, si); return a && a.a ? a.a.toLowerCase() : ""; }
  function matches(q) {
    const ai = sysIndex(S.a), bi = sysIndex(S.b);
    if (S.type && q.type !== S.type) return false;
    if (!relation(q, ai, bi)) return false;
    if (S.cause || S.by) {
      const who = ai === null ? D.systems.map((_, i) => i) : [ai];
      const hit = who.some((si) => {
        const a = first(q, si);
        return a && (!S.cause || a.c === S.cause) && (!S.by || a.by === S.by);
      });
      if (!hit) return false;
    }
    if (S.q) {
      const needle = S.q.toLowerCase();
      if (q._h === undefined) q._h = (q.qid + "\n" + q.q + "\n" + q.gold).toLowerCase();
      if (!q._h.includes(needle) && !D.systems.some((_, si) => answerText(q, si).includes(needle))) return false;
    }
    return true;
  }
  const RANK_OF = { error: 0, unparseable: 1, incorrect: 2, correct: 3, "not graded": 4 };
  function sortKey(q, i) {
    const ai = sysIndex(S.a);
    if (S.sort === "qid") return [q.qid, i];
    if (S.sort === "type") return [q.type, i];
    if (S.sort === "a" && ai !== null) {
      const a = first(q, ai);
      if (!a) return [9, "", i];
      if (D.model_free) return [a.ok === true ? 2 : a.ok === false ? 0 : 1, "", i];
      return [RANK_OF[a.v], a.c || "", i];
    }
    return [i];
  }
  function compare(x, y) {
    for (let k = 0; k < x.length; k++) { if (x[k] < y[k]) return -1; if (x[k] > y[k]) return 1; }
    return 0;
  }
  function filtered() {
    const out = [];
    D.questions.forEach((q, i) => { if (matches(q)) out.push(i); });
    if (S.sort !== "order") {
      const keys = new Map(out.map((i) => [i, sortKey(D.questions[i], i)]));
      out.sort((x, y) => compare(keys.get(x), keys.get(y)));
    }
    return out;
  }

  // The view in the URL: #questions?a=..&b=..&v=..&type=..&cause=..&by=..&q=..&sort=..&page=..&open=QID
  function viewHash() {
    const p = new URLSearchParams();
    for (const k of FIELDS) {
      if (k === "open") continue;
      if (S[k] !== BLANK[k] && !(k === "page" && S.page === 0)) p.set(k, String(S[k]));
    }
    for (const qi of open) p.append("open", D.questions[qi].qid);
    const text = p.toString();
    return "#questions" + (text ? "?" + text : "");
  }
  function writeUrl() {
    const h = viewHash();
    if (location.hash !== h) history.replaceState(null, "", h);
    $("f-link").href = h;
  }
  function readView(text) {
    const p = new URLSearchParams(text);
    Object.assign(S, BLANK);
    for (const k of FIELDS) {
      if (k === "open" || !p.has(k)) continue;
      S[k] = k === "page" ? Math.max(0, parseInt(p.get(k), 10) || 0) : p.get(k);
    }
    open.clear();
    for (const qid of p.getAll("open")) if (byQid.has(qid)) open.add(byQid.get(qid));
    syncControls();
  }
  function syncControls() {
    for (const [id, key] of CONTROLS) $(id).value = S[key];
    $("f-search").value = S.q;
  }

  function options(select, pairs) {
    for (const [value, text] of pairs) { const o = el("option", null, text); o.value = value; select.append(o); }
  }
  const CONTROLS = [["f-a", "a"], ["f-b", "b"], ["f-v", "v"], ["f-type", "type"], ["f-cause", "cause"], ["f-by", "by"],
                    ["f-sort", "sort"]];
  function setup() {
    const sys = D.systems.map((s) => [s.label, s.label + (s.role !== "system" ? " (" + s.role + ")" : "")]);
    options($("f-a"), [["", "any system"]].concat(sys));
    options($("f-b"), [["", "no system"]].concat(sys));
    options($("f-v"), RELATIONS);
    const types = [...new Set(D.questions.map((q) => q.type))];
    options($("f-type"), [["", "all types"]].concat(types.map((t) => [t, t])));
    options($("f-cause"), [["", "any cause"]].concat(D.causes.map((c) => [c, c])));
    options($("f-by"), [["", "any layer"]].concat(D.layers.map((c) => [c, c])));
    options($("f-sort"), SORTS);
    if (D.model_free) { $("f-cause").parentNode.style.display = "none"; $("f-by").parentNode.style.display = "none"; }
    for (const [id, key] of CONTROLS) {
      $(id).addEventListener("change", (e) => { S[key] = e.target.value; S.page = 0; render(); });
    }
    $("f-swap").addEventListener("click", () => { [S.a, S.b] = [S.b, S.a]; syncControls(); S.page = 0; render(); });
    let timer = null;
    $("f-search").addEventListener("input", (e) => {
      clearTimeout(timer);
      timer = setTimeout(() => { S.q = e.target.value.trim(); S.page = 0; render(); }, 150);
    });
  }

  function evidenceCell(a) {
    const [n, ret, ctx] = a.ev;
    if (a.err) return el("span", "v error", "! error");
    if (n === 0) return el("span", "v none", "no evidence");
    if (ret === null) return el("span", "v none", "no provenance");
    const cls = a.ok === true ? "correct" : ret === 0 ? "incorrect" : "partial";
    return el("span", "v " + cls, ctx + "/" + n + " in ctx" + (ret > ctx ? ", " + ret + "/" + n + " retrieved" : ""));
  }
  function verdictCell(a, withCause) {
    if (!a) return el("span", "v none", "–");
    if (D.model_free) return evidenceCell(a);
    const v = a.v;
    const mark = { correct: "✓ correct", incorrect: "✗ incorrect", unparseable: "? unparseable", error: "! error", "not graded": "· not graded" }[v];
    const span = el("span", "v " + (v === "not graded" ? "none" : v), mark);
    if (a.c && withCause) span.append(el("span", "cause", a.c));
    return span;
  }

  function body(q, tid) { const t = (D.turns[q.case] || {})[tid]; return t === undefined ? null : D.texts[t]; }
  function lineText(line) { return (line[1] !== null ? "[" + line[1] + "] " : "") + D.texts[line[2]]; }
  function turnLine(q, tid, prefix, cls) {
    const isEv = q.ev.includes(tid);
    const t = body(q, tid);
    const li = el("li", (isEv ? "ev " : "") + (cls || ""), prefix, t === null ? el("span", "muted", "(this id is not a turn of the case)") : t);
    li.append(el("span", "tid", tid));
    if (isEv) li.append(el("span", "tag", "evidence"));
    return li;
  }
  function contextBlock(q, a) {
    if (a.lines === null) return el("p", "muted", a.err ? "Nothing retrieved: the question failed." : "No context was built.");
    const box = el("div", "context");
    const ul = el("ul", "ctx");
    for (const line of a.lines) {
      const isEv = line[0] !== null && q.ev.includes(line[0]);
      const li = el("li", isEv ? "ev" : null, lineText(line));
      if (line[0] !== null) li.append(el("span", "tid", line[0]));
      if (isEv) li.append(el("span", "tag", "evidence"));
      ul.append(li);
    }
    if (a.n_ret !== null && a.n_ret > a.n_ctx) {
      ul.append(el("li", "cut", "✂ budget cut: " + a.kept + " hits kept in " + a.tok + " tokens (budget " + a.budget +
        "); below, the turns of the hits retrieved but not given to the model"));
      a.cut.forEach((tid, i) => ul.append(turnLine(q, tid, "[" + (a.n_ctx + i + 1) + "] ", "dropped")));
      const rest = a.n_ret - a.n_ctx - a.cut.length;
      if (rest > 0) ul.append(el("li", "gap", "… " + rest + " more retrieved, not shown"));
    } else if (a.n_ret !== null) {
      ul.append(el("li", "gap", "all " + a.returned + " retrieved hits fit the budget (" + a.tok + " of " + a.budget + " tokens)"));
    }
    box.append(ul);
    if (!a.traced && !a.err) box.append(el("p", "muted", "No provenance: this system's hits carry no source ids, so the " +
      "evidence in its context cannot be marked (" + a.kept + " of " + a.returned + " hits kept in " + a.tok + " tokens)."));
    if (a.multi) box.append(el("p", "muted", "Hits carry several source ids each: a line cannot name its turn, and numbers below the cut are positions in the id list, not ranks."));
    for (const [pos, tid, inCtx] of a.more) {
      box.append(el("p", "muted", "Evidence " + tid + " at position " + pos + (inCtx ? " (in the context)" : " (cut by the budget)")));
    }
    if (a.miss.length) {
      const p = el("div", "miss", el("b", null, "Evidence not retrieved:"));
      const m = el("ul", "ctx");
      a.miss.forEach((tid) => m.append(turnLine(q, tid, "", null)));
      p.append(m);
      box.append(p);
    }
    return box;
  }
  function promptBlock(q, a) {
    if (a.lines === null) return null;
    const context = a.lines.map(lineText).join("\n");
    const what = D.model_free ? "The context it would have been given (no model was asked)" : "The prompt the model read";
    let text = context;
    if (!D.model_free && D.prompt !== null) {
      const fields = { asked_at: q.asked, context: context, question: q.q };
      text = D.prompt.map((p) => (typeof p === "string" ? p : fields[p.field])).join("");
    }
    const d = el("details", "prompt", el("summary", null, what + (!D.model_free && D.prompt === null ? " (its context only: " + D.prompt_note + ")" : "")));
    d.append(el("pre", null, document.createTextNode(text)));  // whole, not cut: laid out only when opened
    return d;
  }
  function answerBlock(q, si, a) {
    const s = D.systems[si];
    const v = D.model_free ? "" : a.v;
    const div = el("div", "answer " + (v === "not graded" ? "" : v));
    const pick = si === sysIndex(S.a) ? " · A" : si === sysIndex(S.b) ? " · B" : "";
    div.append(el("h4", null, s.label + (s.role !== "system" ? " (" + s.role + ")" : "") + (a.rep ? " · repeat " + a.rep : "") + pick));
    if (a.a !== null) div.append(el("p", "ans", el("b", null, "Answer: "), a.a));
    else div.append(el("p", "muted", a.err ? "No answer: " + a.err : "No answer: a retrieval-only run."));
    if (!D.model_free && a.v !== "not graded") {
      const p = el("p", null, verdictCell(a, false));
      if (a.by) p.append(" decided by ", el("code", null, a.by));
      if (a.why) p.append(" — the judge: ", el("span", "reason", a.why));
      if (a.c) p.append(" · cause ", el("code", null, a.c));
      if (a.ro) p.append(" · the rules alone: " + a.ro);
      div.append(p);
    }
    if (D.model_free) div.append(el("p", null, "Evidence: ", evidenceCell(a)));
    if (a.jerr) div.append(el("p", "muted", "Judge error: " + a.jerr));
    div.append(promptBlock(q, a));
    div.append(contextBlock(q, a));
    return div;
  }
  function shownSystems() {
    const ai = sysIndex(S.a), bi = sysIndex(S.b);
    const picked = [ai, bi].filter((x, k, xs) => x !== null && xs.indexOf(x) === k);
    return picked.concat(D.systems.map((_, i) => i).filter((i) => !picked.includes(i)));
  }
  function detail(qi) {
    const q = D.questions[qi];
    const box = el("div", null);
    box.append(el("p", "meta", "case " + q.case + " · asked " + q.asked + " · " + q.type + " · gold: " + q.gold));
    const ev = el("div", "evidence", el("b", null, q.ev.length ? "Evidence:" : "Evidence: none (the asked fact is not in the history)"));
    if (q.ev.length) { const ul = el("ul", "ctx"); q.ev.forEach((tid) => ul.append(turnLine(q, tid, "", null))); ev.append(ul); }
    box.append(ev);
    for (const si of shownSystems()) for (const a of q.r[si] || []) box.append(answerBlock(q, si, a));
    return box;
  }

  function render() {
    const list = filtered();
    const pages = Math.max(1, Math.ceil(list.length / PAGE));
    if (S.page >= pages) S.page = pages - 1;
    $("count").textContent = list.length + " of " + D.questions.length + " questions";
    const sys = shownSystems();
    const ai = sysIndex(S.a), bi = sysIndex(S.b);
    const head = el("tr", null, el("th", null, "question id"), el("th", null, "type"), el("th", null, "question"), el("th", null, "gold"));
    for (const si of sys) {
      const tag = si === ai ? "A: " : si === bi ? "B: " : "";
      head.append(el("th", tag ? "pick" : null, tag + D.systems[si].label));
    }
    $("qtable").tHead.replaceChildren(head);
    const rows = document.createDocumentFragment();
    for (const qi of list.slice(S.page * PAGE, (S.page + 1) * PAGE)) {
      const q = D.questions[qi];
      const link = el("a", null, q.qid);
      link.href = "#" + encodeURIComponent(q.qid);
      link.addEventListener("click", (e) => { e.stopPropagation(); if (location.hash === link.hash) show(q.qid); });
      const tr = el("tr", "q" + (open.has(qi) ? " open" : ""), el("td", null, link), el("td", "qtype", q.type),
        el("td", "qtext", q.q), el("td", "gold", q.gold));
      tr.dataset.qi = String(qi);
      for (const si of sys) tr.append(el("td", null, verdictCell(first(q, si), true)));
      tr.addEventListener("click", () => toggle(qi));
      rows.append(tr);
      if (open.has(qi)) {
        const td = el("td", null, detail(qi));
        td.colSpan = 4 + sys.length;
        rows.append(el("tr", "detail", td));
      }
    }
    $("qtable").tBodies[0].replaceChildren(rows);
    const pager = $("pager");
    const prev = el("button", null, "‹ previous"), next = el("button", null, "next ›");
    prev.disabled = S.page === 0; next.disabled = S.page >= pages - 1;
    prev.addEventListener("click", () => { S.page -= 1; render(); });
    next.addEventListener("click", () => { S.page += 1; render(); });
    pager.replaceChildren(prev, el("span", null, "page " + (S.page + 1) + " of " + pages), next);
    if (started) writeUrl();
  }

  function toggle(qi) {
    if (open.has(qi)) open.delete(qi); else open.add(qi);
    render();
  }

  // A permalink (report.html#QID) opens its question: filters that hide it are cleared.
  function show(qid) {
    const qi = byQid.get(qid);
    if (qi === undefined) return false;
    let list = filtered();
    if (!list.includes(qi)) {
      Object.assign(S, BLANK);
      syncControls();
      list = filtered();
    }
    S.page = Math.floor(list.indexOf(qi) / PAGE);
    open.add(qi);
    render();
    const row = document.querySelector('tr.q[data-qi="' + qi + '"]');
    row.classList.add("target");
    // Below the sticky filter bar, whose height depends on how its controls wrap at this width.
    row.style.scrollMarginTop = (document.querySelector(".filters").offsetHeight + 8) + "px";
    row.scrollIntoView({ block: "start" });
    return true;
  }
  function fromHash() {
    let h;
    try { h = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (h.startsWith("questions?") || h === "questions") {
      readView(location.hash.slice(1 + "questions".length + 1));
      render();
      $("questions").scrollIntoView({ block: "start" });
    } else if (h && byQid.has(h)) {
      show(h);
    }
  }

  let started = false;
  setup();
  fromHash();
  render();
  started = true;
  window.addEventListener("hashchange", fromHash);
})();
