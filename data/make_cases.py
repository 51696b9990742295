"""Generate the bundled memory-bench dataset: a synthetic engineering assistant over months.

Each case is one team: invented services, clusters, datastores, people, incidents, freezes,
deadlines and the user's working preferences, told across 3 to 12 timestamped sessions padded
with standups, code review chatter and unrelated incidents. Facts are written with many
phrasings so that no sentence template repeats enough for a keyword backend to exploit, and
every asked fact has same-topic distractors (another service's version, an older value,
another person's preference). Everything here is invented; no real people or private facts.

The output is deterministic for a given --seed. The test set and the dev set draw from
disjoint name pools (services, clusters, people), so they share no story facts.

Version 2 (data/cases-v2.jsonl, data/dev-v2.jsonl) is the hard set: long histories of mostly
unrelated work, and in every case one question of each of nine kinds that make memory hard
(paraphrase, coreference, split facts, aggregation, time, update chains, near-duplicates, near
misses, selective forgetting); see data/README.md. Version 3 (data/cases-v3.jsonl,
data/dev-v3.jsonl) is made by data/cases_v3.py: its evidence is a random pick among many turns
that look like it. Version 4 (data/cases-v4.jsonl, data/dev-v4.jsonl, the default) is made by
data/cases_v4.py: version 3's cases with long statements and short mentions, as in real chat.
Versions 1 to 3 stay as they were, byte for byte.

Usage:
  python data/make_cases.py                       # writes every version's test and dev files
  python data/make_cases.py --version 1 --test-cases 46 --dev-cases 12 --seed 20260302
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
import cases_v3  # noqa: E402
import cases_v4  # noqa: E402
from vocabulary import (CLUSTERS, FIRST, LAST, MONTHS, NUMBER_WORDS, REGIONS, SERVICES, STORES,  # noqa: E402
                        V2_EXTRA_SERVICES, WEEKDAYS, month_day, pool_split)

DEFAULT_SEED = 20260302
TYPES = ("single_hop", "multi_hop", "temporal", "knowledge_update", "abstention", "preference")
IDK = "I don't know"

# ---------------------------------------------------------------------------------------------
# Name pools beyond vocabulary.py's. The last slice of each pool is reserved for the dev set.
# ---------------------------------------------------------------------------------------------

ARTIFACTS = ("nightly-compact bulk-reindex orphan-sweeper cache-warmer ttl-reaper shard-rebalancer "
             "audit-rollup thumb-regen ledger-backfill quota-sync dedupe-pass snapshot-pruner "
             "geo-refresh vacuum-lite token-janitor feed-replayer sitemap-rebuild stale-lock-buster "
             "invoice-regen webhook-retrier csv-importer blob-gc index-merger price-resync "
             "schema-linter session-purger report-fanout hotkey-splitter").split()
TICKET_PREFIXES = ("INC", "OPS", "PIR", "SEV", "OUT")

EVENTS = ("load test", "DR drill", "key rotation", "schema migration", "pentest kickoff",
          "chaos game day", "capacity review", "failover rehearsal", "index rebuild",
          "dependency audit")
DEADLINE_TASKS = ("retire the v1 API of {svc}", "move {svc} off the legacy VPC",
                  "collect the SOC 2 evidence for {svc}", "get {svc} onto Java 21",
                  "switch {svc} to the new secrets manager", "finish the {svc} cost review",
                  "delete the old {svc} S3 buckets", "ship {svc} structured logging")



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
# (turns that share vocabulary with a question but do not answer it: distractors for search).
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


class Sessions:
    """What both generators' case builders share: session times (`self.times`) and a counter of
    chunk-local tags (`self._tag`), which each builder sets up in its __init__, and the numbering
    of a session's turns."""

    case_id: str
    times: list
    tag_to_id: dict
    _tag: int

    def tag(self) -> str:
        """A fresh chunk-local tag; turn ids are assigned at layout time."""
        self._tag += 1
        return f"f{self._tag}"

    def day(self, s: int) -> date:
        """The calendar date of session s."""
        return self.times[s].date()

    def session_record(self, i: int, t: datetime, turns: list[tuple]) -> dict:
        """Session i at time t as the dataset writes it: its (role, text, tag) turns numbered,
        and each tagged turn's id noted in `self.tag_to_id`."""
        out = []
        for j, (role, text, tg) in enumerate(turns, 1):
            tid = f"{self.case_id}-s{i + 1}t{j}"
            if tg:
                self.tag_to_id[tg] = tid
            out.append({"turn_id": tid, "role": role, "text": text})
        return {"session_id": f"s{i + 1}", "timestamp": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "turns": out}


class CaseBuilder(Sessions):
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
        if key in self.blocked:  # a generator bug: a value no turn may state (raised, so python -O keeps it)
            raise RuntimeError(f"{self.case_id}: {svc}'s {attr} is blocked and must not be stated")
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
            sessions.append(self.session_record(i, t, turns))
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


def check_case(case: dict) -> list[str]:
    """Every way a version 1 case breaks an authoring convention, one line each naming the
    question (empty when it keeps them all)."""
    problems = []
    texts = {t["turn_id"]: t["text"] for s in case["sessions"] for t in s["turns"]}
    for q in case["questions"]:
        qtext = q["question"].lower()
        if q["type"] != "abstention":
            if re.search(rf"(?<!\w){re.escape(q['gold_answer'].lower())}(?!\w)", qtext):
                problems.append(f"{q['qid']}: the gold {q['gold_answer']!r} is in the question")
            # All keywords co-occur in at least one evidence turn (the answer-bearing one).
            if not any(all(kw.lower() in texts[e].lower() for kw in q["meta"]["keywords"]) for e in q["evidence"]):
                problems.append(f"{q['qid']}: no evidence turn holds all its keywords {q['meta']['keywords']}")
        # Distractor: some other turn shares a content word with the question (crudely
        # stemmed to five letters, so "benchmarks" and "benchmarking" count as shared).
        qwords = {w[:5] for w in WORD.findall(qtext) if w not in STOP}
        others = [t for tid, t in texts.items() if tid not in q["evidence"]]
        if not any(qwords & {w[:5] for w in WORD.findall(t.lower())} for t in others):
            problems.append(f"{q['qid']}: no turn outside the evidence shares a word with the question")
    return problems


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
        # Raised, not asserted: `python -O` drops asserts, and --check must run these checks.
        problems = check_case(case)
        if problems:
            raise RuntimeError(f"{case_id}: the generator made a case its own checks refuse: " + "; ".join(problems))
        cases.append(case)
    return cases


# ---------------------------------------------------------------------------------------------
# Version 2: the hard set. Long histories of mostly unrelated work, and nine kinds of
# question that make memory hard in real agent use. Each question says its kind in meta.kind and
# keeps the contract's six types, so every stage reads it unchanged.
# ---------------------------------------------------------------------------------------------

V2_KINDS = ("paraphrase", "coreference", "split", "aggregation", "time", "update_chain",
            "near_duplicate", "near_miss", "forgetting")
V2_FILES = {"test": "cases-v2.jsonl", "dev": "dev-v2.jsonl"}
V2_GENERATOR = "data/make_cases.py --version 2"
# One question of each kind per case: 42 test cases give 42 questions of each kind, 378 in all.
V2_TEST_CASES, V2_DEV_CASES = 42, 8
# Nicknames: the same service named differently ("the payments DB" for ledger-pg).
ALIAS_FUNCS = ("payments", "search", "login", "invoicing", "notifications", "thumbnail", "export",
               "rate-limit", "feature-flag", "audit", "email", "geo", "reporting", "checkout",
               "upload", "pricing", "scheduling", "fraud", "loyalty", "shipping")
ALIAS_NOUNS = ("DB", "box", "backend", "worker", "service", "API")
ALIAS_SAY = ("{svc} is what everyone calls {alias}, for the newcomers.",
             "when finance says {alias} they mean {svc}.",
             "{alias} is just {svc} under its old nickname.",
             "reminder for the onboarding doc: {svc} is {alias}.")

