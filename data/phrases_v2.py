"""The phrase banks of version 2 of the bundled dataset (cases_v2.py): nicknames, paraphrases,
coreference, split facts, aggregation, time, near-duplicates, near misses, selective forgetting,
the unrelated work that fills a long history, and the frames questions are asked in."""
from __future__ import annotations

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
