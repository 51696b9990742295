"""The name pools and phrase banks of version 1 of the bundled dataset (cases_v1.py), which
version 2 (cases_v2.py) draws on too. Every fact is written with several phrasings, so that no sentence template repeats
enough for a keyword backend to exploit. Everything here is invented; no real people or private
facts."""
from __future__ import annotations

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