# Paraphrase: statements and questions written with different words for the same fact.
PARA_SAY = {
    "cluster": ("{svc} sits on {v}; nothing else of ours shares it.",
                "the kubectl context you want for {svc} is {v}.",
                "{svc} got pinned to {v} by a node affinity rule.",
                "{v} hosts {svc} and a couple of batch jobs."),
    "store": ("{svc} persists everything to {v}.",
              "under the hood {svc} is just {v} plus a thin API.",
              "{svc} writes its state straight into {v}."),
    "port": ("{svc} listens on :{v}.",
             "the firewall rule for {svc} opens {v} and nothing else.",
             "health checks hit {svc} at :{v}/healthz."),
    "owner": ("{p} owns {svc} now.",
              "{svc} belongs to {p}; route reviews there.",
              "{p} runs {svc} day to day, design calls included."),
    "release": ("we cut {svc} {v} this morning and rolled it out fully.",
                "production has {svc} {v} since the last deploy.",
                "tagged {v} for {svc}; the canary looked clean."),
}
PARA_ASK = {
    "cluster": ("On which set of machines does {ref} get scheduled?",
                "What compute pool is home to {ref}?",
                "Where do the containers of {ref} live?"),
    "store": ("Which database engine and release keep the data of {ref}?",
              "What storage software, and which build of it, backs {ref}?",
              "Which DB product and version does {ref} rely on?"),
    "port": ("What number do clients dial to reach {ref}?",
             "Which socket number is {ref} bound to?",
             "To reach {ref}, which port do callers connect to?"),
    "owner": ("Whom should I ping when {ref} misbehaves?",
              "Who is accountable for {ref}?",
              "Which colleague is in charge of {ref}?"),
    "release": ("Which build of {ref} are customers hitting today?",
                "What is the currently shipped tag of {ref}?",
                "Which version number of {ref} serves users right now?"),
}
# Echoes of a paraphrase question: its own words, no value.
PARA_ECHO = {
    "cluster": ("Which set of machines {ref} gets scheduled on matters for the capacity review.",
                "The compute pool question for {ref} came up again in planning."),
    "store": ("Which database release {ref} relies on will matter for the audit.",
              "The storage software behind {ref} needs a backup review."),
    "port": ("Callers of {ref} keep asking which number to dial; we need a page for it.",
             "Which port {ref} is bound to should be in the runbook."),
    "owner": ("Whom to ping when {ref} misbehaves is not in the runbook.",
              "Nobody remembers who is accountable for {ref} when it pages at night."),
    "release": ("Customers hitting {ref} saw a banner about the next build.",
                "Which tag of {ref} is shipped should be on the status page."),
}

# Coreference: the value is stated about "that one", the service named a turn before.
COREF_INTRO = ("{first} moved {svc} behind the new ingress this morning.",
               "{first} finally took {svc} through the platform migration.",
               "{first} rebuilt the {svc} deployment from scratch last week.",
               "{first} spent all of yesterday untangling {svc}'s config.")
COREF_REPLY = ("Anything else change with it?", "Okay. Does that change anything else?",
               "Noted. Is it otherwise the same?", "Good. What should I note about it?")
COREF_SAY = {
    "cluster": ("It runs on {v} now, after the move.", "That one is on {v} since then.",
                "The one {first} moved is scheduled on {v} these days."),
    "store": ("It keeps its data in {v} now.", "That service writes to {v} since the rebuild.",
              "The one {first} touched is backed by {v}."),
    "port": ("It listens on {v} now, not the old port.", "That one binds {v} since the change.",
             "The service {first} moved answers on port {v}."),
    "release": ("It's on {v} after that.", "That one went out as {v}.",
                "The build {first} shipped for it is {v}."),
}
COREF_ASK = {
    "cluster": ("Which cluster does {svc} run on?", "Which cluster is the service {first} {verb} on?"),
    "store": ("What database and version does {svc} use?",
              "What database and version does the service {first} {verb} use?"),
    "port": ("Which port does {svc} listen on?", "Which port does the service {first} {verb} listen on?"),
    "release": ("Which version of {svc} is live?", "Which version of the service {first} {verb} is live?"),
}
COREF_VERB = {COREF_INTRO[0]: "moved behind the new ingress", COREF_INTRO[1]: "took through the platform migration",
              COREF_INTRO[2]: "rebuilt", COREF_INTRO[3]: "untangled"}

# Split facts: the answer needs two turns from different sessions.
SPLIT_SUM_SAY = ("reserved {n} vCPUs for {svc} in {r}.", "{svc} got {n} vCPUs of capacity in {r}.",
                 "capacity ticket approved: {n} vCPUs for {svc}, region {r}.")
SPLIT_SUM_ASK = ("How many vCPUs are reserved for {svc} across all regions?",
                 "In total, how many vCPUs does {svc} have reserved?")
SPLIT_ENGINE_SAY = ("{svc} runs on {kind}, and has since the rewrite.",
                    "the {svc} team went with {kind} years ago.")
SPLIT_VERSION_SAY = ("patched the {svc} database last night; it reports {ver} now.",
                     "the {svc} datastore is on minor release {ver} after maintenance.")
SPLIT_FREEZE_START = ("{svc} goes into a change freeze on {d}.",
                      "release management put {svc} on the freeze calendar starting {d}.")
SPLIT_FREEZE_LEN = ("the {svc} freeze will last {dur}, I finally got an answer.",
                    "length of the {svc} freeze: {dur}.")
SQUADS = ("Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Grove", "Harbor", "Ion", "Juniper")
SPLIT_SQUAD_SAY = ("{svc} is owned by whoever leads the {squad} squad.",
                   "ownership of {svc} follows the {squad} squad lead, whoever that is.")
SPLIT_LEAD_SAY = ("{p} is the {squad} squad lead now.", "{p} took over as lead of the {squad} squad.")

# Aggregation across sessions.
PAGE_SAY = ("{svc} paged the on-call again overnight.", "another night page from {svc}, sigh.",
            "{svc} woke up the on-call at 3am, again.", "overnight page: {svc}, same alert as before.",
            "{svc} paged us in the night once more.", "the on-call got a night page from {svc}.")
PAGE_ASK = ("How many times have {svc} alerts woken somebody up at night?",
            "How often did {svc} wake up whoever was on call at night?")
ROLLOUTS = ("the new secrets manager", "the new tracing stack", "the new CI runners",
            "the new log pipeline", "the service mesh")
ROLLOUT_SAY = ("{svc} is on {thing} as of today.", "moved {svc} onto {thing} today.",
               "{svc} switched to {thing} this morning, no issues.")
ROLLOUT_ASK = {"first": "Which service was the first to move onto {thing}?",
               "last": "Which service was the last to move onto {thing}?",
               "after": "Which service moved onto {thing} right after {prev}?"}

# Time, against the session's own date.
TIME_DONE = ("rollback", "data backfill", "certificate renewal", "index rebuild", "schema migration",
             "failover test")
# The same work as a question names it: people rarely ask in the words they used.
TIME_ASKED = {"rollback": "revert to the previous build", "data backfill": "reload of historical records",
              "certificate renewal": "TLS cert rotation", "index rebuild": "reindexing",
              "schema migration": "database structure change", "failover test": "switchover drill"}
TIME_PAST = ("we did the {svc} {e} {rel}.", "the {svc} {e} happened {rel}.",
             "{first} ran the {svc} {e} {rel}.")
TIME_FUTURE = ("the {svc} {e} is booked for {rel}.", "we're doing the {svc} {e} {rel}.")
TIME_ASK = ("On what date did {svc} get its {e}?", "Which date was the {e} for {svc}?")
TIME_ASK_FUTURE = ("On what date will {svc} get its {e}?", "Which date is the {e} for {svc} planned for?")
SPRINT_SAY = ("our sprints are {n} weeks long, always starting on a Monday.",
              "reminder: a sprint here is {n} weeks.")
DURATION_START = ("started the {svc} {e} today.", "kicked off the {svc} {e} this morning.")
DURATION_END = ("the {svc} {e} finished today.", "the {svc} {e} is done as of today.")
DURATION_ASK = ("How many days did the {e} for {svc} take from start to finish?",
                "How long, in days, did the {e} of {svc} run?")

# Near-duplicates: one service in two regions, two people with one surname.
TWIN_SAY = {"release": ("{svc} in {r} is on {v}.", "the {r} deployment of {svc} runs {v}."),
            "port": ("{svc} in {r} listens on {v}.", "in {r}, {svc} binds port {v}."),
            "cluster": ("{svc} in {r} is scheduled on {v}.", "the {r} copy of {svc} lives on {v}.")}
TWIN_ASK = {"release": "Which version of {svc} runs in {r}?",
            "port": "Which port does {svc} listen on in {r}?",
            "cluster": "Which cluster hosts {svc} in {r}?"}
OWNS_ASK = ("Which service does {p} own?", "What service is {p} the owner of?")

# Near misses: asked about something close to what was said, never itself said.
NEAR_SUFFIXES = ("relay", "proxy", "worker", "bridge", "router", "cache", "gateway", "sync", "lite")

# Selective forgetting.
CITIES = ("Lisbon", "Porto", "Tallinn", "Krakow", "Valencia", "Ghent", "Bergen", "Ljubljana", "Turku",
          "Cluj", "Aarhus", "Bilbao")
OFFSITE_SAY = ("the team offsite is in {city} the week of {d}, book nothing else.",
               "offsite news: {city}, the week of {d}.")
