"""Generate the bundled memory-bench dataset: a synthetic engineering assistant over months.

Each case is one team: invented services, clusters, datastores, people, incidents, freezes,
deadlines and the user's working preferences, told across 3 to 12 timestamped sessions padded
with standups, code review chatter and unrelated incidents. Facts are written with many
phrasings so that no sentence template repeats enough for a keyword backend to exploit, and
every asked fact has same-topic distractors (another service's version, an older value,
another person's preference). Everything here is invented; no real people or private facts.

The output is deterministic for a given --seed. The test set and the dev set draw from
disjoint name pools (services, clusters, people), so they share no story facts.

Usage:
  python data/make_cases.py                       # writes data/cases.jsonl and data/dev.jsonl
  python data/make_cases.py --test-cases 46 --dev-cases 12 --seed 20260302
  python data/make_cases.py --check               # regenerate in memory, diff against the files
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from interface import EXIT_BAD_INPUT, EXIT_OK, check_generated, dumps, write_atomic  # noqa: E402

DEFAULT_SEED = 20260302
TYPES = ("single_hop", "multi_hop", "temporal", "knowledge_update", "abstention", "preference")
IDK = "I don't know"

# ---------------------------------------------------------------------------------------------
# Name pools. The last slice of each pool is reserved for the dev set (disjoint story facts).
# ---------------------------------------------------------------------------------------------

FIRST = ("Mira Tomas Ines Ravi Dara Yusuf Lena Kofi Anouk Bram Chidi Elif Farid Greta Hana Ivo "
         "Jun Kasia Lior Maren Nilo Odile Pavel Quinn Rosa Sanne Teo Ulla Vikram Wren Xiadani "
         "Yara Zeno Amara Birgit Cosmin Dalia Emeka Fenna Goran Halima Idris Joss Kalani Liesel "
         "Marek Nadia Orla Priya Rui Saoirse Tariq Ugne Valter Wiebke Ximena Yoshi Zuzana").split()
LAST = ("Okafor Lindqvist Varga Ferreira Nakamura Brennholt Castellano Dunmore Eskildsen "
        "Fairweather Galloway Haddad Iwu Jansky Kovalenko Larrabee Moreau Nygaard Oyelaran "
        "Petrakis Quarry Rasmussen Szabo Thorne Umarov Vance Wexley Yilmaz Zubiri Achterberg "
        "Bellweather Corcoran Dvorak Ellery Fonseca Holloway Ibarra Juhasz Kettering Lachance "
        "Mbeki Novotny Ostrander Pellegrini Quist Rosenthal Sandoval Tervo").split()
SERVICES = ("ledger-sync heron-gate pumice tallow-api brine-queue okapi-auth saffron-etl gantry-9 "
            "vellum-search cobalt-relay moth-scheduler lantern-cache fathom-index wicker-mail "
            "juniper-rpc osprey-ingest marl-notifier sprocket-12 thistle-cdn umber-ledger "
            "kestrel-feed nimbus-pay obsidian-vault parsnip-router quill-render rook-ratelimit "
            "sable-export tundra-sink velvet-gw wombat-batch yarrow-geo zinc-audit acorn-flags "
            "bramble-id cinder-logs dovetail-api ember-search flint-9 garnet-bus hollow-tiles "
            "ibis-match jetsam-cleanup kelp-stream loam-store mica-3 nettle-proxy oriel-cms "
            "pewter-jobs quokka-sms rivet-sched sorrel-pdf taffy-events ulmus-graph vetch-sync "
            "whelk-media xylo-metrics yew-orders zephyr-push anvil-5 bracken-crm corvid-dns "
            "dunlin-export egret-ocr ferrule-ci").split()
CLUSTERS = ("quartz-7 basalt-2 kiln-3 fjord-east shale-11 tarn-west gneiss-4 marram-1 scree-6 "
            "loess-9 cairn-12 drumlin-5 moraine-8 esker-2b tor-14 karst-3 butte-10 mesa-21 "
            "arete-7 col-13 sill-4 dyke-19 lahar-2 maar-6 nunatak-1 fell-3 ghyll-8 holm-5 ings-2 "
            "kame-11 lode-7 mull-4 ness-9 pike-6 rigg-3 scar-15 wold-2 yardang-1 zawn-4 beck-12 "
            "clough-3 dene-7 gill-5 howe-8 sike-10 combe-2").split()
ARTIFACTS = ("nightly-compact bulk-reindex orphan-sweeper cache-warmer ttl-reaper shard-rebalancer "
             "audit-rollup thumb-regen ledger-backfill quota-sync dedupe-pass snapshot-pruner "
             "geo-refresh vacuum-lite token-janitor feed-replayer sitemap-rebuild stale-lock-buster "
             "invoice-regen webhook-retrier csv-importer blob-gc index-merger price-resync "
             "schema-linter session-purger report-fanout hotkey-splitter").split()
TICKET_PREFIXES = ("INC", "OPS", "PIR", "SEV", "OUT")

# (display kind, version maker). Versions are arbitrary so that no model can guess them.
STORES = (
    ("Postgres", lambda r: f"{r.randint(12, 17)}.{r.randint(1, 12)}"),
    ("MySQL", lambda r: f"8.0.{r.randint(21, 39)}"),
    ("MongoDB", lambda r: f"{r.choice((5, 6, 7))}.0.{r.randint(2, 18)}"),
    ("Cassandra", lambda r: f"4.{r.randint(0, 1)}.{r.randint(2, 9)}"),
    ("ClickHouse", lambda r: f"{r.randint(22, 24)}.{r.randint(1, 12)}"),
    ("CockroachDB", lambda r: f"23.{r.randint(1, 2)}.{r.randint(3, 17)}"),
    ("ScyllaDB", lambda r: f"5.{r.randint(1, 4)}.{r.randint(1, 9)}"),
    ("MariaDB", lambda r: f"10.{r.choice((6, 11))}.{r.randint(4, 19)}"),
)
EVENTS = ("load test", "DR drill", "key rotation", "schema migration", "pentest kickoff",
          "chaos game day", "capacity review", "failover rehearsal", "index rebuild",
          "dependency audit")
DEADLINE_TASKS = ("retire the v1 API of {svc}", "move {svc} off the legacy VPC",
                  "collect the SOC 2 evidence for {svc}", "get {svc} onto Java 21",
                  "switch {svc} to the new secrets manager", "finish the {svc} cost review",
                  "delete the old {svc} S3 buckets", "ship {svc} structured logging")
MONTHS = ("January February March April May June July August September October November "
          "December").split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
                9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}


def pool_split(pool: list[str] | tuple, dev: bool, dev_share: float = 0.25) -> list[str]:
    """The test or dev slice of a name pool (the dev slice is the tail)."""
    cut = int(len(pool) * (1 - dev_share))
    return list(pool[cut:] if dev else pool[:cut])


# ---------------------------------------------------------------------------------------------
# Phrase banks. {svc} service, {p} person, {v} value; every bank has several phrasings.
# ---------------------------------------------------------------------------------------------

OPENERS = ("", "", "", "FYI: ", "Quick note, ", "Heads up: ", "Before I forget, ", "Oh, and ",
           "For the record, ", "Small thing: ", "Context for later: ", "Writing this down: ")

OWNER_SAY = (
    "{p} owns {svc} now, so route anything about it to them.",
    "{svc} is {p}'s service, so reviews go through them.",
    "if {svc} pages at night, the owner is {p}; I'm only the backup.",
    "{svc} ownership sits with {p} since the reorg.",
    "put {p} down as the owning engineer for {svc} in the catalog.",
    "{p} runs {svc} day to day, design calls included.",
    "for anything {svc}, talk to {p}. It's theirs end to end.",
    "the service catalog finally lists {p} as the owner of {svc}, which matches reality.",
)
OWNER_ASK = ("Who owns {svc}?", "Which engineer is responsible for {svc}?",
             "Who should I go to as the owner of {svc}?", "Whose service is {svc}?",
             "Who is the owning engineer for {svc} right now?")
OWNER_HANDOVER = (
    "{old} handed {svc} over to {new} this week; {new} is the owner from now on.",
    "ownership change: {svc} moved from {old} to {new}.",
    "{new} has taken over {svc}. {old} is off to the platform rewrite.",
    "update the catalog please, {svc} belongs to {new} now, not {old}.",
    "{old} rotated off {svc}; {new} owns it going forward.",
)

CLUSTER_SAY = (
    "{svc} is deployed on the {v} cluster, same as last quarter.",
    "all of {svc}'s pods live in {v}.",
    "we host {svc} on the {v} cluster.",
    "{svc} runs out of {v}; don't go looking for it in another cluster.",
    "{svc} sits on {v}, so its dashboards are under that cluster's folder.",
    "the scheduler pins {svc} to {v}, there's a node affinity rule for it.",
    "if you need kubectl access for {svc}, ask for {v}. That's where it runs.",
)
CLUSTER_ASK = ("Which cluster does {svc} run on?", "Where is {svc} deployed?",
               "On which cluster are the pods of {svc} scheduled?", "What cluster hosts {svc}?")
CLUSTER_MOVE = (
    "{svc} has been migrated from {old} to {new}. Traffic looks normal.",
    "we drained {old}; {svc} lives on {new} now.",
    "the {svc} move is done: it runs on {new}, {old} is being decommissioned.",
    "moved {svc} over to {new} last night, nothing is left on {old}.",
)

STORE_SAY = (
    "{svc} keeps its state in {v}.",
    "the backing store for {svc} is {v}, one primary and two replicas.",
    "{svc} talks to {v}; the connection pool is tiny, keep that in mind.",
    "under the hood {svc} is just {v} plus a thin API.",
    "we pinned the {svc} database at {v} until the audit is over.",
    "{svc} persists everything to {v}.",
    "schema changes for {svc} go straight into {v}, there's no ORM in between.",
)
STORE_ASK = ("What database does {svc} use, including the version?",
             "Which database version is behind {svc}?",
             "What datastore and version does {svc} persist to?",
             "Which database engine and version back {svc}?")
STORE_UPGRADE = (
    "upgrade done: {svc} is on {new} now, {old} is gone.",
    "we moved {svc} off {old} and onto {new} over the weekend.",
    "the {svc} database upgrade finished without drama; it's {new} from today.",
    "{svc} finally left {old} behind. {new} in prod, replicas caught up.",
)
STORE_VAGUE = (
    "{svc} sits on top of {kind}; nobody has touched that config in ages.",
    "the {svc} team picked {kind} years ago and never looked back.",
    "{svc} uses {kind} for storage, I think the version is whatever the image ships.",
)

RELEASE_SAY = (
    "we cut {svc} {v} this morning and it's fully rolled out.",
    "production is running {svc} {v} as of today.",
    "tagged {v} for {svc}; the canary looked clean so it went to 100%.",
    "{svc} {v} is what's live, in case anyone asks.",
    "deployed build {v} of {svc} to prod after lunch.",
)
RELEASE_ASK = ("Which version of {svc} is live in production?", "What release of {svc} is deployed?",
               "What build of {svc} is running in prod?")
RELEASE_BUMP = (
    "rolled {svc} forward to {new}; {old} had that memory leak.",
    "{svc} {new} replaced {old} in prod today.",
    "new {svc} release is out: {new}. {old} is no longer running anywhere.",
)

PORT_SAY = (
    "{svc} listens on port {v} internally.",
    "remember {svc} binds port {v}, not the default.",
    "the health check for {svc} hits :{v}/healthz, that's its only port.",
    "the firewall rule for {svc} opens port {v} and nothing else.",
)
PORT_ASK = ("Which port does {svc} listen on?", "What port is {svc} bound to?",
            "On what port does {svc} accept connections?")
PORT_VAGUE = ("we should really document which port {svc} uses, it keeps coming up.",
              "someone asked me about the {svc} port today and I had to dig, it isn't written down.")

ASSISTANT_SAY = {
    "release": ("I checked the deploy log: {svc} {v} is what's running in prod.",
                "According to the deploy history, production has {svc} {v}."),
    "port": ("I looked at the manifest: {svc} listens on port {v}.",
             "From the service spec, the container port for {svc} is {v}."),
    "store": ("I checked the infra repo: {svc} is backed by {v}.",
              "The Terraform for {svc} provisions {v}, so that's its database."),
}

CAUSES = ("a runaway cron job called {a}", "the {a} feature flag getting flipped on for everyone",
          "a bad config push from the {a} pipeline", "the {a} sidecar leaking connections",
          "{a} running twice in parallel", "an unbounded batch from {a}")
INCIDENT_SAY = (
    "filed {t}: {svc} was down for about {m} minutes this morning. Culprit was {c}.",
    "{svc} had an outage earlier today, tracked as {t}. Root cause: {c}.",
    "postmortem draft for {t} is up. Short version: {c} knocked {svc} over this morning.",
    "rough start, {svc} fell over today ({t}). We traced it to {c}.",
)
INCIDENT_VAGUE = (
    "{svc} had a wobble earlier today, retries covered most of it.",
    "{svc} threw errors for a bit this morning; it recovered before anyone paged.",
)
TICKET_ASK = ("What's the ticket number for the {svc} outage?",
              "Which incident ticket tracks the {svc} outage?",
              "Under what ticket id was the {svc} outage filed?")
CAUSE_ASK = ("What caused the {svc} outage?", "What was the root cause when {svc} went down?",
             "Which job or component was behind the {svc} incident?")
FIX_SAY = (
    "the fix for the {svc} outage finally shipped today.",
    "closing the loop on {svc}: the permanent fix went out today.",
    "{svc} remediation merged and deployed today, we can close the postmortem actions.",
)

FREEZE_SAY = (
    "change freeze on {svc} begins {d} and lasts {dur}.",
    "no deploys to {svc} starting {d}; the freeze is {dur} long.",
    "the launch event means {svc} is frozen from {d}, for {dur}.",
    "release management says {svc} goes into a freeze on {d}. It runs {dur}.",
)
FREEZE_SPLIT = (("the {svc} freeze starts {d}.", "and it's {dur} this time, not the usual week."),
                ("{svc} goes into a code freeze from {d}, release management just told me.",
                 "correction on the length: {dur}."))
FREEZE_ASK = ("When does the {svc} change freeze end?",
              "On what date can we deploy {svc} again after the freeze?",
              "When is the {svc} freeze lifted?")
FREEZE_VAGUE = ("legal might want a freeze on {svc} at some point this quarter, no dates yet.",
                "there's talk of freezing {svc} around the audit, nothing decided.")

EVENT_SAY = (
    "we scheduled the {e} for {svc} {rel}.",
    "the {svc} {e} is set for {rel}, calendar invite is out.",
    "{p} booked the {svc} {e} {rel}.",
    "{svc} {e}: {rel}. Don't let anyone move it.",
)
EVENT_ASK = ("What date is the {svc} {e} scheduled for?", "On which date will the {svc} {e} happen?",
             "When is the {e} for {svc} planned?")
DONE_SAY = (
    "finished the {e} for {svc} today, no surprises.",
    "{svc} {e} is done as of today.",
    "we wrapped up the {svc} {e} today. Notes are in the wiki.",
)
DONE_ASK = ("How many days ago was the {svc} {e} done?",
            "How long ago did we finish the {e} for {svc}?")
DEADLINE_SAY = (
    "hard deadline to {task}: {d}.",
    "we have until {d} to {task}.",
    "the date we committed to for the work to {task} is {d}.",
)
DEADLINE_ASK = ("How many days are left until the deadline to {task}?",
                "As of today, how many days remain before we must {task}?")

MH_OWNER_CLUSTER = ("Which cluster runs the service that {p} owns?",
                    "Where is the service owned by {p} deployed?")
MH_OWNER_STORE = ("What database and version does the service owned by {p} use?",
                  "Which database version backs the service {p} is responsible for?")
MH_INCIDENT_OWNER = ("Who owns the service that {t} was filed against?",
                     "Whose service went down in {t}?")
MH_CLUSTER_OWNER = ("Who owns the service running on {v}?",
                    "Which engineer is responsible for the service deployed on {v}?")
MH_ARTIFACT_CLUSTER = ("Which cluster hosts the service whose outage was caused by {a}?",
                       "On which cluster was the service running when {a} caused its outage?")
MH_FREEZE_OWNER = ("Who owns the service whose freeze starts on {d}?",)

ACKS = ("Noted.", "Got it, I'll keep that in mind.", "Thanks, saved.", "Understood.",
        "Okay, I'll remember that.", "Makes sense. Anything else on that front?",
        "Thanks for the context.", "Got it. I'll use that going forward.", "Noted, thanks.",
        "Okay. I'll factor that in next time it comes up.", "Understood, logged it.",
        "Good to know.", "Right, thanks.", "I'll keep it in my notes.")

# Preferences: (key, options as (phrase, gold), user statements, colleague statements,
# question about the user, question about a colleague).
PREFS = (
    ("status", (("bullet points", "bullet points"), ("a small table", "table"),
                ("a numbered list", "numbered list"), ("one short paragraph", "one short paragraph")),
     ("when you send me status updates, use {v} please, I read them on my phone.",
      "for my weekly status, {v}. Nothing fancier."),
     ("{p} wants status updates as {v}.", "{p} keeps asking for {v} in status reports."),
     "How does the user want status updates formatted?",
     "How does {p} like status updates formatted?"),
    ("lang", (("Go", "Go"), ("Rust", "Rust"), ("Kotlin", "Kotlin"), ("Elixir", "Elixir"),
              ("OCaml", "OCaml"), ("Zig", "Zig")),
     ("when you show me code examples, write them in {v}.",
      "I think best in {v}, so sketch snippets for me in that."),
     ("{p} only reads examples written in {v}.", "{p} asked that code snippets for them be in {v}."),
     "Which programming language does the user want code examples in?",
     "In which language does {p} want code snippets?"),
    ("diagram", (("Mermaid", "Mermaid"), ("PlantUML", "PlantUML"), ("Excalidraw", "Excalidraw"),
                 ("Graphviz", "Graphviz"), ("D2", "D2")),
     ("architecture sketches for me should be {v}, I paste them straight into docs.",
      "if you draw a diagram for me, do it in {v}."),
     ("{p} insists on {v} for every diagram.", "{p} will only review diagrams made in {v}."),
     "Which diagram tool does the user prefer?",
     "Which diagram tool does {p} prefer?"),
    ("merge", (("squash merges", "squash"), ("rebase and fast-forward", "rebase"),
               ("plain merge commits", "merge commits")),
     ("for my repos I like {v}, keep history the way I like it.",
      "please default to {v} when you prep my PRs."),
     ("{p} wants {v} as the merge strategy on their repos.", "{p} is strict about {v} in their projects."),
     "Which merge strategy does the user want for their pull requests?",
     "Which merge strategy does {p} want?"),
    ("tz", (("Lisbon time", "Lisbon"), ("Singapore time", "Singapore"), ("Toronto time", "Toronto"),
            ("Nairobi time", "Nairobi"), ("Auckland time", "Auckland")),
     ("give me times in {v}, I never remember the offsets.",
      "when you mention meeting times, convert them to {v} for me."),
     ("{p} wants every time written in {v}.", "{p} asked for times in {v}."),
     "In which time zone does the user want times given?",
     "In which time zone does {p} want times?"),
    ("channel", (("#{c}-ops", None), ("#{c}-alerts", None), ("#team-{c}", None), ("#{c}-release", None)),
     ("if something breaks overnight, post in {v}, not in DMs.",
      "I want the summaries dropped into {v}; that's the channel I actually watch."),
     ("{p} reads the {v} channel and nothing else.", "{p} asked for alerts to go to the {v} channel."),
     "Which Slack channel does the user want summaries posted in?",
     "Which Slack channel does {p} want updates in?"),
    ("commits", (("Conventional Commits", "Conventional Commits"), ("gitmoji", "gitmoji"),
                 ("the ticket id as a prefix", "ticket id")),
     ("for commit messages on my branches, follow {v}.",
      "commit messages I write use {v}; please match that when you draft them."),
     ("{p} enforces {v} in commit messages.", "{p} likes commit messages with {v}."),
     "Which commit message convention does the user want?",
     "Which commit message convention does {p} use?"),
    ("config", (("TOML", "TOML"), ("HCL", "HCL"), ("JSON5", "JSON5"), ("Dhall", "Dhall"),
                ("CUE", "CUE")),
     ("when you propose config files for me, make them {v}.",
      "I'd rather read {v} than anything else for config."),
     ("{p} refuses any config format but {v}.", "{p} writes all their config in {v}."),
     "Which config file format does the user prefer?",
     "Which config format does {p} prefer?"),
    ("bench", (("hyperfine", "hyperfine"), ("k6", "k6"), ("vegeta", "vegeta"), ("locust", "locust"),
               ("wrk2", "wrk2")),
     ("when you suggest a benchmark, use {v}, that's what I have set up.",
      "for load tests I reach for {v} first, so frame suggestions around it."),
     ("{p} benchmarks everything with {v}.", "{p} only trusts benchmark numbers from {v}."),
     "Which benchmarking tool does the user prefer?",
     "Which benchmarking tool does {p} use?"),
    ("review", (("Tuesday mornings", "Tuesday"), ("Thursday afternoons", "Thursday"),
                ("Friday mornings", "Friday"), ("Monday afternoons", "Monday")),
     ("block my review time on {v}, that's when I'm least interrupted.",
      "code reviews from me happen {v}; schedule anything review-heavy then."),
     ("{p} does reviews on {v}.", "{p} keeps {v} for reviews."),
     "On which day does the user like to do code reviews?",
     "On which day does {p} do code reviews?"),
    ("docs", (("AsciiDoc", "AsciiDoc"), ("reStructuredText", "reStructuredText"), ("Org mode", "Org mode"),
              ("plain Markdown", "Markdown")),
     ("design docs for me go in {v}.", "please write my runbook drafts in {v}."),
     ("{p} writes design docs in {v}.", "{p} wants runbooks and design docs in {v}."),
     "Which markup does the user want design docs written in?",
     "Which markup does {p} use for docs?"),
    ("length", (("under 100 words", "100 words"), ("three sentences max", "three sentences"),
                ("five bullets or fewer", "five bullets")),
     ("keep incident summaries for me {v}.", "my rule for summaries you write me: {v}."),
     ("{p} wants incident summaries {v}.", "{p} reads summaries only if they're {v}."),
     "How long should incident summaries for the user be?",
     "How long does {p} want incident summaries?"),
)

# Echoes: same-topic remarks that share a question's key words but never state its answer
# (seed guide, section 3: "turns that share vocabulary with a question but don't answer it").
ECHO = {
    "owner": ("The {svc} owner should sign off on the dashboard changes before we merge them.",
              "Who owns the {svc} alerts is a different question from who owns {svc} itself, apparently.",
              "We need an owner for the {svc} cost line item; finance keeps asking."),
    "cluster": ("Cluster upgrades next month will touch the node pool {svc} is on, so expect restarts.",
                "Is {svc} deployed with the new cluster autoscaler yet? I couldn't tell from the manifests.",
                "Which cluster dashboards should I look at for {svc} latency? There are too many folders."),
    "store": ("The {svc} database needs a vacuum schedule review; the version question can wait.",
              "Which database dashboards do we have for {svc}? I can only find two.",
              "Backups for the {svc} datastore are slow, and nobody wants to touch them before the upgrade."),
    "release": ("The {svc} release checklist is missing the rollback step.",
                "Which version of the {svc} client library are consumers on? No idea, honestly.",
                "Release notes for {svc} should say what changed, not just 'bug fixes'."),
    "port": ("The {svc} port mapping in docker-compose differs from prod, which confuses new people.",
             "Which port does the {svc} metrics endpoint use? Not the main one, the metrics one. Never mind."),
    "incident": ("The {svc} outage review is on Thursday's agenda.",
                 "Still waiting for the full {svc} outage timeline from whoever was on call.",
                 "How do we make sure that {svc} outage doesn't happen again? Alerts alone won't do it."),
    "freeze": ("Does the {svc} freeze also block config changes, or only deploys?",
               "People keep asking me to sneak things into {svc} before the freeze.",
               "When the {svc} freeze is on, who approves emergency fixes?"),
    "event": ("Who's running the {svc} {e}? I'd like to observe.",
              "The {svc} {e} checklist needs a review before we do it again.",
              "What did we learn from the last {e} on {svc}? I don't remember any write-up."),
    "deadline": ("The work to {task} is behind schedule, I'm a bit worried about the deadline.",
                 "Is anyone actually assigned to {task}? The deadline is on the roadmap but the ticket is empty."),
    "person": ("{full} is presenting at the architecture review next week.",
               "{full} asked for help with a flaky pipeline, I said after lunch.",
               "Had a good 1:1 with {full}, they want to do more on-call work."),
    "pref": ("Everyone has opinions about {topic} lately, it's exhausting.",
             "We should write the team's conventions for {topic} down somewhere.",
             "{full} and I argued about {topic} for ten minutes, we agreed to disagree."),
}

# What each preference is about, for statements that change it.
PREF_TOPICS = {"status": "status updates", "lang": "code examples", "diagram": "diagrams",
               "merge": "merging my PRs", "tz": "meeting times", "channel": "where summaries get posted",
               "commits": "commit messages", "config": "config files", "bench": "benchmarks",
               "review": "my code review slot", "docs": "design docs", "length": "incident summaries"}
PREF_CHANGE = ("change of plan on {topic}: forget {old}, I want {new} from now on.",
               "I've changed my mind about {topic}. Not {old} anymore; {new} please.",
               "new preference for {topic}, replacing the old one: {new} instead of {old}.")

# Noise: standups, review chatter, unrelated incidents, chit-chat. None of these state a value
# that a question asks about; many share a question's words on purpose (owner, cluster, port).
# Statements get a short reply or none; questions come with their own answer.
NOISE_STATEMENTS = (
    "Standup: yesterday I reviewed {p}'s PR on {svc}, today I'm chasing the flaky integration test, no blockers.",
    "Morning. Slow start, the VPN dropped twice before nine.",
    "{p} asked whether we should move {svc} to a different cluster. No decision, it's just an idea for next quarter.",
    "The {svc} database connections spiked during the load test, nothing alarming though.",
    "Left a few comments on {p}'s PR to {svc}, mostly naming, one real bug in the retry loop.",
    "Who's the owner of the flaky {svc} alert? Never mind, found it in the runbook.",
    "Unrelated incident in the shared CI runners today, builds were queued for about an hour. Not ours.",
    "I spent the afternoon reading the {svc} logs and I'm more confused than before.",
    "Coffee machine on the third floor is broken again, so productivity is down.",
    "The {svc} release notes are a mess, I need to clean them up before the next version goes out.",
    "{p} is out on Friday, so the {svc} sync moves to Monday.",
    "Retro notes: too many pages last sprint, {svc} alerts need tuning, and nobody likes the on-call handoff doc.",
    "Reviewing the {svc} Terraform, there's a port range in there that looks way too wide.",
    "Capacity planning meeting got cancelled again.",
    "I had a long chat with {p} about how we version internal APIs. We disagree, politely.",
    "The {svc} dashboard has a panel called 'misc' with forty graphs. I'm deleting it.",
    "Somebody pushed a 2 GB fixture into the monorepo. Again.",
    "{svc} had another noisy alert overnight, false positive this time.",
    "Spent an hour on a Helm values diff for {svc}. The problem was a trailing space.",
    "Planning poker went badly, everything is an eight.",
    "{p} and I paired on the {svc} flaky test; we think it's a time zone bug in the fixture.",
    "Security sent the quarterly dependency report, {svc} has a few medium findings, nothing urgent.",
    "Writing the quarterly goals doc, it's mostly copy-paste from last quarter.",
    "I tried the new linter config on {svc} and got 900 warnings, so that's a no for now.",
    "Half the team is at the offsite, so today is quiet.",
    "The staging cluster was flaky all morning, unrelated to any of our services.",
    "{p} wants a walkthrough of the {svc} codebase next sprint.",
    "Infra posted a cost report; storage is up, compute is flat.",
    "Reminder to myself: rotate my laptop's SSH keys this month.",
    "There's a deprecation warning in the {svc} build about the old HTTP client.",
    "The {svc} on-call handoff doc is three pages long now. Nobody reads page three.",
    "{p} demoed the new deploy dashboard, it's nice but slow to load.",
    "Lunch-and-learn today was about property-based testing, surprisingly good.",
    "Two people asked me the same question about {svc} retries today. We need an FAQ.",
    "Our sprint board has 41 items in 'in review'. That can't be right.",
    "I'm updating the {svc} README, the setup section still mentions a laptop script we deleted.",
    "Does anyone know if the {svc} owner signed off on the schema change? I'll check later.",
    "The {svc} release pipeline took forty minutes today. Which runner version is that even on?",
    "We need a cluster-level cost budget for {svc}; the report lumps it in with everything else.",
    "{svc} database backups ran long last night, somebody should look at the vacuum settings.",
    "When does the next release train leave? I want the {svc} patch in it.",
    "Which port range does the {svc} health checker scan? Asking for the firewall review, no rush.",
    "The {svc} incident channel is noisy again, but there's no new outage.",
    "Ticket hygiene: half of the {svc} tickets have no component set.",
    "The freeze calendar for next quarter isn't published yet, so I can't plan the {svc} work.",
    "Deadline pressure is real this month, I'm skipping the guild meeting.",
    "{full} asked who owns what in the new org chart. I pointed them at the service catalog.",
    "{full} is rewriting the {svc} deploy scripts, expect some churn in that repo.",
    "Reminder: {full} is on holiday for the next two weeks, plan reviews around that.",
    "The {svc} alerts fired during the game day and nobody noticed for ten minutes. Not great.",
    "I keep forgetting where the {svc} runbook lives. It's linked from nowhere.",
    "Someone renamed a metric in {svc} and three dashboards went blank.",
    "The {svc} build is down to four minutes after the cache fix. Small wins.",
    "I'd like fewer meetings this week, I have {svc} bugs to chase.",
    "Where does {svc} keep its feature flags these days? Not urgent, I'll grep for it.",
    "The {svc} version bump PR has been open for a week, it just needs one more approval.",
    "Is the {svc} database the one with the weird collation? Don't answer, I'll find out.",
)
SHORT_REPLIES = ("Sure. Want me to keep a running list of the things that came up today?",
                 "Okay. I'll hold off on that until you ask again.",
                 "Sounds like a frustrating morning. Want me to summarise where we left off last time?",
                 "Got it.", "Ha, noted.", "Want me to draft something for that later?",
                 "Okay. Tell me if you want help with it.", "That's worth a ticket, I think.")
NOISE_QA = (
    ("Can you explain the difference between a liveness probe and a readiness probe again? I keep mixing them up.",
     "A liveness probe tells the kubelet to restart a container that is stuck; a readiness probe only takes it out of the load balancer until it can serve again. Slow starters usually want a startup probe too, so the liveness check doesn't kill them while they warm up."),
    ("Quick sanity check: is it fine to run two migrations in one deploy?",
     "Two migrations in one deploy are fine if both are backward compatible and each runs in its own transaction. The risk is the second failing after the first committed, so make them idempotent or split them."),
    ("Do you have a one-liner to find which pods restarted more than five times?",
     "Try: kubectl get pods -A --sort-by='.status.containerStatuses[0].restartCount' and filter the restart column with awk for values above five."),
    ("Is there a way to make pytest show only the slowest ten tests?",
     "pytest --durations=10 prints the ten slowest tests at the end of the run; add -q if the rest of the output is noisy."),
    ("What's a sane default timeout for an internal gRPC call?",
     "For internal gRPC calls a deadline of a few hundred milliseconds to two seconds is common; set it per call from the caller's own budget rather than one global value, and propagate it downstream."),
    ("Can you remind me what SLO burn rate alerts are, in two lines?",
     "Burn rate alerts fire when you consume error budget faster than the SLO allows, for example 14x over an hour. Pair a fast window with a slow one so short blips don't page."),
    ("New hire starts next week, {p} will buddy them. Can you draft an onboarding checklist later?",
     "Happy to. A first cut: access requests, local setup, a first small PR, a shadow on-call shift, and a walkthrough of the main dashboards."),
    ("Can you turn 'we should probably look at this' into a polite Jira comment?",
     "How about: 'This looks worth a closer look when we have capacity; flagging it so it doesn't get lost.'"),
    ("Did we ever decide on a naming scheme for feature flags? I keep seeing three styles.",
     "Not that I have a record of. A common scheme is team.area.flag_name with an expiry date in the description, so stale flags are easy to find."),
    ("I need to decide between two queue libraries for {svc}'s next feature. What should I compare?",
     "I'd compare delivery guarantees, back-pressure behaviour and how each one fails when the broker is down."),
    ("Is a medium finding in a dependency report urgent?",
     "Usually not: medium findings can wait for the normal upgrade cycle unless the vulnerable code is reachable from user input."),
    ("How do I find out what a cron expression like 15 3 * * 1-5 means without guessing?",
     "That one is 03:15 on weekdays. crontab.guru-style explainers help, but reading it as minute, hour, day of month, month, weekday works every time."),
    ("What's the quickest way to see which process holds a port on a Linux box?",
     "ss -ltnp lists listening TCP sockets with the owning process; lsof -i :PORT works too if it's installed."),
    ("Should feature branches be rebased before review or after?",
     "Either works if the team agrees; rebasing before review keeps the diff small, rebasing after avoids invalidating comments."),
)
# Longer assistant explanations: a prompt and a pool of sentences, sampled so no paragraph repeats.
EXPLAIN = (
    (("{svc} keeps hammering its dependency whenever that one is down. How should our retries work?",
      "Can you write down our retry rules of thumb? {p} asked and I couldn't list them."),
     ("Retries need jitter, otherwise every client retries at the same instant and the dependency falls over again.",
      "Cap the number of attempts and the total time, not just the attempts.",
      "Only retry idempotent operations, or give each request an idempotency key.",
      "Log the final failure with the attempt count so dashboards can tell retries from first tries.",
      "A circuit breaker in front of {svc}'s slow dependency would stop the retry storm earlier.",
      "Exponential backoff starting at 100 ms and capped at a few seconds is a reasonable default.")),
    (("How big should the connection pool be for {svc}? We keep running out.",
      "{p} thinks our connection pools are too large. Are they?"),
     ("Connection pools should be sized from the database's limit down, not from the app's thread count up.",
      "With several replicas of {svc}, each pool multiplies, so the total can exceed max_connections quickly.",
      "A pooler in front of the database helps when many short requests come and go.",
      "Watch the wait time for a connection; it grows long before errors show up.",
      "Leaked connections usually come from error paths that skip the close call.",
      "Setting a statement timeout protects the pool from one slow query holding a slot forever.")),
    (("What should a canary check look at before we promote a {svc} build?",
      "Our canaries pass and then prod breaks anyway. What are we doing wrong?"),
     ("Canary analysis works best with two or three metrics that you trust, not twenty.",
      "Compare the canary against a baseline deployed at the same time, not against yesterday's traffic.",
      "Error rate and p99 latency are the usual pair; saturation is a good third.",
      "Keep the canary long enough to see a full traffic cycle if the service has batch peaks.",
      "Automatic rollback should be the default, with a human override for known noisy metrics.",
      "For {svc}, a 5 percent canary for half an hour would catch most regressions we have seen.")),
    (("The {svc} test suite is flaky again. Where do I even start?",
      "{p} says a test fails once in twenty runs on CI only. Ideas?"),
     ("Flaky tests are usually shared state, time, or ordering.",
      "Run the suspect test in a loop with a random seed and record which seeds fail.",
      "If it only fails in CI, compare CPU count and time zone with your laptop first.",
      "Quarantining a flaky test is fine if someone owns fixing it by a date.",
      "Sleeping in tests hides races; wait on a condition with a timeout instead.",
      "The {svc} suite would be easier to debug if each test created its own fixtures.")),
    (("Our on-call handoffs are a mess. What would make them better?",
      "{p} is joining the rotation next month. What should they know about on-call?"),
     ("On-call handoffs go better with a short written summary: open incidents, noisy alerts, risky deploys.",
      "Rotations of one week are common; shorter ones increase handoff overhead.",
      "Track pages per shift so alert tuning is driven by data, not by mood.",
      "An alert that nobody acts on should become a ticket or a dashboard, not a page.",
      "Followers should shadow a shift before taking one alone.",
      "For the {svc} alerts, a weekly review of the noisiest five would cut most of the noise.")),
    (("The {svc} indexes keep growing even though the tables don't. Why?",
      "Should we add another index to speed up the {svc} reports?"),
     ("Index bloat shows up as growing index size without matching row growth.",
      "Rebuilding concurrently avoids long locks, at the cost of a longer build.",
      "Autovacuum settings per table can help the hot tables without touching the rest.",
      "Check for unused indexes before adding new ones; they slow every write.",
      "Partial indexes are a good fit when queries always filter on the same status.",
      "It's worth measuring {svc}'s write latency before and after any index change.")),
    (("How should we write the postmortem for last week's {svc} wobble? It wasn't a real outage.",
      "{p} asked me what makes a good postmortem. What do you think?"),
     ("Near misses deserve a short write-up too, because they are the cheapest lessons.",
      "Keep the timeline factual and put the analysis in its own section.",
      "Name systems and decisions, not people.",
      "Every action item needs an owner and a date, or it will not happen.",
      "A line on what went well helps the next responder as much as the list of mistakes.",
      "Link the dashboards you looked at, so the next person can start from the same view.")),
)
EXPLAIN_ITEMS = tuple((prompt, pool) for prompts, pool in EXPLAIN for prompt in prompts)
ACKS_AFTER_EXPLAIN = ("Thanks, that helps.", "Makes sense.", "Okay, I'll try that.",
                      "Good, let's go with that.", "Hm, I'll think about it.", "Fair enough.")

SESSION_OPENERS = ("Morning! Picking up where we left off.", "Hi again.", "Back for a bit.",
                   "Quick session today, I have meetings all afternoon.", "Hey, got a few minutes?",
                   "Okay, new week.", "Afternoon. Lots going on.", "Hello. Short one.")


# ---------------------------------------------------------------------------------------------
# Case building
# ---------------------------------------------------------------------------------------------

@dataclass
class Chunk:
    """Contiguous turns placed in one session; tags mark turns that questions cite."""
    session: int
    turns: list  # (role, text, tag or None)


@dataclass
class Question:
    qtype: str
    text: str
    gold: str
    evidence: list  # tags
    keywords: list
    superseded: list = field(default_factory=list)
    outdated: list = field(default_factory=list)
    echo: tuple = ()  # (ECHO kind, fill values, earliest session) for same-topic distractors


def month_day(d: date) -> str:
    """The canonical gold form of a date, e.g. 'June 22'."""
    return f"{MONTHS[d.month - 1]} {d.day}"


def say_date(rng: random.Random, d: date) -> str:
    """A date as people write it, in one of several styles."""
    style = rng.randrange(5)
    suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(d.day, "th")
    if style == 0:
        return month_day(d)
    if style == 1:
        return f"{d.day} {MONTHS[d.month - 1]}"
    if style == 2:
        return f"{WEEKDAYS[d.weekday()]}, {month_day(d)}"
    if style == 3:
        return f"the {d.day}{suffix} of {MONTHS[d.month - 1]}"
    return d.isoformat()


def say_days(rng: random.Random, n: int) -> str:
    """A duration in days, in words or digits, or in weeks when it divides."""
    if n % 7 == 0 and rng.random() < 0.7:
        w = n // 7
        return "one week" if w == 1 else f"{NUMBER_WORDS.get(w, w)} weeks"
    if n in NUMBER_WORDS and rng.random() < 0.5:
        return f"{NUMBER_WORDS[n]} days"
    return f"{n} days"


def cap(text: str) -> str:
    """The text with its first character upper-cased."""
    return text[0].upper() + text[1:] if text else text


class CaseBuilder:
    """Builds one case: a world of facts, chunks placed in sessions, and questions."""

    def __init__(self, rng: random.Random, case_id: str, size: str, pools: dict) -> None:
        self.rng, self.case_id, self.size = rng, case_id, size
        r = rng
        n_sessions = {"short": r.randint(3, 5), "medium": r.randint(5, 8), "long": r.randint(8, 12)}[size]
        n_services = {"short": 5, "medium": 6, "long": 7}[size]
        firsts = r.sample(pools["first"], 9)
        self.people = [f"{f} {r.choice(pools['last'])}" for f in firsts]
        self.services = r.sample(pools["services"], n_services)
        self.clusters = r.sample(pools["clusters"], n_services + 4)
        self.artifacts = r.sample(pools["artifacts"], n_services)
        self.ticket_prefix = r.choice(TICKET_PREFIXES)
        # The world: one true, current value per service and attribute.
        kinds = r.sample(STORES, len(STORES))
        self.world = {}
        for i, svc in enumerate(self.services):
            kind, ver = kinds[i % len(kinds)]
            self.world[svc] = {
                "owner": self.people[i], "cluster": self.clusters[i],
                "store": f"{kind} {ver(r)}", "store_kind": kind,
                "release": f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 20)}",
                "port": str(r.choice([p for p in range(7001, 9990) if p % 1000 and p not in (8080, 8443, 9090)])),
            }
        self.spare_people = self.people[n_services:]
        self.spare_clusters = self.clusters[n_services:]
        # Session dates: a start between Sep 2025 and Jun 2026, gaps of 2 to 21 days.
        start = datetime(2025, 9, 1, tzinfo=timezone.utc) + timedelta(days=r.randint(0, 280))
        self.times = []
        t = start
        for _ in range(n_sessions):
            t = t.replace(hour=r.randint(8, 17), minute=r.choice((0, 5, 15, 30, 40, 45)))
            self.times.append(t)
            t = t + timedelta(days=r.randint(2, 21))
        self.asked = (self.times[-1] + timedelta(days=r.randint(1, 6))).replace(hour=9, minute=0)
        self.chunks: list[Chunk] = []
        self.questions: list[Question] = []
        self.stated: dict = {}       # (svc, attr) -> tag of the statement
        self.blocked: set = set()    # (svc, attr) never to be stated (abstention targets, KU)
        self.locked: set = set()     # services whose attributes a KU or multi-hop depends on
        self.used_subject: set = set()
        self.prefs_used: set = set()
        self.incidents: dict = {}    # svc -> dict
        self.events_used: set = set()
        self.freezes: dict = {}
        self._tag = 0
        self.decks: dict = {}

    # -- helpers --------------------------------------------------------------------------

    def tag(self) -> str:
        """A fresh chunk-local tag; turn ids are assigned at layout time."""
        self._tag += 1
        return f"f{self._tag}"

    def day(self, s: int) -> date:
        """The calendar date of session s."""
        return self.times[s].date()

    def pick_session(self, lo: int = 0, hi: int | None = None) -> int:
        """A random session index in [lo, hi] (hi defaults to the last session)."""
        hi = len(self.times) - 1 if hi is None else hi
        return self.rng.randint(lo, max(lo, hi))

    def open(self, text: str) -> str:
        """A user statement with an optional opener; service names keep their lower case."""
        opener = self.rng.choice(OPENERS)
        if opener:
            return opener + text
        return text if re.split(r"[\s']", text, maxsplit=1)[0] in self.services else cap(text)

    def add_fact(self, session: int, text: str, role: str = "user", ack: bool = True) -> str:
        """Add one statement turn (plus an assistant acknowledgement); return its tag."""
        tg = self.tag()
        turns = [(role, self.open(text) if role == "user" else cap(text), tg)]
        if ack and role == "user" and self.rng.random() < 0.8:
            turns.append(("assistant", self.rng.choice(ACKS), None))
        self.chunks.append(Chunk(session, turns))
        return tg

    def free_services(self, *attrs: str) -> list[str]:
        """Services not yet used as a question subject whose attrs are stateable."""
        return [s for s in self.services if s not in self.used_subject
                and all((s, a) not in self.blocked for a in attrs)]

    def state(self, svc: str, attr: str, session: int | None = None) -> str:
        """Make sure svc's current attr value is stated somewhere; return the statement tag."""
        key = (svc, attr)
        if key in self.stated:
            return self.stated[key]
        assert key not in self.blocked, key
        s = self.pick_session() if session is None else session
        v = self.world[svc][attr]
        bank = {"owner": OWNER_SAY, "cluster": CLUSTER_SAY, "store": STORE_SAY,
                "release": RELEASE_SAY, "port": PORT_SAY}[attr]
        text = self.rng.choice(bank).format(svc=svc, p=v, v=v)
        role = "user"
        if attr in ASSISTANT_SAY and self.rng.random() < 0.25:
            # Sometimes the assistant is the one who looked it up.
            role, text = "assistant", self.rng.choice(ASSISTANT_SAY[attr]).format(svc=svc, v=v)
        self.stated[key] = self.add_fact(s, text, role)
        return self.stated[key]

    def distract(self, attr: str, exclude: str, n: int = 2) -> None:
        """State the same attribute for other services, as same-topic distractors."""
        others = [s for s in self.services if s != exclude and (s, attr) not in self.blocked]
        for s in self.rng.sample(others, min(n, len(others))):
            self.state(s, attr)

    def incident(self, svc: str, vague: bool = False, session: int | None = None) -> dict:
        """State an outage of svc (with a ticket and a cause unless vague)."""
        if svc in self.incidents:
            return self.incidents[svc]
        r = self.rng
        s = self.pick_session(0, len(self.times) - 2) if session is None else session
        inc = {"session": s, "ticket": f"{self.ticket_prefix}-{r.randint(1000, 9899)}",
               "artifact": self.artifacts[self.services.index(svc)], "vague": vague}
        if vague:
            inc["tag"] = self.add_fact(s, r.choice(INCIDENT_VAGUE).format(svc=svc))
        else:
            cause = r.choice(CAUSES).format(a=inc["artifact"])
            text = r.choice(INCIDENT_SAY).format(svc=svc, t=inc["ticket"], m=r.randint(12, 95), c=cause)
            inc["tag"] = self.add_fact(s, text)
        self.incidents[svc] = inc
        return inc

    def freeze(self, svc: str, session: int | None = None) -> dict:
        """Announce a change freeze on svc: a start date after the session and a length."""
        if svc in self.freezes:
            return self.freezes[svc]
        r = self.rng
        s = self.pick_session() if session is None else session
        taken = {f["start"] for f in self.freezes.values() if "start" in f}
        start = self.day(s) + timedelta(days=r.randint(3, 25))
        while start in taken:
            start += timedelta(days=1)
        n = r.choice((7, 9, 10, 12, 14, 14, 21, 5, 8, 11))
        said = say_date(r, start)
        fz = {"start": start, "days": n, "end": start + timedelta(days=n), "said": said}
        if r.random() < 0.3:
            a, b = r.choice(FREEZE_SPLIT)
            t1 = self.tag()
            t2 = self.tag()
            self.chunks.append(Chunk(s, [
                ("user", self.open(a.format(svc=svc, d=said)), t1),
                ("assistant", r.choice(("How long does it run?", "Okay. For how long?",
                                        "Noted. Do you know the length yet?")), None),
                ("user", cap(b.format(dur=say_days(r, n))), t2)]))
            fz["tags"] = [t1, t2]
        else:
            text = r.choice(FREEZE_SAY).format(svc=svc, d=said, dur=say_days(r, n))
            fz["tags"] = [self.add_fact(s, text)]
        self.freezes[svc] = fz
        return fz

    # -- question makers: each returns True if it added a question -------------------------

    def q_single_hop(self) -> bool:
        r = self.rng
        kind = r.choice(("owner", "cluster", "store", "release", "port", "ticket", "cause"))
        if kind in ("ticket", "cause"):
            cands = [s for s in self.free_services() if s not in self.incidents]
            if not cands:
                return False
            svc = r.choice(cands)
            inc = self.incident(svc)
            others = [s for s in self.services if s != svc and s not in self.incidents]
            if others:
                self.incident(r.choice(others), vague=r.random() < 0.4)
            gold = inc["ticket"] if kind == "ticket" else inc["artifact"]
            q = r.choice(TICKET_ASK if kind == "ticket" else CAUSE_ASK).format(svc=svc)
            self.questions.append(Question("single_hop", q, gold, [inc["tag"]], [svc, gold],
                                           echo=("incident", {"svc": svc}, inc["session"])))
        else:
            cands = self.free_services(kind)
            if not cands:
                return False
            svc = r.choice(cands)
            tg = self.state(svc, kind)
            self.distract(kind, svc, 2)
            gold = self.world[svc][kind]
            ask = {"owner": OWNER_ASK, "cluster": CLUSTER_ASK, "store": STORE_ASK,
                   "release": RELEASE_ASK, "port": PORT_ASK}[kind]
            self.questions.append(Question("single_hop", r.choice(ask).format(svc=svc), gold,
                                           [tg], [svc, gold], echo=(kind, {"svc": svc}, 0)))
        self.used_subject.add(svc)
        return True

    def q_multi_hop(self) -> bool:
        r = self.rng
        kind = r.choice(("owner_cluster", "owner_store", "incident_owner", "cluster_owner",
                         "artifact_cluster", "freeze_owner"))
        need = {"owner_cluster": ("owner", "cluster"), "owner_store": ("owner", "store"),
                "incident_owner": ("owner",), "cluster_owner": ("cluster", "owner"),
                "artifact_cluster": ("cluster",), "freeze_owner": ("owner",)}[kind]
        cands = [s for s in self.free_services(*need)
                 if not (kind in ("incident_owner", "artifact_cluster") and s in self.incidents)
                 and not (kind == "freeze_owner" and s in self.freezes)]
        if not cands:
            return False
        svc = r.choice(cands)
        w = self.world[svc]
        # Put the two hops in different sessions when there is room.
        s1 = self.pick_session()
        s2 = r.choice([i for i in range(len(self.times)) if i != s1] or [s1])
        if kind in ("incident_owner", "artifact_cluster"):
            inc = self.incident(svc, session=min(s1, len(self.times) - 2))
            second = "owner" if kind == "incident_owner" else "cluster"
            t2 = self.state(svc, second, s2)
            self.distract(second, svc, 2)
            other = [s for s in self.services if s != svc and s not in self.incidents]
            if other:
                self.incident(r.choice(other))
            if kind == "incident_owner":
                q = r.choice(MH_INCIDENT_OWNER).format(t=inc["ticket"])
                gold, kw = w["owner"], [svc, w["owner"]]
            else:
                q = r.choice(MH_ARTIFACT_CLUSTER).format(a=inc["artifact"])
                gold, kw = w["cluster"], [svc, w["cluster"]]
            ev = [inc["tag"], t2]
        elif kind == "freeze_owner":
            fz = self.freeze(svc, s1)
            t2 = self.state(svc, "owner", s2)
            self.distract("owner", svc, 2)
            others = [s for s in self.services if s != svc and s not in self.freezes]
            if others:
                self.freeze(r.choice(others))
            q = r.choice(MH_FREEZE_OWNER).format(d=month_day(fz["start"]))
            gold, kw, ev = w["owner"], [svc, w["owner"]], fz["tags"] + [t2]
        else:
            a, b = need
            t1, t2 = self.state(svc, a, s1), self.state(svc, b, s2)
            self.distract(a, svc, 2)
            self.distract(b, svc, 2)
            if kind == "owner_cluster":
                q, gold = r.choice(MH_OWNER_CLUSTER).format(p=w["owner"]), w["cluster"]
            elif kind == "owner_store":
                q, gold = r.choice(MH_OWNER_STORE).format(p=w["owner"]), w["store"]
            else:
                q, gold = r.choice(MH_CLUSTER_OWNER).format(v=w["cluster"]), w["owner"]
            kw = [svc, gold]
            ev = [t1, t2]
        self.used_subject.add(svc)
        self.locked.add(svc)
        echo = {"owner_cluster": ("person", {"full": w["owner"]}, 0),
                "owner_store": ("person", {"full": w["owner"]}, 0),
                "cluster_owner": ("cluster", {"svc": svc}, 0),
                "freeze_owner": ("freeze", {"svc": svc}, 0)}.get(kind)
        if echo is None:
            echo = ("incident", {"svc": svc}, self.incidents[svc]["session"])
        self.questions.append(Question("multi_hop", q, gold, ev, kw, echo=echo))
        return True

    def q_temporal(self) -> bool:
        r = self.rng
        kind = r.choice(("freeze", "event", "between", "deadline", "ago"))
        cands = self.free_services()
        if not cands:
            return False
        svc = r.choice(cands)
        last = len(self.times) - 1
        if kind == "freeze":
            if svc in self.freezes:
                return False
            fz = self.freeze(svc)
            others = [s for s in self.services if s != svc and s not in self.freezes]
            if others:
                self.freeze(r.choice(others))
            q = r.choice(FREEZE_ASK).format(svc=svc)
            gold, ev, kw = month_day(fz["end"]), fz["tags"], [svc, fz["said"]]
            echo = ("freeze", {"svc": svc}, 0)
        elif kind == "event":
            s = self.pick_session()
            ev_name = r.choice([e for e in EVENTS if e not in self.events_used])
            self.events_used.add(ev_name)
            n, rel = self._relative(r, self.day(s))
            text = r.choice(EVENT_SAY).format(e=ev_name, svc=svc, rel=rel, p=r.choice(self.people))
            tg = self.add_fact(s, text)
            # Distractor: the same event for another service on another day.
            other = r.choice([x for x in self.services if x != svc])
            s2 = self.pick_session()
            _, rel2 = self._relative(r, self.day(s2))
            self.add_fact(s2, r.choice(EVENT_SAY).format(e=ev_name, svc=other, rel=rel2,
                                                           p=r.choice(self.people)))
            q = r.choice(EVENT_ASK).format(e=ev_name, svc=svc)
            gold, ev, kw = month_day(self.day(s) + timedelta(days=n)), [tg], [svc, ev_name]
            echo = ("event", {"svc": svc, "e": ev_name}, 0)
        elif kind == "between":
            if svc in self.incidents or last < 1:
                return False
            s1 = self.pick_session(0, last - 1)
            s2 = self.pick_session(s1 + 1, last)
            inc = self.incident(svc, session=s1)
            t2 = self.add_fact(s2, r.choice(FIX_SAY).format(svc=svc))
            other = [s for s in self.services if s != svc and s not in self.incidents]
            if other:
                self.incident(r.choice(other))
            q = r.choice(("How many days passed between the {svc} outage and its fix shipping?",
                          "How many days after the {svc} outage did the permanent fix ship?",
                          "How long, in days, did it take to ship the fix for the {svc} outage?")
                         ).format(svc=svc)
            n = (self.day(s2) - self.day(s1)).days
            gold, ev, kw = f"{n} days", [inc["tag"], t2], [svc, inc["ticket"]]
            echo = ("incident", {"svc": svc}, s1)
        elif kind == "deadline":
            template, other_template = r.sample(DEADLINE_TASKS, 2)
            task = template.format(svc=svc)
            s = self.pick_session()
            due = self.asked.date() + timedelta(days=r.randint(4, 30))
            said = say_date(r, due)
            tg = self.add_fact(s, r.choice(DEADLINE_SAY).format(task=task, d=said))
            # Distractors: the same work on another service, other work on the same service.
            other_svc = r.choice([x for x in self.services if x != svc])
            for dtask in (template.format(svc=other_svc), other_template.format(svc=svc)):
                shift = timedelta(days=r.choice((-3, 5, 9, 12)))
                self.add_fact(self.pick_session(), r.choice(DEADLINE_SAY).format(
                    task=dtask, d=say_date(r, due + shift)))
            q = r.choice(DEADLINE_ASK).format(task=task)
            n = (due - self.asked.date()).days
            gold, ev, kw = f"{n} days", [tg], [svc, said]
            echo = ("deadline", {"task": task}, 0)
        else:  # ago
            s = self.pick_session()
            ev_name = r.choice([e for e in EVENTS if e not in self.events_used])
            self.events_used.add(ev_name)
            tg = self.add_fact(s, r.choice(DONE_SAY).format(e=ev_name, svc=svc))
            other = r.choice([x for x in self.services if x != svc])
            self.add_fact(self.pick_session(), r.choice(DONE_SAY).format(e=ev_name, svc=other))
            q = r.choice(DONE_ASK).format(e=ev_name, svc=svc)
            n = (self.asked.date() - self.day(s)).days
            gold, ev, kw = f"{n} days", [tg], [svc, ev_name]
            echo = ("event", {"svc": svc, "e": ev_name}, 0)
        self.used_subject.add(svc)
        self.questions.append(Question("temporal", q, gold, ev, kw, echo=echo))
        return True

    @staticmethod
    def _relative(r: random.Random, d: date) -> tuple[int, str]:
        """An unambiguous relative date phrase and its offset in days."""
        choices = [(1, "tomorrow"), (2, "the day after tomorrow"), (7, "a week from today"),
                   (14, "two weeks from today")]
        n = r.randint(3, 12)
        choices.append((n, f"in {n} days"))
        if d.weekday() < 4:
            choices.append((4 - d.weekday(), "this Friday"))
        return r.choice(choices)

    def q_knowledge_update(self) -> bool:
        r = self.rng
        kind = r.choice(("owner", "cluster", "store", "release", "pref"))
        if len(self.times) < 2:
            return False
        last = len(self.times) - 1
        s_old = self.pick_session(0, max(0, last // 2))
        s_new = self.pick_session(s_old + 1, last)
        if kind == "pref":
            return self._pref_update(s_old, s_new)
        cands = [s for s in self.free_services(kind) if s not in self.locked
                 and (s, kind) not in self.stated]
        if not cands:
            return False
        svc = r.choice(cands)
        w = self.world[svc]
        new = w[kind]
        if kind == "owner":
            if not self.spare_people:
                return False
            old = self.spare_people.pop()
            old_text = r.choice(OWNER_SAY).format(svc=svc, p=old)
            new_text = r.choice(OWNER_HANDOVER).format(svc=svc, old=old, new=new)
        elif kind == "cluster":
            old = self.spare_clusters.pop()
            old_text = r.choice(CLUSTER_SAY).format(svc=svc, v=old)
            new_text = r.choice(CLUSTER_MOVE).format(svc=svc, old=old, new=new)
        elif kind == "store":
            k, ver = w["store"].split(" ", 1)
            parts = ver.split(".")
            if int(parts[-1]) >= 2:
                parts[-1] = str(r.randint(1, int(parts[-1]) - 1))
            else:
                parts[0] = str(int(parts[0]) - 1)
            old = f"{k} {'.'.join(parts)}"
            old_text = r.choice(STORE_SAY).format(svc=svc, v=old)
            new_text = r.choice(STORE_UPGRADE).format(svc=svc, old=old, new=new)
        else:
            maj, mi, pa = (int(x) for x in new.split("."))
            old = f"{maj}.{mi - 1}.{r.randint(0, 9)}" if mi > 0 else f"{maj - 1}.{r.randint(5, 20)}.{pa}"
            if maj == 1 and mi == 0:
                old = f"0.{r.randint(8, 30)}.{r.randint(0, 9)}"
            old_text = r.choice(RELEASE_SAY).format(svc=svc, v=old)
            new_text = r.choice(RELEASE_BUMP).format(svc=svc, old=old, new=new)
        sup = [self.add_fact(s_old, old_text)]
        if s_new - s_old >= 2 and r.random() < 0.4:
            # The stale value repeated in between, as people do before they learn of the change.
            mid = r.randint(s_old + 1, s_new - 1)
            sup.append(self.add_fact(mid, f"as far as I know {svc} is still on {old}, right?"
                                     if kind != "owner" else f"I'll ask {old} about {svc}, it's their service.",
                                     ack=False))
        tg = self.add_fact(s_new, new_text)
        self.stated[(svc, kind)] = tg
        self.distract(kind, svc, 2)
        ask = {"owner": OWNER_ASK, "cluster": CLUSTER_ASK, "store": STORE_ASK,
               "release": RELEASE_ASK}[kind]
        self.used_subject.add(svc)
        self.locked.add(svc)
        self.questions.append(Question("knowledge_update", r.choice(ask).format(svc=svc), new,
                                       [tg], [svc, new], sup, [old], echo=(kind, {"svc": svc}, 0)))
        return True

    def _pref_update(self, s_old: int, s_new: int) -> bool:
        r = self.rng
        free = [p for p in PREFS if p[0] not in self.prefs_used]
        if not free:
            return False
        key, options, user_say, col_say, q_user, _ = r.choice(free)
        self.prefs_used.add(key)
        (old_p, old_g), (new_p, new_g) = r.sample(self._options(options), 2)
        sup = [self.add_fact(s_old, r.choice(user_say).format(v=old_p))]
        # A colleague who keeps the old choice is a second distractor.
        self.add_fact(self.pick_session(), r.choice(col_say).format(p=r.choice(self.people), v=old_p))
        tg = self.add_fact(s_new, r.choice(PREF_CHANGE).format(
            topic=PREF_TOPICS[key], old=old_p, new=new_p))
        self.questions.append(Question("knowledge_update", q_user, new_g, [tg], [new_g],
                                       sup, [old_g], echo=("pref", {"topic": PREF_TOPICS[key]}, 0)))
        return True

    def _options(self, options: tuple) -> list[tuple[str, str]]:
        """Pref options as (phrase, gold); channel names are made per case."""
        out = []
        for phrase, gold in options:
            if gold is None:
                c = self.services[0].split("-")[0]
                phrase = phrase.format(c=c)
                gold = phrase
            out.append((phrase, gold))
        return out

    def q_abstention(self) -> bool:
        r = self.rng
        kind = r.choice(("store", "owner", "port", "ticket", "freeze", "pref"))
        if kind == "pref":
            free = [p for p in PREFS if p[0] not in self.prefs_used]
            key, options, _, col_say, q_user, _ = r.choice(free)
            self.prefs_used.add(key)
            # Only a colleague's preference is stated; the user's never is.
            phrase, _ = r.choice(self._options(options))
            p = r.choice(self.people)
            self.add_fact(self.pick_session(), r.choice(col_say).format(p=p, v=phrase))
            self.questions.append(Question("abstention", q_user, IDK, [], [],
                                           echo=("pref", {"topic": PREF_TOPICS[key]}, 0)))
            return True
        attr = {"store": "store", "owner": "owner", "port": "port", "ticket": None, "freeze": None}[kind]
        cands = [s for s in self.free_services(*(attr,) if attr else ()) if s not in self.locked
                 and (attr is None or (s, attr) not in self.stated)
                 and not (kind == "ticket" and s in self.incidents)
                 and not (kind == "freeze" and s in self.freezes)]
        if not cands:
            return False
        svc = r.choice(cands)
        s = self.pick_session()
        if kind == "store":
            self.blocked.add((svc, "store"))
            kd = self.world[svc]["store_kind"]
            self.add_fact(s, r.choice(STORE_VAGUE).format(svc=svc, kind=kd))
            self.distract("store", svc, 3)
            q = r.choice(("Which {k} version does {svc} run?", "What version of {k} is {svc} on?")
                         ).format(k=kd, svc=svc)
        elif kind == "owner":
            self.blocked.add((svc, "owner"))
            self.add_fact(s, r.choice((
                "{svc}'s owner is out this week, so questions about it will have to wait.",
                "nobody in this room knows much about {svc}; we should find out who owns it.",
                "the {svc} entry in the service catalog has an empty owner field. Classic.")).format(svc=svc))
            self.distract("owner", svc, 3)
            q = r.choice(OWNER_ASK).format(svc=svc)
        elif kind == "port":
            self.blocked.add((svc, "port"))
            self.add_fact(s, r.choice(PORT_VAGUE).format(svc=svc))
            self.distract("port", svc, 3)
            q = r.choice(PORT_ASK).format(svc=svc)
        elif kind == "ticket":
            self.incident(svc, vague=True, session=min(s, len(self.times) - 1))
            others = [x for x in self.services if x != svc and x not in self.incidents]
            if others:
                self.incident(r.choice(others))
            q = r.choice(TICKET_ASK).format(svc=svc)
        else:
            self.add_fact(s, r.choice(FREEZE_VAGUE).format(svc=svc))
            self.freezes[svc] = {"vague": True}
            others = [x for x in self.services if x != svc and x not in self.freezes]
            self.freeze(r.choice(others))
            q = r.choice(FREEZE_ASK).format(svc=svc)
        self.used_subject.add(svc)
        echo_kind = {"ticket": "incident"}.get(kind, kind)
        lo = self.incidents[svc]["session"] if kind == "ticket" else 0
        self.questions.append(Question("abstention", q, IDK, [], [], echo=(echo_kind, {"svc": svc}, lo)))
        return True

    def q_preference(self) -> bool:
        r = self.rng
        free = [p for p in PREFS if p[0] not in self.prefs_used]
        if not free:
            return False
        key, options, user_say, col_say, q_user, q_col = r.choice(free)
        self.prefs_used.add(key)
        opts = r.sample(self._options(options), 3 if len(options) >= 3 else 2)
        about_user = r.random() < 0.6
        col = r.choice(self.people)
        other_col = r.choice([p for p in self.people if p != col])
        s1 = self.pick_session()
        if about_user:
            tg = self.add_fact(s1, r.choice(user_say).format(v=opts[0][0]))
            # A colleague's different preference on the same thing is the distractor.
            self.add_fact(self.pick_session(), r.choice(col_say).format(p=col, v=opts[1][0]))
            q = q_user
            kw = [opts[0][1]]
        else:
            tg = self.add_fact(s1, r.choice(col_say).format(p=col, v=opts[0][0]))
            self.add_fact(self.pick_session(), r.choice(user_say).format(v=opts[1][0]))
            if len(opts) > 2:
                self.add_fact(self.pick_session(), r.choice(col_say).format(p=other_col, v=opts[2][0]))
            q = q_col.format(p=col)
            kw = [col, opts[0][1]]
        self.questions.append(Question("preference", q, opts[0][1], [tg], kw,
                                       echo=("pref", {"topic": PREF_TOPICS[key]}, 0)))
        return True

    # -- noise and layout -------------------------------------------------------------------

    def noise_chunk(self, s: int, long_form: bool) -> Chunk:
        """A noise exchange: chit-chat, standup, review chatter or a longer explanation.
        Drawn from per-case decks, so the same line does not repeat within a case."""
        r = self.rng
        # Conversation gravitates to the services things happen to, as it does at work.
        focus = sorted(self.used_subject) if self.used_subject and r.random() < 0.6 else self.services
        person = r.choice(self.people)
        fill = {"svc": r.choice(focus), "p": person.split()[0], "full": person}
        roll = r.random()
        # Questions and explanations are not asked twice in a case; chit-chat may recur.
        explain = self.draw("explain", EXPLAIN_ITEMS, refill=False) if long_form and roll < 0.4 else None
        qa = self.draw("qa", NOISE_QA, refill=False) if explain is None and roll < 0.65 else None
        if explain:
            prompt, pool = explain
            sents = r.sample(pool, r.randint(3, len(pool)))
            turns = [("user", prompt.format(**fill), None),
                     ("assistant", " ".join(x.format(**fill) for x in sents), None)]
            if r.random() < 0.5:
                turns.append(("user", r.choice(ACKS_AFTER_EXPLAIN), None))
        elif qa:
            question, answer = qa
            turns = [("user", question.format(**fill), None), ("assistant", answer, None)]
        else:
            turns = [("user", self.draw("stmt", NOISE_STATEMENTS).format(**fill), None)]
            if r.random() < 0.5:
                turns.append(("assistant", r.choice(SHORT_REPLIES), None))
        return Chunk(s, turns)

    def draw(self, deck: str, pool: tuple, refill: bool = True):
        """Next item of a shuffled per-case deck over pool; when it runs out, reshuffle
        (refill) or return None."""
        if deck not in self.decks or (refill and not self.decks[deck]):
            self.decks[deck] = self.rng.sample(list(pool), len(pool))
        return self.decks[deck].pop() if self.decks[deck] else None

    def layout(self) -> list[dict]:
        """Pad sessions with noise, order chunks, assign turn ids; return the sessions."""
        r = self.rng
        per = {"short": (1, 3), "medium": (2, 5), "long": (5, 9)}[self.size]
        by_session = {i: [] for i in range(len(self.times))}
        for ch in self.chunks:
            by_session[ch.session].append(ch)
        sessions, self.tag_to_id = [], {}
        for i, t in enumerate(self.times):
            chunks = by_session[i] + [self.noise_chunk(i, self.size != "short")
                                      for _ in range(r.randint(*per))]
            r.shuffle(chunks)
            turns = []
            if r.random() < 0.5:
                turns.append(("user", r.choice(SESSION_OPENERS), None))
            for ch in chunks:
                turns.extend(ch.turns)
            out = []
            for j, (role, text, tg) in enumerate(turns, 1):
                tid = f"{self.case_id}-s{i + 1}t{j}"
                if tg:
                    self.tag_to_id[tg] = tid
                out.append({"turn_id": tid, "role": role, "text": text})
            sessions.append({"session_id": f"s{i + 1}",
                             "timestamp": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "turns": out})
        return sessions

    def build(self, types: list[str]) -> dict:
        """Make the questions for the given types, lay out sessions, return the case."""
        makers = {"single_hop": self.q_single_hop, "multi_hop": self.q_multi_hop,
                  "temporal": self.q_temporal, "knowledge_update": self.q_knowledge_update,
                  "abstention": self.q_abstention, "preference": self.q_preference}
        for qt in types:
            for _ in range(20):
                if makers[qt]():
                    break
            else:
                raise RuntimeError(f"{self.case_id}: could not make a {qt} question")
        for q in self.questions:
            kind, values, lo = q.echo
            person = self.rng.choice(self.people)
            values = {"full": person, **values}
            texts = self.rng.sample(ECHO[kind], self.rng.randint(1, 2))
            for text in texts:
                self.chunks.append(Chunk(self.pick_session(lo), [("user", text.format(**values), None)]))
        # Every asked-about service is also mentioned in passing somewhere, never only in
        # its evidence: the service name alone must not find the answer.
        with_svc = [t for t in NOISE_STATEMENTS if "{svc}" in t]
        for svc in sorted(self.used_subject):
            person = self.rng.choice(self.people)
            text = self.draw("subject", with_svc).format(svc=svc, p=person.split()[0], full=person)
            self.chunks.append(Chunk(self.pick_session(), [("user", text, None)]))
        sessions = self.layout()
        asked = self.asked.strftime("%Y-%m-%dT%H:%M:%SZ")
        qs = []
        for k, q in enumerate(self.questions, 1):
            rec = {"qid": f"{self.case_id}q{k}", "type": q.qtype, "asked_at": asked,
                   "question": q.text, "gold_answer": q.gold,
                   "evidence": [self.tag_to_id[t] for t in q.evidence]}
            meta = {"keywords": q.keywords}
            if q.qtype == "knowledge_update":
                meta["superseded_evidence"] = [self.tag_to_id[t] for t in q.superseded]
                meta["outdated_answers"] = q.outdated
            rec["meta"] = meta
            qs.append(rec)
        return {"case_id": self.case_id, "sessions": sessions, "questions": qs,
                "meta": {"size": self.size, "generator": "data/make_cases.py"}}


# ---------------------------------------------------------------------------------------------
# Checks the generator enforces on its own output
# ---------------------------------------------------------------------------------------------

WORD = re.compile(r"\w+")
STOP = set("a an the of to in on at for is are was were be by with and or what which who whose "
           "when where how many much does do did it its this that as from after before until "
           "into about there their them they we our us i me my you your his her than".split())


def check_case(case: dict) -> None:
    """Raise AssertionError when a question breaks an authoring convention."""
    texts = {t["turn_id"]: t["text"] for s in case["sessions"] for t in s["turns"]}
    for q in case["questions"]:
        qtext = q["question"].lower()
        if q["type"] != "abstention":
            assert not re.search(rf"(?<!\w){re.escape(q['gold_answer'].lower())}(?!\w)", qtext), q
            # All keywords co-occur in at least one evidence turn (the answer-bearing one).
            assert any(all(kw.lower() in texts[e].lower() for kw in q["meta"]["keywords"])
                       for e in q["evidence"]), (q["qid"], q["meta"]["keywords"])
        # Distractor: some other turn shares a content word with the question (crudely
        # stemmed to five letters, so "benchmarks" and "benchmarking" count as shared).
        qwords = {w[:5] for w in WORD.findall(qtext) if w not in STOP}
        others = [t for tid, t in texts.items() if tid not in q["evidence"]]
        assert any(qwords & {w[:5] for w in WORD.findall(t.lower())} for t in others), q["qid"]


def make_split(n_cases: int, seed: int, dev: bool) -> list[dict]:
    """Generate one split; sizes and question types are spread evenly over the cases."""
    rng = random.Random(seed)
    pools = {"first": pool_split(FIRST, dev), "last": pool_split(LAST, dev),
             "services": pool_split(SERVICES, dev), "clusters": pool_split(CLUSTERS, dev),
             "artifacts": pool_split(ARTIFACTS, dev)}
    n_long = max(1, round(n_cases * 0.3))
    n_short = (n_cases - n_long) // 2
    sizes = ["long"] * n_long + ["short"] * n_short + ["medium"] * (n_cases - n_long - n_short)
    rng.shuffle(sizes)
    n_questions = {"short": 4, "medium": 5, "long": 7}
    cycle: list[str] = []
    cases = []
    for i, size in enumerate(sizes, 1):
        types = []
        while len(types) < n_questions[size]:
            if not cycle:
                cycle = list(TYPES)
                rng.shuffle(cycle)
            # A case takes distinct types where it can, so a short case covers four kinds.
            pick = next((t for t in cycle if t not in types), cycle[0])
            cycle.remove(pick)
            types.append(pick)
        case_id = f"{'dev' if dev else 'mb'}{i:03d}"
        case = CaseBuilder(random.Random(rng.random()), case_id, size, pools).build(types)
        check_case(case)
        cases.append(case)
    return cases


def render(cases: list[dict]) -> str:
    """The JSONL text of a split, one case per line."""
    return "".join(dumps(c) + "\n" for c in cases)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--test-cases", type=int, default=46)
    ap.add_argument("--dev-cases", type=int, default=12)
    ap.add_argument("--out-dir", default=HERE)
    ap.add_argument("--check", action="store_true",
                    help="regenerate in memory and exit 2 if the files on disk differ")
    a = ap.parse_args(argv)
    if a.test_cases < 1 or a.dev_cases < 1:
        print("error: --test-cases and --dev-cases must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    outputs = {"cases.jsonl": render(make_split(a.test_cases, a.seed, dev=False)),
               "dev.jsonl": render(make_split(a.dev_cases, a.seed + 1, dev=True))}
    for name, text in outputs.items():
        path = os.path.join(a.out_dir, name)
        if a.check:
            code = check_generated(path, text, "python data/make_cases.py")
            if code != EXIT_OK:
                return code
        else:
            write_atomic(path, text)
            print(f"wrote {path}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