OFFSITE_RETRACT = ("scratch what I said about the {city} offsite; it's off and nothing replaces it.",
                   "forget the {city} offsite, it was cancelled. No new plan yet.")
OFFSITE_ASK = ("Where is the team offsite going to be?", "In which city is the team offsite?")
PRIVATE = ("dentist appointment", "visa interview", "physio session", "parent-teacher meeting")
PRIVATE_SAY = ("my {thing} is on {d}, so I'm out that morning.",
               "heads up, I have a {thing} on {d}.")
PRIVATE_RETRACT = ("please forget what I told you about my {thing}; that's private.",
                   "delete the note about my {thing}, I shouldn't have shared it.")
PRIVATE_ASK = ("When is the user's {thing}?", "On what date is the user's {thing}?")
PORT_RETRACT = ("forget the port I gave you for {svc}, I mixed it up with another service; nobody knows the real one yet.",
                "scratch the {svc} port from before, it was wrong and I don't have the right one.")
OWNER_RETRACT = ("scratch what I said about who owns {svc}: it's {new}, I had it wrong.",
                 "forget my note on the {svc} owner, {old} was a mistake; {new} owns it.")

# Unrelated work: the bulk of a long history. Slots are filled per use, so lines rarely repeat.
UNRELATED = (
    "Interview loop for the {role} role today: {first} and I did the system design round, {verdict}.",
    "Budget review: we're {n} percent over on {line} this quarter, finance wants a plan by {weekday}.",
    "The {tool} trial ends {weekday}; {first} thinks it's worth paying for, I'm not convinced.",
    "Drafting the {doc} for the {project} project, it's {n} pages and still missing the rollout section.",
    "{first} is giving a talk on {topic} at the guild meeting, I said I'd review the slides.",
    "Spent the morning in the {project} planning session, mostly arguing about scope.",
    "Vendor call with {vendor} about their {product}; pricing is per seat, which doesn't fit us.",
    "{first} asked me to mentor the new grad on the {team} team, starting next sprint.",
    "The {team} team wants our input on their {topic} proposal by {weekday}.",
    "I'm reviewing {first}'s design doc for {project}; the data model section needs another pass.",
    "All-hands was about {topic} again. Two slides, forty minutes.",
    "{first} and I paired on a {topic} bug in the {project} prototype, no luck yet.",
    "Hiring update: {n} candidates in the pipeline for the {role} role, two onsites next week.",
    "The {project} demo slipped to {weekday} because the {team} team needs another day.",
    "Reading up on {topic} for the {project} project; the docs are thin.",
    "I owe {first} feedback on the {doc} for {project}, that's my afternoon.",
    "Our {tool} licences renew next month, somebody has to count seats.",
    "Cleaning up stale tickets in the {project} board, closed {n} today.",
    "{first} wants to move the {team} sync to {weekday}, fine by me.",
    "The {topic} working group met, we agreed on nothing but the next meeting.",
    "Updated the {doc} template, the old one still said {tool} everywhere.",
    "{first} shared a good article on {topic}; worth reading before the {project} kickoff.",
    "Roadmap draft for {project}: three themes, {n} epics, no dates yet.",
    "The {vendor} support ticket about {product} is still open after {n} days.",
    "Performance reviews are due {weekday}, I have {n} to write.",
)
UNRELATED_FILL = {
    "role": ("staff engineer", "SRE", "data engineer", "frontend", "engineering manager", "security engineer"),
    "verdict": ("strong yes from both of us", "mixed signals", "a polite no", "we want a second round"),
    "line": ("cloud storage", "observability", "contractors", "travel", "CI minutes", "licences"),
    "tool": ("Notion", "Linear", "Backstage", "Sourcegraph", "Grafana Cloud", "Retool", "Miro"),
    "doc": ("one-pager", "RFC", "design doc", "runbook", "postmortem template", "roadmap memo"),
    "project": ("Atlas", "Northstar", "Bluebird", "Keystone", "Lighthouse", "Tidewater", "Foxglove"),
    "topic": ("event sourcing", "cost allocation", "accessibility", "API versioning", "data retention",
              "zero trust", "flaky tests", "incident reviews", "SLOs", "schema evolution"),
    "vendor": ("Acme Cloud", "Northwind", "Globex", "Initech", "Umbrella Data"),
    "product": ("managed Kafka", "log archive", "feature flag service", "WAF", "secrets vault"),
    "team": ("mobile", "growth", "data platform", "identity", "billing", "search relevance"),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
}
UNRELATED_QA = (
    ("How do I explain error budgets to a product manager in two sentences?",
     "An error budget is how much unreliability the SLO allows in a period. While budget remains, ship; when it runs out, reliability work comes first."),
    ("What's a good agenda for a 30-minute design review?",
     "Five minutes of context, fifteen on the riskiest decision, five on alternatives, five on next steps and owners."),
    ("Is it worth adding a cache in front of a service that is already fast?",
     "Usually not; a cache adds invalidation bugs. Measure the p99 and the load first, and cache only when a dependency is the bottleneck."),
    ("How should I structure a one-on-one with a new report?",
     "Let them set most of the agenda, keep a shared doc, and end with one concrete follow-up each."),
    ("What's the difference between a mutex and a semaphore, briefly?",
     "A mutex lets one holder in and is released by that holder; a semaphore counts permits, so several can enter and any thread may release."),
    ("Any tips for writing a good commit message?",
     "A short imperative subject, a blank line, then why the change was made and what it affects."),
    ("How do I say no to a meeting without sounding rude?",
     "Thank them, say what you're focused on, and offer an async alternative such as comments on the doc."),
    ("What does idempotent mean for an HTTP endpoint?",
     "Calling it several times with the same input has the same effect as calling it once; PUT and DELETE should be, POST usually isn't."),
    ("How long should a postmortem meeting be?",
     "Forty-five minutes is plenty if the timeline is written beforehand; the meeting is for the why and the actions."),
    ("Can you summarise what a feature flag debt problem looks like?",
     "Flags that nobody removes: code paths multiply, tests miss combinations, and nobody knows which flags are still read."),
    ("What's a reasonable way to estimate a migration?",
     "Split it into the riskiest first step, a repeatable per-unit step and a cleanup; time the first units and extrapolate with a buffer."),
    ("How do I make a dashboard people actually read?",
     "Start from the questions on-call asks, put the answer to the most common one top left, and delete panels nobody opened in a month."),
    ("What should go into a handover document when I go on leave?",
     "Open work with its state, who decides what while you're away, and where the credentials and runbooks are."),
    ("Is pair programming worth it for senior engineers?",
     "For tricky or unfamiliar code, yes; for routine changes it's usually slower than a good review."),
    ("What's the point of a blameless postmortem?",
     "People report what really happened when they aren't punished for it, so the fixes address the system rather than a person."),
    ("How do I keep a long Slack thread from derailing?",
     "Summarise the decision so far in one message, name the open question, and move the rest to a doc or a call."),
)


# Remarks that name a service a question is about without stating anything asked.
PASSING_MENTIONS = 4

# How people ask an assistant in the middle of other work: the question inside a sentence about
# why it is asked. The frame's words are the common ones that fill unrelated turns too.
QUESTION_FRAMES = (
    "Before the review this afternoon, can you tell me: {q}",
    "I was asked this in the standup and drew a blank, so: {q}",
    "For the handover doc that is due today: {q}",
    "One thing I need for the planning meeting: {q}",
    "Remind me, because it is not in my notes: {q}",
    "Sorry if I asked this before. {q}",
    "{q} I need it for a message to the team.",
    "Quick one while I am writing the weekly update: {q}",
    "{first} is asking me and I don't want to guess: {q}",
    "I should know this by now, but: {q}",
    "Can you check your memory for me? {q}",
    "Before I reply to the thread about it: {q}",
)


def unframe(question: str) -> str:
    """The question inside its frame (QUESTION_FRAMES), as its kind wrote it."""
    for frame in QUESTION_FRAMES:
        pattern = re.escape(frame).replace(re.escape("{q}"), "(?P<q>.+)").replace(re.escape("{first}"), r"\w+")
        m = re.fullmatch(pattern, question)
        if m:
            return m.group("q")
    raise ValueError(f"no frame of QUESTION_FRAMES matches {question!r}")


@dataclass
class HardQuestion:
    """One version 2 question before turn ids are known (evidence and marks are chunk tags)."""
    kind: str
    qtype: str
    text: str
    gold: str
    evidence: list
    keywords: list
    superseded: list = field(default_factory=list)
    outdated: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    echoes: list = field(default_factory=list)  # remarks on the same topic that state no value


def content_stems(text: str, drop: set) -> set:
    """Content words of a text, stemmed to five letters, without stop words and without the
    words of `drop` (an entity's own tokens)."""
    return {w[:5] for w in WORD.findall(text.lower()) if w not in STOP and w not in drop and not w.isdigit()}


def previous_weekday(d: date, weekday: int) -> date:
    """The latest date strictly before d that falls on weekday (0 = Monday)."""
    back = (d.weekday() - weekday - 1) % 7 + 1
    return d - timedelta(days=back)


def next_weekday(d: date, weekday: int) -> date:
    """The first date strictly after d that falls on weekday."""
    ahead = (weekday - d.weekday() - 1) % 7 + 1
    return d + timedelta(days=ahead)


class HardCase(Sessions):
    """One version 2 case: a long history of mostly unrelated work around a few facts that are
    hard to retrieve or to use, and one question of each kind asked after it."""

    def __init__(self, rng: random.Random, case_id: str, pools: dict, kinds: list[str]) -> None:
        r = rng
        self.rng, self.case_id, self.kinds = rng, case_id, kinds
        n_sessions = r.randint(14, 20)
        self.services = r.sample(pools["services"], 20)
        firsts = r.sample(pools["first"], 14)
        lasts = r.sample(pools["last"], 12)
        # Two pairs of people share a surname (near-duplicates).
        self.people = [f"{f} {l}" for f, l in zip(firsts[:12], lasts)]
        self.people += [f"{firsts[12]} {lasts[0]}", f"{firsts[13]} {lasts[1]}"]
        self.clusters = [f"{w}-{n}" for w, n in zip(r.sample(pools["cluster_words"], 28),
                                                     r.sample(pools["cluster_numbers"], 28))]
        funcs = r.sample(ALIAS_FUNCS, len(self.services))
        kinds_st = r.sample(STORES, len(STORES))
        self.world, self.alias = {}, {}
        for i, svc in enumerate(self.services):
            kind, ver = kinds_st[i % len(kinds_st)]
            self.world[svc] = {
                "owner": self.people[i % 12], "cluster": self.clusters[i], "store": f"{kind} {ver(r)}",
                "store_kind": kind, "release": f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 20)}",
                "port": str(r.choice([p for p in range(7001, 9990) if p % 1000 and p not in (8080, 8443, 9090)])),
            }
            self.alias[svc] = f"the {funcs[i]} {r.choice(ALIAS_NOUNS)}"
        self.spare_clusters = self.clusters[len(self.services):]
        # Sessions on working days, one to six days apart.
        start = datetime(2025, 9, 1, tzinfo=timezone.utc) + timedelta(days=r.randint(0, 240))
        self.times, t = [], start
        for _ in range(n_sessions):
            while t.weekday() > 4:
                t += timedelta(days=1)
            self.times.append(t.replace(hour=r.randint(8, 17), minute=r.choice((0, 10, 20, 30, 40, 50))))
            t += timedelta(days=r.randint(1, 6))
        self.asked = (self.times[-1] + timedelta(days=r.randint(1, 6))).replace(hour=9, minute=0)
        self.chunks: list[Chunk] = []
        self.questions: list[HardQuestion] = []
        self.turn_meta: dict = {}     # tag -> {"retracted_by": tag}
        self.free = list(self.services)  # services no question has used yet
        self.stated: dict = {}        # (svc, attr) -> tag of the one statement of a background value
        self.mentioned: set = set()   # services some question is about (passing mentions later)
        self.prefs_used: set = set()
        self.sprint: tuple | None = None
        self._tag = 0
        self.decks: dict = {}

    # -- helpers ------------------------------------------------------------------------------

    def last(self) -> int:
        """The index of the last session."""
        return len(self.times) - 1

    def sessions(self, n: int, lo: int = 0, hi: int | None = None) -> list[int]:
        """n distinct session indexes in [lo, hi], ascending."""
        hi = self.last() if hi is None else hi
        return sorted(self.rng.sample(range(lo, hi + 1), n))

    def any_session(self) -> int:
        """A random session index."""
        return self.rng.randint(0, self.last())

    def take(self) -> str:
        """A service no question has used yet."""
        svc = self.free.pop(self.rng.randrange(len(self.free)))
        self.mentioned.add(svc)
        return svc

    def first(self, person: str) -> str:
        """A person's first name."""
        return person.split()[0]

    def opener(self, text: str) -> str:
        """A user statement with an optional opener; service names keep their lower case."""
        prefix = self.rng.choice(OPENERS)
        if prefix:
            return prefix + text
        return text if re.split(r"[\s':]", text, maxsplit=1)[0] in self.services else cap(text)

    def fact(self, session: int, text: str, ack: bool = True) -> str:
        """One user statement (and maybe an acknowledgement) in a session; returns its tag."""
        tg = self.tag()
        turns = [("user", self.opener(text), tg)]
        if ack and self.rng.random() < 0.6:
            turns.append(("assistant", self.rng.choice(ACKS), None))
        self.chunks.append(Chunk(session, turns))
        return tg

    def remark(self, session: int, text: str) -> None:
        """A user remark that states nothing a question asks."""
        first = re.split(r"[\s':]", text, maxsplit=1)[0]
        self.chunks.append(Chunk(session, [("user", text if first in self.services else cap(text), None)]))

    def background(self, attr: str, n: int, exclude: tuple = ()) -> None:
        """State attr for n services no question is about: same-topic distractors with values
        that are true in this case's world."""
        pool = [s for s in self.services if s not in self.mentioned and s not in exclude]
        bank = {"owner": OWNER_SAY, "cluster": CLUSTER_SAY, "store": STORE_SAY, "release": RELEASE_SAY,
                "port": PORT_SAY}[attr]
        for svc in self.rng.sample(pool, min(n, len(pool))):
            if (svc, attr) not in self.stated:
                v = self.world[svc][attr]
                self.stated[(svc, attr)] = self.fact(self.any_session(), self.rng.choice(bank).format(svc=svc, p=v, v=v))

    def ask(self, q: HardQuestion) -> bool:
        """Keep a question; always True, so makers can end with `return self.ask(...)`."""
        self.questions.append(q)
        return True

    # -- the nine kinds; each adds its turns and one question ---------------------------------

    def q_paraphrase(self) -> bool:
        r = self.rng
        svc = self.take()
        attr = r.choice(("cluster", "store", "port", "owner", "release"))
        v = self.world[svc][attr]
        ref = self.alias[svc] if r.random() < 0.5 else svc
        drop = set(WORD.findall(svc.lower())) | set(WORD.findall(ref.lower())) | set(WORD.findall(v.lower()))
        pairs = [(say, ask) for say in PARA_SAY[attr] for ask in PARA_ASK[attr]
                 if not content_stems(say.format(svc=svc, v=v, p=v), drop) & content_stems(ask.format(ref=ref), drop)]
        say, ask = r.choice(pairs)
        s1, s2 = self.sessions(2)
        ev = [self.fact(s2, say.format(svc=svc, v=v, p=v))]
        if ref != svc:
            ev.append(self.fact(s1, r.choice(ALIAS_SAY).format(svc=svc, alias=ref)))
        self.background(attr, 3)
        echoes = [e.format(ref=ref) for e in PARA_ECHO[attr]]
        return self.ask(HardQuestion("paraphrase", "single_hop", ask.format(ref=ref), v, ev, [svc, v],
                                     meta={"ref": ref}, echoes=echoes))

    def q_coreference(self) -> bool:
        r = self.rng
        svc = self.take()
        attr = r.choice(("cluster", "store", "port", "release"))
        v = self.world[svc][attr]
        person = r.choice(self.people)
        intro = r.choice(COREF_INTRO)
        t1, t3 = self.tag(), self.tag()
        s = self.any_session()
        self.chunks.append(Chunk(s, [("user", self.opener(intro.format(first=self.first(person), svc=svc)), t1),
                                     ("assistant", r.choice(COREF_REPLY), None),
                                     ("user", r.choice(COREF_SAY[attr]).format(v=v, first=self.first(person)), t3)]))
        # Another service moved by someone else, its value stated by name: the distractor.
        other = next(p for p in r.sample(self.people, len(self.people)) if self.first(p) != self.first(person))
        decoy = self.take()
        self.fact(self.any_session(), r.choice(COREF_INTRO).format(first=self.first(other), svc=decoy))
        self.background(attr, 2)
        ask = r.choice(COREF_ASK[attr]).format(svc=svc, first=self.first(person), verb=COREF_VERB[intro])
        echoes = [f"Still need to write down what changed when {self.first(person)} worked on {svc}."]
        return self.ask(HardQuestion("coreference", "multi_hop", ask, v, [t1, t3], [v],
                                     meta={"antecedent": svc}, echoes=echoes))

    def q_split(self) -> bool:
        r = self.rng
        svc = self.take()
        sub = r.choice(("sum", "store", "freeze", "squad"))
        s1, s2 = self.sessions(2)
        if sub == "sum":
            r1, r2 = r.sample(REGIONS, 2)
            a, b = r.randint(6, 40), r.randint(6, 40)
            ev = [self.fact(s1, r.choice(SPLIT_SUM_SAY).format(n=a, svc=svc, r=r1)),
                  self.fact(s2, r.choice(SPLIT_SUM_SAY).format(n=b, svc=svc, r=r2))]
            decoy = self.take()
            self.fact(self.any_session(), r.choice(SPLIT_SUM_SAY).format(n=r.randint(6, 40), svc=decoy, r=r1))
            q = r.choice(SPLIT_SUM_ASK).format(svc=svc)
            gold, kw, derivation = str(a + b), [svc, str(b)], {"op": "sum", "values": [a, b]}
        elif sub == "store":
            kind, ver = self.world[svc]["store"].split(" ", 1)
            ev = [self.fact(s1, r.choice(SPLIT_ENGINE_SAY).format(svc=svc, kind=kind)),
                  self.fact(s2, r.choice(SPLIT_VERSION_SAY).format(svc=svc, ver=ver))]
            self.background("store", 2)
            q = r.choice(STORE_ASK).format(svc=svc)
            gold, kw, derivation = f"{kind} {ver}", [svc, ver], {"op": "join", "parts": [kind, ver]}
        elif sub == "freeze":
            start = self.day(s1) + timedelta(days=r.randint(3, 25))
            n = r.choice((5, 7, 9, 10, 12, 14, 21))
            said = say_date(r, start)
            ev = [self.fact(s1, r.choice(SPLIT_FREEZE_START).format(svc=svc, d=said)),
                  self.fact(s2, r.choice(SPLIT_FREEZE_LEN).format(svc=svc, dur=say_days(r, n)))]
            decoy = self.take()
            self.fact(self.any_session(), r.choice(FREEZE_SAY).format(
                svc=decoy, d=say_date(r, start + timedelta(days=r.choice((-4, 3, 6)))), dur=say_days(r, r.choice((7, 14)))))
            q = r.choice(FREEZE_ASK).format(svc=svc)
            gold, kw = month_day(start + timedelta(days=n)), [svc, said]
            derivation = {"op": "date_plus", "start": start.isoformat(), "days": n}
        else:
            squad, other_squad = r.sample(SQUADS, 2)
            lead, other_lead = r.sample(self.people, 2)
            ev = [self.fact(s1, r.choice(SPLIT_SQUAD_SAY).format(svc=svc, squad=squad)),
                  self.fact(s2, r.choice(SPLIT_LEAD_SAY).format(p=lead, squad=squad))]
            self.fact(self.any_session(), r.choice(SPLIT_LEAD_SAY).format(p=other_lead, squad=other_squad))
            q = r.choice(OWNER_ASK).format(svc=svc)
            gold, kw, derivation = lead, [lead, squad], {"op": "join", "parts": [lead]}
        return self.ask(HardQuestion("split", "multi_hop", q, gold, ev, kw, meta={"derivation": derivation}))

    def q_aggregation(self) -> bool:
        r = self.rng
        if r.random() < 0.4:
            svc = self.take()
            n = r.randint(3, 6)
            lines = r.sample(PAGE_SAY, n)
            ev = [self.fact(s, line.format(svc=svc), ack=False) for s, line in zip(self.sessions(n), lines)]
            decoy = self.take()
            for s, line in zip(self.sessions(2), r.sample(PAGE_SAY, 2)):
                self.fact(s, line.format(svc=decoy), ack=False)
            q = r.choice(PAGE_ASK).format(svc=svc)
            return self.ask(HardQuestion("aggregation", "multi_hop", q, str(n), ev, [svc],
                                         meta={"derivation": {"op": "count", "n": n}}))
        thing = r.choice(ROLLOUTS)
        movers = [self.take() for _ in range(r.randint(3, 4))]
        ev = [self.fact(s, r.choice(ROLLOUT_SAY).format(svc=svc, thing=thing))
              for s, svc in zip(self.sessions(len(movers)), movers)]
        how = r.choice(("first", "last", "after"))
        at = {"first": 0, "last": len(movers) - 1, "after": r.randint(1, len(movers) - 1)}[how]
        q = ROLLOUT_ASK[how].format(thing=thing, prev=movers[at - 1])
        self.remark(self.any_session(), f"Which team goes next onto {thing} is still being decided.")
        return self.ask(HardQuestion("aggregation", "multi_hop", q, movers[at], ev, [movers[at]],
                                     meta={"derivation": {"op": "order", "sequence": movers, "pick": how}}))

    def q_time(self) -> bool:
        r = self.rng
        svc = self.take()
        e = r.choice(TIME_DONE)
        sub = r.choice(("weekday", "ago", "sprint", "duration", "coming"))
        if sub == "sprint" and self.last() < 3:
            sub = "ago"
        if sub == "duration":
            s1, s2 = self.sessions(2)
            ev = [self.fact(s1, r.choice(DURATION_START).format(svc=svc, e=e)),
                  self.fact(s2, r.choice(DURATION_END).format(svc=svc, e=e))]
            n = (self.day(s2) - self.day(s1)).days
            q = r.choice(DURATION_ASK).format(svc=svc, e=TIME_ASKED[e])
            return self.ask(HardQuestion("time", "temporal", q, f"{n} days", ev, [svc, e],
                                         meta={"derivation": {"op": "days_between", "sessions": 2}}))
        s = self.any_session() if sub != "sprint" else r.randint(2, self.last())
        d = self.day(s)
        ev = []
        if sub == "weekday":
            wd = r.choice([w for w in range(5) if w != d.weekday()])
            target, rel = previous_weekday(d, wd), f"this past {WEEKDAYS[wd]}"
        elif sub == "coming":
            wd = r.choice([w for w in range(5) if w != d.weekday()])
            target, rel = next_weekday(d, wd), f"this coming {WEEKDAYS[wd]}"
        elif sub == "ago":
            n = r.choice((1, 2, 3, 4, 5, 10))
            target = d - timedelta(days=n)
            rel = {1: "yesterday", 2: "the day before yesterday"}[n] if n < 3 else f"{NUMBER_WORDS[n]} days ago"
        else:
            if self.sprint is None:
                weeks = r.choice((2, 3))
                self.sprint = (weeks, self.fact(r.randint(0, s), r.choice(SPRINT_SAY).format(n=NUMBER_WORDS[weeks])))
            weeks, sprint_tag = self.sprint
            ev.append(sprint_tag)
            target, rel = d - timedelta(days=2 * 7 * weeks), "exactly two sprints ago today"
        say = TIME_FUTURE if sub == "coming" else TIME_PAST
        ev.insert(0, self.fact(s, r.choice(say).format(svc=svc, e=e, rel=rel, first=self.first(r.choice(self.people)))))
        # The same work on another service on another day, and echoes of the topic.
        decoy = self.take()
        s2 = self.any_session()
        self.fact(s2, r.choice(TIME_PAST).format(svc=decoy, e=e, rel="yesterday", first=self.first(r.choice(self.people))))
        q = r.choice(TIME_ASK_FUTURE if sub == "coming" else TIME_ASK).format(svc=svc, e=TIME_ASKED[e])
        echoes = [f"The write-up for the {svc} {e} is still missing."]
        return self.ask(HardQuestion("time", "temporal", q, month_day(target), ev, [svc, e],
                                     meta={"derivation": {"op": "relative_date", "phrase": rel,
                                                          "session_date": d.isoformat()}}, echoes=echoes))

    def q_update_chain(self) -> bool:
        r = self.rng
        depth = r.randint(3, 4)
        points = self.sessions(depth)
        if r.random() < 0.3:
            free = [p for p in PREFS if p[0] not in self.prefs_used and len(p[1]) >= 5]
            key, options, user_say, col_say, q_user, _ = r.choice(free)
            self.prefs_used.add(key)
            values = r.sample(list(options), 3)
            if depth == 4:
                values.append(values[0])  # drifting back to where it started
            tags = [self.fact(points[0], r.choice(user_say).format(v=values[0][0]))]
            for s, (old, new) in zip(points[1:], zip(values, values[1:])):
                tags.append(self.fact(s, r.choice(PREF_CHANGE).format(topic=PREF_TOPICS[key], old=old[0], new=new[0])))
            self.fact(self.any_session(), r.choice(col_say).format(p=r.choice(self.people), v=values[1][0]))
            gold = values[-1][1]
            outdated = sorted({g for _, g in values[:-1]} - {gold})
            return self.ask(HardQuestion("update_chain", "preference", q_user, gold, [tags[-1]], [gold],
                                         tags[:-1], outdated, meta={"depth": depth}))
        svc = self.take()
        attr = r.choice(("owner", "cluster", "release"))
        if attr == "owner":
            chain = r.sample(self.people, depth)
            tags = [self.fact(points[0], r.choice(OWNER_SAY).format(svc=svc, p=chain[0]))]
            tags += [self.fact(s, r.choice(OWNER_HANDOVER).format(svc=svc, old=o, new=n))
                     for s, o, n in zip(points[1:], chain, chain[1:])]
        elif attr == "cluster":
            chain = [self.spare_clusters.pop() for _ in range(depth)]
            tags = [self.fact(points[0], r.choice(CLUSTER_SAY).format(svc=svc, v=chain[0]))]
            tags += [self.fact(s, r.choice(CLUSTER_MOVE).format(svc=svc, old=o, new=n))
                     for s, o, n in zip(points[1:], chain, chain[1:])]
        else:
            maj, mi = r.randint(1, 6), r.randint(0, 20)
            chain = []
            for _ in range(depth):
                mi += r.randint(1, 3)
                chain.append(f"{maj}.{mi}.{r.randint(0, 12)}")
            tags = [self.fact(points[0], r.choice(RELEASE_SAY).format(svc=svc, v=chain[0]))]
            tags += [self.fact(s, r.choice(RELEASE_BUMP).format(svc=svc, old=o, new=n))
                     for s, o, n in zip(points[1:], chain, chain[1:])]
        self.background(attr, 2)
        ask = {"owner": OWNER_ASK, "cluster": CLUSTER_ASK, "release": RELEASE_ASK}[attr]
        return self.ask(HardQuestion("update_chain", "knowledge_update", r.choice(ask).format(svc=svc), chain[-1],
                                     [tags[-1]], [svc, chain[-1]], tags[:-1], chain[:-1], meta={"depth": depth},
                                     echoes=[r.choice(ECHO[attr]).format(svc=svc)]))

    def q_near_duplicate(self) -> bool:
        r = self.rng
        if r.random() < 0.6:
            svc = self.take()
            attr = r.choice(("release", "port", "cluster"))
            r1, r2 = r.sample(REGIONS, 2)
            v1 = self.world[svc][attr]
            if attr == "release":
                maj, mi, pa = v1.split(".")
                v2 = f"{maj}.{int(mi) + r.randint(1, 3)}.{pa}"
            elif attr == "port":
                v2 = str(int(v1) + r.choice((1, 2, 10, 100)))
            else:
                v2 = self.spare_clusters.pop()
            s1, s2 = self.sessions(2)
            if r.random() < 0.5:
                s1, s2 = s2, s1
            self.fact(s1, r.choice(TWIN_SAY[attr]).format(svc=svc, r=r1, v=v1))
            tg = self.fact(s2, r.choice(TWIN_SAY[attr]).format(svc=svc, r=r2, v=v2))
            return self.ask(HardQuestion("near_duplicate", "single_hop", TWIN_ASK[attr].format(svc=svc, r=r2), v2,
                                         [tg], [svc, v2], meta={"distractor_answers": [v1], "twin": r1}))
        # Two people with one surname, each owning one service.
        a, b = (self.people[0], self.people[12]) if r.random() < 0.5 else (self.people[1], self.people[13])
        if r.random() < 0.5:
            a, b = b, a
        mine, theirs = self.take(), self.take()
        tg = self.fact(self.any_session(), r.choice(OWNER_SAY).format(svc=mine, p=a))
        self.fact(self.any_session(), r.choice(OWNER_SAY).format(svc=theirs, p=b))
        return self.ask(HardQuestion("near_duplicate", "single_hop", r.choice(OWNS_ASK).format(p=a), mine, [tg],
                                     [a, mine], meta={"distractor_answers": [theirs], "twin": b}))

    def q_near_miss(self) -> bool:
        r = self.rng
        sub = r.choice(("region", "person", "service", "event"))
        if sub == "region":
            svc = self.take()
            r1, r2 = r.sample(REGIONS, 2)
            attr = r.choice(("release", "port"))
            self.fact(self.any_session(), r.choice(TWIN_SAY[attr]).format(svc=svc, r=r1, v=self.world[svc][attr]))
            q, near, asked = TWIN_ASK[attr].format(svc=svc, r=r2), [svc, r1], [svc, r2]
        elif sub == "person":
            # A first name and a surname of two different people: a name nobody in the case has.
            firsts = {self.first(p) for p in self.people}
            lasts = {p.split()[1] for p in self.people}
            names = {p for p in self.people}
            cands = sorted(f"{f} {l}" for f in firsts for l in lasts if f"{f} {l}" not in names)
            ghost = r.choice(cands)
            svc = self.take()
            near = next(p for p in self.people if p.split()[1] == ghost.split()[1])
            self.fact(self.any_session(), r.choice(OWNER_SAY).format(svc=svc, p=near))
            q, near, asked = r.choice(OWNS_ASK).format(p=ghost), [near], [ghost]
        elif sub == "service":
            svc = self.take()
            head = svc.split("-")[0]
            ghost = next(f"{head}-{s}" for s in r.sample(NEAR_SUFFIXES, len(NEAR_SUFFIXES))
                         if f"{head}-{s}" not in self.services)
            attr = r.choice(("owner", "cluster", "port"))
            v = self.world[svc][attr]
            bank = {"owner": OWNER_SAY, "cluster": CLUSTER_SAY, "port": PORT_SAY}[attr]
            self.fact(self.any_session(), r.choice(bank).format(svc=svc, p=v, v=v))
            ask = {"owner": OWNER_ASK, "cluster": CLUSTER_ASK, "port": PORT_ASK}[attr]
            q, near, asked = r.choice(ask).format(svc=ghost), [svc], [ghost]
        else:
            svc = self.take()
            e, ghost_e = r.sample(TIME_DONE, 2)
            s = self.any_session()
            self.fact(s, r.choice(TIME_FUTURE).format(svc=svc, e=e, rel="this coming Friday" if self.day(s).weekday() < 4
                                                      else "this coming Monday"))
            q, near, asked = r.choice(TIME_ASK_FUTURE).format(svc=svc, e=TIME_ASKED[ghost_e]), [svc, e], [svc, ghost_e]
        return self.ask(HardQuestion("near_miss", "abstention", q, IDK, [], [],
                                     meta={"near_miss": near, "never_said": asked}))

    def q_forgetting(self) -> bool:
        r = self.rng
        sub = r.choice(("offsite", "private", "port", "owner"))
        s1, s2 = self.sessions(2)
        if sub == "offsite":
            city = r.choice(CITIES)
            d = self.day(s1) + timedelta(days=r.randint(20, 60))
            said = f"{MONTHS[d.month - 1]} {d.day}"
            t1 = self.fact(s1, r.choice(OFFSITE_SAY).format(city=city, d=said))
            t2 = self.fact(s2, r.choice(OFFSITE_RETRACT).format(city=city))
            q, gold, outdated, qtype, ev, kw = r.choice(OFFSITE_ASK), IDK, [city], "abstention", [], []
        elif sub == "private":
            thing = r.choice(PRIVATE)
            d = self.day(s1) + timedelta(days=r.randint(3, 30))
            t1 = self.fact(s1, r.choice(PRIVATE_SAY).format(thing=thing, d=say_date(r, d)))
            t2 = self.fact(s2, r.choice(PRIVATE_RETRACT).format(thing=thing))
            q, gold, outdated, qtype, ev, kw = r.choice(PRIVATE_ASK).format(thing=thing), IDK, [month_day(d)], "abstention", [], []
        elif sub == "port":
            svc = self.take()
            wrong = self.world[svc]["port"]
            t1 = self.fact(s1, r.choice(PORT_SAY).format(svc=svc, v=wrong))
            t2 = self.fact(s2, r.choice(PORT_RETRACT).format(svc=svc))
            self.background("port", 2)
            q, gold, outdated, qtype, ev, kw = r.choice(PORT_ASK).format(svc=svc), IDK, [wrong], "abstention", [], []
        else:
            svc = self.take()
            old, new = r.sample(self.people, 2)
            t1 = self.fact(s1, r.choice(OWNER_SAY).format(svc=svc, p=old))
            t2 = self.fact(s2, r.choice(OWNER_RETRACT).format(svc=svc, old=old, new=new))
            self.background("owner", 2)
            q, gold, outdated, qtype, ev, kw = r.choice(OWNER_ASK).format(svc=svc), new, [old], "knowledge_update", [t2], [svc, new]
        self.turn_meta[t1] = t2
        return self.ask(HardQuestion("forgetting", qtype, q, gold, ev, kw, [t1], outdated, meta={"retraction": t2}))

    # -- noise and layout -------------------------------------------------------------------

    def noise_chunk(self, s: int) -> Chunk:
        """Mostly unrelated work, sometimes chatter about the case's services; lines are drawn
        from per-case decks and filled afresh, so they rarely repeat within a case."""
        r = self.rng
        person = r.choice(self.people)
        focus = sorted(self.mentioned) if self.mentioned and r.random() < 0.5 else self.services
        fill = {"svc": r.choice(focus), "p": self.first(person), "full": person, "first": self.first(person),
                "n": r.randint(2, 40), **{k: r.choice(v) for k, v in UNRELATED_FILL.items()}}
        roll = r.random()
        if roll < 0.45:
            turns = [("user", self.draw("unrelated", UNRELATED).format(**fill), None)]
            if r.random() < 0.4:
                turns.append(("assistant", r.choice(SHORT_REPLIES), None))
        elif roll < 0.6:
            question, answer = self.draw("uqa", UNRELATED_QA + NOISE_QA)
            turns = [("user", question.format(**fill), None), ("assistant", answer, None)]
        elif roll < 0.7:
            prompt, pool = self.draw("explain", EXPLAIN_ITEMS)
            sents = r.sample(pool, r.randint(2, 4))
            turns = [("user", prompt.format(**fill), None),
                     ("assistant", " ".join(x.format(**fill) for x in sents), None)]
        else:
            turns = [("user", self.draw("stmt", NOISE_STATEMENTS).format(**fill), None)]
            if r.random() < 0.3:
                turns.append(("assistant", r.choice(SHORT_REPLIES), None))
        return Chunk(s, turns)

    def draw(self, deck: str, pool: tuple):
        """Next item of a shuffled per-case deck over pool, reshuffled when it runs out."""
        if not self.decks.get(deck):
            self.decks[deck] = self.rng.sample(list(pool), len(pool))
        return self.decks[deck].pop()

    def layout(self) -> list[dict]:
        """Pad sessions with noise, order chunks, assign turn ids; return the sessions."""
        r = self.rng
        by_session = {i: [] for i in range(len(self.times))}
        for ch in self.chunks:
            by_session[ch.session].append(ch)
        sessions, self.tag_to_id = [], {}
        for i, t in enumerate(self.times):
            chunks = by_session[i] + [self.noise_chunk(i) for _ in range(r.randint(6, 14))]
            r.shuffle(chunks)
            turns = [("user", r.choice(SESSION_OPENERS), None)] if r.random() < 0.5 else []
            for ch in chunks:
                turns.extend(ch.turns)
            sessions.append(self.session_record(i, t, turns))
        # Retracted turns say so (turn meta is not given to the systems, only to the metrics).
        for s in sessions:
            for turn in s["turns"]:
                for tg, by in self.turn_meta.items():
                    if self.tag_to_id[tg] == turn["turn_id"]:
                        turn["meta"] = {"retracted_by": self.tag_to_id[by]}
        return sessions

    def build(self) -> dict:
        """Make one question of each kind, lay out the sessions, return the case."""
        makers = {k: getattr(self, f"q_{k}") for k in V2_KINDS}
        for kind in self.kinds:
            makers[kind]()
        for q in self.questions:
            for text in q.echoes:
                self.remark(self.any_session(), text)
        # Every service a question is about comes up in passing, as the work of a team does, so
        # that its name alone does not find the evidence.
        with_svc = [t for t in NOISE_STATEMENTS if "{svc}" in t]
        for svc in sorted(self.mentioned):
            for _ in range(PASSING_MENTIONS):
                person = self.rng.choice(self.people)
                self.remark(self.any_session(), self.draw("subject", with_svc).format(
                    svc=svc, p=self.first(person), full=person))
        sessions = self.layout()
        ids = self.tag_to_id
        qs = []
        for k, q in enumerate(self.questions, 1):
            meta = {"kind": q.kind, "keywords": q.keywords, **q.meta}
            if "retraction" in meta:
                meta["retraction"] = ids[meta["retraction"]]
            if q.superseded:
                meta["superseded_evidence"] = [ids[t] for t in q.superseded]
                meta["outdated_answers"] = q.outdated
            text = self.rng.choice(QUESTION_FRAMES).format(q=q.text, first=self.first(self.rng.choice(self.people)))
            qs.append({"qid": f"{self.case_id}q{k}", "type": q.qtype, "asked_at": self.asked.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "question": text, "gold_answer": q.gold, "evidence": [ids[t] for t in q.evidence], "meta": meta})
        return {"case_id": self.case_id, "sessions": sessions, "questions": qs,
                "meta": {"size": "long", "generator": V2_GENERATOR}}


# ---------------------------------------------------------------------------------------------
# What --check verifies on every version 2 question, besides the files matching the generator
# ---------------------------------------------------------------------------------------------

def _names(text: str, name: str) -> bool:
    """Whether the text names a service (a hyphenated name, punctuation around it allowed)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _states(text: str, value: str) -> bool:
    """Whether the text states the value: as the grader finds a value in an answer (dates and
    numbers normalized), or written as it is between non-word characters (":9685/healthz",
    "Maren Vance's"), which the grader's stricter boundaries leave out."""
    from grading import states_value
    return states_value(text, value) or re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.I) is not None


def resolve_relative(phrase: str, said_on: date, others: list[str]) -> date:
    """The date a relative phrase names, said on said_on; a sprint's length comes from the other
    evidence turns ("a sprint here is two weeks")."""
    words = {w: n for n, w in NUMBER_WORDS.items()}
    if phrase == "yesterday":
        return said_on - timedelta(days=1)
    if phrase == "the day before yesterday":
        return said_on - timedelta(days=2)
    m = re.fullmatch(r"(\w+) days ago", phrase)
    if m:
        return said_on - timedelta(days=words[m.group(1)])
    m = re.fullmatch(r"this (past|coming) (\w+)", phrase)
    if m:
        day = WEEKDAYS.index(m.group(2))
        return (previous_weekday if m.group(1) == "past" else next_weekday)(said_on, day)
    if phrase == "exactly two sprints ago today":
        weeks = next(words[w] for t in others for w in WORD.findall(t) if w in words and "sprint" in t)
        return said_on - timedelta(days=2 * 7 * weeks)
    raise ValueError(f"unknown relative phrase {phrase!r}")


def check_case_v2(case: dict) -> list[str]:
    """The problems of one version 2 case: evidence resolves, the gold is stated by the evidence
    (or computed from it as meta.derivation says) and not guessable from the question,
    distractors and outdated values differ from the gold, retracted turns are marked, and the
    near-miss entity is never said."""
    from grading import verdict_normalize
    problems = []
    turns = {t["turn_id"]: t for s in case["sessions"] for t in s["turns"]}
    dates = {t["turn_id"]: date.fromisoformat(s["timestamp"][:10]) for s in case["sessions"] for t in s["turns"]}
    for q in case["questions"]:
        qid, meta, gold, kind = q["qid"], q["meta"], q["gold_answer"], q["meta"]["kind"]
        bad = lambda why: problems.append(f"{qid} ({kind}): {why}")  # noqa: E731
        if kind not in V2_KINDS:
            bad(f"unknown kind {kind!r}")
            continue
        missing = [e for e in q["evidence"] + meta.get("superseded_evidence", []) if e not in turns]
        if missing:
            bad(f"evidence {missing} is not in the case")
            continue
        texts = [turns[e]["text"] for e in q["evidence"]]
        if q["type"] != "abstention" and _states(q["question"], gold):
            bad("the gold is in the question")
        for o in meta.get("outdated_answers", []) + meta.get("distractor_answers", []):
            if verdict_normalize(o) == verdict_normalize(gold):
                bad(f"a distractor or outdated value {o!r} is the gold")
            elif not any(_states(t["text"], o) for tid, t in turns.items() if tid not in q["evidence"]):
                bad(f"the distractor or outdated value {o!r} is never stated outside the evidence")
        if meta["keywords"] and not any(all(k.lower() in t.lower() for k in meta["keywords"]) for t in texts):
            bad("the keywords do not co-occur in an evidence turn")
        # A distractor: some turn outside the evidence shares a content word with the question.
        qwords = {w[:5] for w in WORD.findall(q["question"].lower()) if w not in STOP}
        if not any(qwords & {w[:5] for w in WORD.findall(t["text"].lower())}
                   for tid, t in turns.items() if tid not in q["evidence"]):
            bad("no turn outside the evidence shares a word with the question")
        derivation = meta.get("derivation")
        if q["type"] == "abstention":
            # A near miss: what is asked is never said in one turn; what it resembles is.
            if "never_said" in meta and any(all(_states(t["text"], w) for w in meta["never_said"])
                                            for t in turns.values()):
                bad(f"{meta['never_said']} is said in the history, so this is no near miss")
            if "near_miss" in meta and not any(all(_states(t["text"], w) for w in meta["near_miss"])
                                               for t in turns.values()):
                bad(f"the near miss {meta['near_miss']} is never said")
        elif derivation is None or derivation["op"] == "join":
            parts = derivation["parts"] if derivation else [gold]
            if " ".join(parts) != gold:
                bad(f"the gold is not its parts {parts} joined")
            elif not all(any(_states(t, p) for t in texts) for p in parts):
                bad("the gold is not stated by its evidence")
        elif derivation["op"] == "sum":
            a, b = derivation["values"]
            if str(a + b) != gold or not (_states(texts[0], str(a)) and _states(texts[1], str(b))):
                bad("the sum is not stated by its evidence")
        elif derivation["op"] == "count":
            if len(q["evidence"]) != derivation["n"] or str(derivation["n"]) != gold:
                bad("the count differs from its evidence")
        elif derivation["op"] == "order":
            seq = derivation["sequence"]
            said = [next(s for s in seq if _names(t, s)) for t in texts]
            order = [s for _, s in sorted(zip((dates[e] for e in q["evidence"]), said))]
            how = derivation["pick"]
            if how == "after":  # the one after the service the question names
                prev = next(s for s in seq if _names(q["question"], s))
                pick = order[order.index(prev) + 1]
            elif how in ("first", "last"):
                pick = {"first": order[0], "last": order[-1]}[how]
            else:  # a generator bug: no question asks this
                raise ValueError(f"{qid}: unknown order pick {how!r}; expected first, last or after")
            if order != seq or pick != gold:
                bad("the order is not the order of its evidence")
        elif derivation["op"] == "date_plus":
            start = date.fromisoformat(derivation["start"])
            end = start + timedelta(days=derivation["days"])
            if month_day(end) != gold or not any(_states(t, month_day(start)) for t in texts):
                bad("the freeze end is not computed from its evidence")
        elif derivation["op"] == "days_between":
            n = (dates[q["evidence"][1]] - dates[q["evidence"][0]]).days
            if f"{n} days" != gold:
                bad("the duration is not the days between its evidence sessions")
        elif derivation["op"] == "relative_date":
            if derivation["phrase"] not in texts[0] or dates[q["evidence"][0]].isoformat() != derivation["session_date"]:
                bad("the relative date is not said in its evidence's session")
            elif month_day(resolve_relative(derivation["phrase"], dates[q["evidence"][0]], texts[1:])) != gold:
                bad("the gold is not the date its relative phrase names")
        for e in meta.get("superseded_evidence", []) if kind == "forgetting" else []:
            if turns[e].get("meta", {}).get("retracted_by") != meta["retraction"]:
                bad(f"the retracted turn {e} is not marked retracted_by {meta['retraction']}")
    return problems


# Answers a capable model without memory might give: the values people guess when they do not
# know (common ports, small counts, round durations, today's date, the popular tools).
def plausible_guesses(q: dict) -> list[str]:
    """The guesses a model without memory would plausibly give to a question."""
    asked = date.fromisoformat(q["asked_at"][:10])
    text = unframe(q["question"]).lower()
    if "how many" in text and "days" in text:
        return ["7 days", "14 days", "30 days", "3 days"]
    if "how many" in text:
        return ["2", "3", "4", "5"]
    if "date" in text or text.startswith("when"):
        return [month_day(asked + timedelta(days=n)) for n in (-7, -1, 0, 1, 7)]
    if "port" in text:
        return ["8080", "443", "3000", "5432"]
    if "version" in text or "release" in text or "build" in text:
        return ["1.0.0", "2.0", "Postgres 15", "latest"]
    for pref in PREFS:
        if text in (pref[4].lower(), pref[5].lower()):
            return [g or p for p, g in pref[1]]
    return ["I don't know"]


def guess_max(qtype: str) -> float:
    """check.py's default limit on the `none` control for a type (CHECK_DEFAULTS, none_max): the
    share of a type's questions a plausible guess gets right must stay at or below it."""
    from check import CHECK_DEFAULTS, limit_for
    return limit_for(CHECK_DEFAULTS, "none_max", qtype)


def guess_rate(cases: list[dict]) -> dict:
    """Per contract type, the expected share of answerable questions a plausible guess gets
    right under the strict rules (the `none` control's ceiling for a capable model)."""
    from grading import decide
    per: dict = {}
    for case in cases:
        for q in case["questions"]:
            if q["type"] == "abstention":
                continue
            guesses = plausible_guesses(q)
            hits = sum(decide({**q, "answer": g}, with_judge=False)[0] == "correct" for g in guesses)
            per.setdefault(q["type"], []).append(hits / len(guesses))
    return {t: sum(v) / len(v) for t, v in per.items()}


def make_split_v2(n_cases: int, seed: int, dev: bool) -> list[dict]:
    """Generate one version 2 split: every case has one question of each kind."""
    rng = random.Random(seed)
    # Cluster names are made from the version 1 words with numbers of the split's own range, so
    # the two splits share no cluster.
    pools = {"first": pool_split(FIRST, dev), "last": pool_split(LAST, dev),
             "services": pool_split(SERVICES, dev) + pool_split(V2_EXTRA_SERVICES, dev),
             "cluster_words": sorted({c.split("-")[0] for c in CLUSTERS}),
             "cluster_numbers": list(range(50, 100) if dev else range(1, 50))}
    cases = []
    for i in range(1, n_cases + 1):
        case_id = f"{'hdev' if dev else 'hd'}{i:03d}"
        kinds = rng.sample(V2_KINDS, len(V2_KINDS))
        case = HardCase(random.Random(rng.random()), case_id, pools, kinds).build()
        # Raised, not asserted: `python -O` drops asserts, and --check must run these checks.
        problems = check_case_v2(case)
        if problems:
            raise RuntimeError(f"{case_id}: the generator made a case its own checks refuse: " + "; ".join(problems))
        cases.append(case)
    rates = guess_rate(cases)
    too_high = {t: round(v, 3) for t, v in rates.items() if v > guess_max(t)}
    if too_high:
        raise RuntimeError(f"plausible guesses get these types right too often: {too_high}")
    return cases


def render(cases: list[dict]) -> str:
    """The JSONL text of a split, one case per line."""
    return "".join(dumps(c) + "\n" for c in cases)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--version", choices=("1", "2", "3", "4", "all"), default="all",
                    help="which version's files to write or check (default: all four)")
    ap.add_argument("--test-cases", type=int, default=46, help="version 1 test cases")
    ap.add_argument("--dev-cases", type=int, default=12, help="version 1 dev cases")
    ap.add_argument("--v2-test-cases", type=int, default=V2_TEST_CASES)
    ap.add_argument("--v2-dev-cases", type=int, default=V2_DEV_CASES)
    ap.add_argument("--v3-test-cases", type=int, default=cases_v3.TEST_CASES)
    ap.add_argument("--v3-dev-cases", type=int, default=cases_v3.DEV_CASES)
    ap.add_argument("--v4-test-cases", type=int, default=cases_v4.TEST_CASES)
    ap.add_argument("--v4-dev-cases", type=int, default=cases_v4.DEV_CASES)
    ap.add_argument("--out-dir", default=HERE)
    ap.add_argument("--check", action="store_true",
                    help="regenerate in memory and exit 2 if the files on disk differ")
    a = ap.parse_args(argv)
    if min(a.test_cases, a.dev_cases, a.v2_test_cases, a.v2_dev_cases, a.v3_test_cases, a.v3_dev_cases, a.v4_test_cases,
           a.v4_dev_cases) < 1:
        print("error: every --*-cases count must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    outputs = {}
    if a.version in ("1", "all"):
        outputs["cases.jsonl"] = render(make_split(a.test_cases, a.seed, dev=False))
        outputs["dev.jsonl"] = render(make_split(a.dev_cases, a.seed + 1, dev=True))
    if a.version in ("2", "all"):
        outputs[V2_FILES["test"]] = render(make_split_v2(a.v2_test_cases, a.seed + 2, dev=False))
        outputs[V2_FILES["dev"]] = render(make_split_v2(a.v2_dev_cases, a.seed + 3, dev=True))
    if a.version in ("3", "all"):
        outputs[cases_v3.FILES["test"]] = render(cases_v3.make_split_v3(a.v3_test_cases, a.seed + 4, dev=False))
        outputs[cases_v3.FILES["dev"]] = render(cases_v3.make_split_v3(a.v3_dev_cases, a.seed + 5, dev=True))
    if a.version in ("4", "all"):
        outputs[cases_v4.FILES["test"]] = render(cases_v4.make_split_v4(a.v4_test_cases, a.seed + 6, dev=False))
        outputs[cases_v4.FILES["dev"]] = render(cases_v4.make_split_v4(a.v4_dev_cases, a.seed + 7, dev=True))
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
