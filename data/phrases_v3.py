"""The phrase banks of version 3 of the bundled dataset (data/cases_v3.py).

Every statement is written so that either speaker could say it (the two speakers take turns, as in
real chat), and the openers and tails of data/cases_v3.py are added to a fact and to small talk
alike: nothing but the words of a fact tells it from the rest. {svc} service, {p} person, {v} value.
Questions are asked as a person asks them, with no sentence around them.
"""
from __future__ import annotations

# Openers and tails: drawn with the same odds for every statement, fact or not.
OPENERS = ("", "", "", "so ", "also, ", "okay, ", "right, ", "btw ", "oh, ", "anyway, ", "by the way, ", "hm, ",
           "well, ", "and ", "fyi ", "ok so ", "yeah, ", "one more thing, ", "hey, ", "then ")
TAILS = ("", "", "", "", "", "", ", as far as I know", " - it came up in standup", ", for what it's worth",
         ", which surprised me", " and that's the last of it for this week", ", so keep that in mind",
         " - I told the team on Monday", ", if anyone asks", ", at least that's what the doc says",
         " and nobody objected", ", more on that tomorrow", " after a long thread about it")

# How people start and end a question in chat; part of the question, not a sentence around it.
ASK_LEADS = ("", "do you know ", "any idea ", "remind me, ", "quick one: ", "do you remember ")
ASK_ENDS = ("", " again", " at the moment", " right now", ", if you remember", ", do you know")

# Second sentences: what people add after the point of a message. Added with the same odds to
# every turn; they name no service and state nothing a question asks.
ASIDES = (
    "I'll bring it up at the planning meeting on Thursday.", "The rest of my day went to interviews.",
    "{p} said the same thing in the retro, so I think we are aligned on it.", "Anyway, I need more coffee before the next call.",
    "We should write this down somewhere people will actually find it.", "Not urgent, but I didn't want to forget it.",
    "It's been a long week and it's only Tuesday.", "{p} wants a summary of all this for the newsletter.",
    "I only found out because somebody mentioned it in the hallway.", "Let me know if that doesn't match what you heard.",
    "The doc is out of date again, I'll fix it when I have a minute.", "I'm telling everyone so nobody is surprised later.",
    "There were about {n} people on the call, which was too many.", "I think {p} knows more about the history of it than I do.",
    "My calendar is a wall of meetings until the end of the month.", "We argued about it for {n} minutes and then moved on.",
    "It took me a while to piece that together from the chat logs.", "I'll double check with {p} tomorrow morning.",
    "Half of the team wasn't in the loop, so this is for them.", "The ticket for it is somewhere in the backlog.",
    "Honestly I'd rather talk about the roadmap, but this came first.", "Nobody complained, which is a good sign.",
    "I wrote it on a sticky note and then lost the sticky note.", "Let's see how it looks after the weekend.",
)

# Plain statements of one attribute. Words differ from the paraphrase questions (PARA_ASK).
SAY = {
    "owner": ("{p} owns {svc} now.", "the owner of {svc} is {p}.", "{p} is the owner of {svc}.",
              "{svc} is {p}'s service, reviews go through them.", "put {p} down as the owner of {svc}."),
    "port": ("{svc} listens on port {v}.", "{svc} binds port {v}.", "the health check for {svc} hits port {v}.",
             "the port of {svc} is {v}.", "the firewall rule for {svc} opens port {v} and nothing else."),
    "release": ("the live version of {svc} is {v}.", "production runs {svc} version {v}.", "we shipped {svc} {v}.",
                "{svc} is on build {v}.", "tagged build {v} for {svc} and it went to 100%."),
    "cluster": ("{svc} runs on the {v} cluster.", "{svc} is deployed on {v}.", "the pods of {svc} live in cluster {v}.",
                "{svc} sits on the {v} cluster.", "the scheduler pins {svc} to {v}."),
    "store": ("{svc} keeps its state in the database {v}.", "{svc} persists to {v}.", "the database of {svc} is {v}.",
              "{svc} talks to a {v} database.", "under the hood {svc} is {v} plus a thin API."),
}
# Questions that share no content word with SAY's phrasings of the same attribute, besides the
# name: a reader must know that "dial" means a port and "kubectl context" a cluster.
PARA_ASK = {
    "owner": ("Who should I escalate to about {ref}?", "Whose name goes on the escalation line for {ref}?"),
    "port": ("What number do clients dial to reach {ref}?", "Which socket number does {ref} answer connections on?"),
    "cluster": ("Which kubectl context do I need for {ref}?", "Where do the containers of {ref} get started?"),
    "store": ("What database, with version, holds the data of {ref}?", "Which database engine and version is {ref} writing to?"),
}
ASK = {
    "owner": ("Who owns {svc}?", "Who is the owner of {svc}?", "whose service is {svc}?"),
    "port": ("Which port does {svc} listen on?", "what port is {svc} on?"),
    "release": ("Which version of {svc} is live?", "What build of {svc} is running in prod?"),
    "cluster": ("Which cluster does {svc} run on?", "where is {svc} deployed?"),
    "store": ("What database and version does {svc} use?", "which database version is behind {svc}?"),
}
ALIAS_FUNCS = ("payments", "search", "login", "invoicing", "notifications", "thumbnail", "export",
               "rate-limit", "feature-flag", "audit", "email", "geo", "reporting", "checkout",
               "upload", "pricing", "scheduling", "fraud", "loyalty", "shipping")
ALIAS_NOUNS = ("DB", "box", "backend", "worker", "API")
ALIAS_SAY = ("{svc} is what everyone calls {alias}.", "when finance says {alias} they mean {svc}.",
             "{alias} is just {svc} under its old nickname.", "{svc} is {alias}, for the newcomers.")

# Coreference: the value is said of "that one", the turn after the service is named.
COREF_INTRO = (("{first} moved {svc} behind the new ingress.", "moved behind the new ingress"),
               ("{first} took {svc} through the platform migration.", "took through the platform migration"),
               ("{first} rebuilt the {svc} deployment from scratch.", "rebuilt"),
               ("{first} spent a day untangling the config of {svc}.", "untangled"))
COREF_SAY = {
    "port": ("that one binds {v} since the change.", "it listens on {v} now.", "it answers on port {v} these days."),
    "release": ("that one went out as {v}.", "it's on {v} after that.", "the build it runs now is {v}."),
    "cluster": ("that one is on {v} since then.", "it runs on {v} now.", "it got scheduled on {v} afterwards."),
}
COREF_ASK = {"port": "Which port does {ref} listen on?", "release": "Which version of {ref} is live?",
             "cluster": "Which cluster does {ref} run on?"}

# Split facts.
VCPU_SAY = ("reserved {n} vCPUs for {svc} in {r}.", "{svc} got {n} vCPUs in {r}.",
            "capacity ticket approved, {n} vCPUs for {svc} in {r}.")
VCPU_ASK = ("How many vCPUs does {svc} have reserved across all regions?", "how many vCPUs in total are reserved for {svc}?")
SQUADS = ("Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Grove", "Harbor", "Ion", "Kestrel",
          "Lumen", "Meridian")
SQUAD_SAY = ("{svc} is owned by whoever leads the {squad} squad.", "ownership of {svc} follows the {squad} squad lead.")
LEAD_SAY = ("{p} is the {squad} squad lead now.", "{p} took over as lead of the {squad} squad.")
ENGINE_SAY = ("{svc} runs on {kind}, has since the rewrite.", "the {svc} team went with {kind} years ago.")
VERSION_SAY = ("patched the {svc} database, it reports {ver} now.", "the {svc} datastore is on {ver} after maintenance.")
JOIN_ASK = ("What database and version does {svc} use?", "which database, with its version, is behind {svc}?")
FREEZE_START = ("{svc} goes into a change freeze on {d}.", "release management froze {svc} starting {d}.")
FREEZE_LEN = ("the {svc} freeze lasts {dur}.", "the length of the {svc} freeze is {dur}.")
FREEZE_ASK = ("What is the last day of the {svc} freeze?", "On which date is the last frozen day for {svc}?")

# Aggregation.
PAGE_SAY = ("{svc} paged the on-call overnight.", "we got a night page from {svc} at {h}.{m}.",
            "{svc} woke up the on-call at {h}am.", "the on-call got paged by {svc} in the night.")
PAGE_ASK = ("How many times did {svc} page the on-call at night?", "how often has {svc} woken the on-call at night?")
ROLLOUTS = ("the new secrets manager", "the new tracing stack", "the new CI runners", "the new log pipeline",
            "the service mesh", "the new feature-flag service", "the shared job runner", "the new build cache",
            "the new metrics agent")
ROLLOUT_SAY = ("{svc} is on {thing} as of today.", "moved {svc} onto {thing} today at {h}.{m}.",
               "{svc} switched to {thing} this morning.", "{svc} went onto {thing}, cutover took {h} hours.")
ROLLOUT_ASK = {"first": "Which service was the first to move onto {thing}?",
               "last": "Which service was the last to move onto {thing}?",
               "after": "Which service moved onto {thing} right after {prev}?"}

# Time: dates relative to the session's own date.
TIME_WORK = ("rollback", "data backfill", "certificate renewal", "index rebuild", "schema migration",
             "failover test", "load test", "key rotation")
TIME_PAST = ("we did the {svc} {e} {rel}.", "the {svc} {e} happened {rel}.", "{first} ran the {svc} {e} {rel}.")
TIME_FUTURE = ("the {svc} {e} is booked for {rel}.", "we're doing the {svc} {e} {rel}.")
TIME_ASK = ("On what date was the {e} for {svc}?", "what day did {svc} get its {e}?")
TIME_ASK_FUTURE = ("On what date is the {e} for {svc} planned?", "what day will {svc} get its {e}?")
RELATIVE_PAST = ("yesterday", "the day before yesterday", "three days ago", "five days ago", "ten days ago",
                 "this past Monday", "this past Tuesday", "this past Wednesday", "this past Thursday", "this past Friday")
RELATIVE_FUTURE = ("this coming Monday", "this coming Tuesday", "this coming Wednesday", "this coming Thursday",
                   "this coming Friday")
DURATION_START = ("started the {svc} {e} today.", "kicked off the {svc} {e} this morning.")
DURATION_END = ("the {svc} {e} finished today.", "the {svc} {e} is done as of today.")
DURATION_ASK = ("How many days did the {e} for {svc} take?", "how long, in days, did the {e} of {svc} run?")

# Update chains.
CHANGE = {
    "owner": ("{old} handed {svc} over to {new}.", "ownership change, {svc} moved from {old} to {new}.",
              "{new} has taken over {svc} from {old}."),
    "cluster": ("{svc} has been migrated from {old} to {new}.", "we drained {old}; {svc} lives on {new} now.",
                "moved {svc} over to {new}, nothing is left on {old}."),
    "release": ("rolled {svc} forward to {new}; {old} had a leak.", "{svc} {new} replaced {old} in prod.",
                "new {svc} release is out: {new}, {old} is gone."),
}
ASK_NOW = {"owner": ("Who owns {svc} now?", "who is the current owner of {svc}?"),
           "cluster": ("Which cluster does {svc} run on now?", "where does {svc} run these days?"),
           "release": ("Which version of {svc} is live now?", "what's the current build of {svc} in prod?")}
PREFS = {
    "config files": ("TOML", "HCL", "JSON5", "Dhall", "CUE", "YAML"),
    "diagrams": ("Mermaid", "PlantUML", "Excalidraw", "draw.io", "Graphviz", "D2"),
    "benchmarks": ("hyperfine", "k6", "vegeta", "locust", "wrk2", "Gatling"),
    "design docs": ("AsciiDoc", "reStructuredText", "Org mode", "Markdown", "LaTeX", "Quarto"),
    "code examples": ("Go", "Rust", "Kotlin", "TypeScript", "Python", "Elixir"),
    "dashboards": ("Grafana", "Kibana", "Superset", "Metabase", "Redash", "Datadog"),
}
PREF_SAY = ("{p} wants {topic} in {v} from now on.", "{p} asked for {v} for {topic}.",
            "{p} changed their mind on {topic}: {v} now.", "for {topic}, {p} prefers {v}.")
PREF_ASK = ("What does {p} want for {topic} these days?", "which tool does {p} prefer for {topic} now?")

# Near-duplicates and near misses.
TWIN_SAY = {"release": ("{svc} in {r} is on {v}.", "the {r} deployment of {svc} runs {v}."),
            "port": ("{svc} in {r} listens on {v}.", "in {r}, {svc} binds {v}."),
            "cluster": ("{svc} in {r} is scheduled on {v}.", "the {r} copy of {svc} lives on {v}.")}
TWIN_ASK = {"release": "Which version of {svc} runs in {r}?", "port": "which port does {svc} use in {r}?",
            "cluster": "Which cluster hosts {svc} in {r}?"}
OWNS_ASK = ("Which service does {p} own?", "what service is {p} the owner of?")
EVENTS = ("game day review", "DR drill", "pentest kickoff", "chaos game day", "capacity review", "failover rehearsal")
EVENT_SAY = ("the {svc} {e} is set for {d}.", "we booked the {svc} {e} on {d}.")
EVENT_ASK = ("When is the {svc} {e}?", "what date is the {e} for {svc}?")

# Selective forgetting and corrections.
CITIES = ("Lisbon", "Porto", "Tallinn", "Krakow", "Valencia", "Ghent", "Bergen", "Ljubljana", "Turku",
          "Cluj", "Aarhus", "Bilbao")
OFFSITE_SAY = ("the {team} offsite is in {city} the week of {d}.", "{team} offsite news: {city}, week of {d}.")
OFFSITE_RETRACT = ("scratch the {city} offsite for {team}, it's off and nothing replaces it.",
                   "forget the {team} offsite in {city}, it was cancelled.")
OFFSITE_ASK = ("Where is the {team} offsite going to be?", "in which city is the {team} offsite?")
TEAMS = ("platform", "data", "payments", "mobile", "infra", "growth", "search", "identity")
PRIVATE = ("dentist appointment", "visa interview", "physio session", "parent-teacher meeting")
PRIVATE_SAY = ("{p} has a {thing} on {d}, out that morning.", "{p}'s {thing} is on {d}.")
PRIVATE_RETRACT = ("please forget what I said about {p}'s {thing}; that's private.",
                   "delete the note about the {thing} of {p}, it shouldn't have been shared.")
PRIVATE_ASK = ("When is {p}'s {thing}?", "what date is the {thing} of {p}?")
PORT_RETRACT = ("forget the port I gave for {svc}, I mixed it up; nobody knows the real one yet.",
                "scratch the {svc} port from before, it was wrong.")
OWNER_FIX = ("scratch what I said about who owns {svc}: it's {new}, I had it wrong.",
             "correction, {old} doesn't own {svc}; {new} does.")

# Facts nobody asks about, in the same voice: how a service behaves, what was done to it. None
# reports a night page, a move onto a platform, a region or a value a question asks.
SERVICE_TALK = (
    "{svc} p99 latency is {n} ms since the last deploy.", "the {svc} error rate went to {n} percent during the deploy.",
    "{p} is rewriting the {svc} deploy scripts.", "the {svc} dashboard takes {n} seconds to load.",
    "{svc} has {n} open tickets, most of them stale.", "{p} found a memory leak in {svc}.",
    "the {svc} test suite takes {n} minutes now.", "{svc} retries are too aggressive, {p} says.",
    "we cut the {svc} log volume by {n} percent.", "{p} reviewed the {svc} schema change.",
    "the {svc} runbook is missing the restart steps.", "{svc} CPU sits at {n} percent at peak.",
    "{p} wants {svc} to drop the legacy endpoint.", "the {svc} alerts are too noisy, {p} muted two.",
    "{svc} had {n} failed builds this week.", "{p} is on call for {svc} this week.",
    "the {svc} cache hit rate is {n} percent.", "{svc} logs are full of timeout warnings.",
    "{p} added tracing to {svc}.", "the {svc} config has {n} feature flags nobody reads.",
    "{svc} alerted the day shift at {n}:15, nothing serious.", "{svc} is on the old base image for {n} more days.",
    "{svc} queue depth peaked at {n} thousand messages.", "{p} asked for a design review of {svc}.",
    "the {svc} migration script needs a dry run first.", "{svc} costs about {n} hundred dollars a month.",
)

# Small talk: the rest of a history. Some lines name a service or a person, some hold numbers,
# none states a value any question asks, and none reports a night page or a move.
CHATTER = (
    "Morning, slow start today.", "Noted.", "Okay.", "Makes sense.", "Got it, thanks.", "Sure.",
    "Ha, fair.", "Sounds good.", "Let's pick that up tomorrow.", "Any news on the budget?",
    "Did {svc} come up in the 2 o'clock sync?", "I'll look at {svc} after the 11:30 meeting.",
    "{svc} is on my list for tomorrow, item 3.", "Who was asking about {svc} earlier?",
    "{p} pinged me about {svc} twice today.", "Can we talk about {svc} at 4?", "I skimmed the {svc} thread, 60 messages.",
    "Noted, {svc} it is.", "Okay, I'll keep {svc} in mind.", "Was {svc} the one with the 500s last week?",
    "Standup ran long again, 40 minutes.", "The VPN dropped twice before nine.",
    "Left a few comments on the {svc} PR, mostly naming.", "I spent the afternoon reading {svc} logs.",
    "Coffee machine is broken again.", "{p} is out on Friday, so the sync moves to Monday.",
    "Planning poker went badly, everything is an 8.", "Our board has 41 items in review, that can't be right.",
    "Who even reviews the {svc} runbook? Nobody, it seems.", "The {svc} README still mentions a deleted script.",
    "{p} wants a walkthrough of the {svc} codebase next sprint.", "Lunch-and-learn today was about property testing.",
    "Writing the quarterly goals doc, mostly copy-paste.", "Two people asked me the same {svc} question today.",
    "Somebody pushed a 2 GB fixture into the monorepo again.", "Interview loop at 2, then the design review.",
    "I'd like fewer meetings this week.", "{p} demoed the new deploy dashboard, nice but slow.",
    "The {svc} build is down to 4 minutes after the cache fix.", "Half the team is at a conference.",
    "Can we move the retro to Thursday?", "Did anyone look at the flaky test in {svc}?",
    "The staging cluster was flaky all morning, not ours.", "Infra posted a cost report; storage is up 12 percent.",
    "Which dashboard do you use for latency? There are too many.", "Reminder to rotate my laptop SSH keys.",
    "{p} and I paired on a time zone bug in a fixture.", "There's a deprecation warning in the {svc} build.",
    "Security sent the quarterly report, a few medium findings.", "The {svc} dashboard has a panel called misc with 40 graphs.",
    "Budget review is on the 3rd, I need numbers by then.", "The {svc} release notes say bug fixes and nothing else.",
    "Is the {svc} alert rule still firing? I muted my phone.", "{p} asked who owns what in the new org chart.",
    "Ticket hygiene: half the {svc} tickets have no component.", "The guild meeting is cancelled this week.",
    "Vendor call at 3 about the logging contract.", "We should write the team conventions down somewhere.",
    "I'll draft the postmortem template tonight.", "Thanks, that helps.", "Hm, let me think about that.",
    "That's worth a ticket, I think.", "Where does {svc} keep its feature flags these days?",
    "The {svc} version bump PR needs one more approval.", "Is {p} around today?", "Long week.",
)
SESSION_OPENERS = ("Morning! Picking up where we left off.", "Hi again.", "Back for a bit.", "Hey, quick session today.",
                   "Afternoon.", "Okay, where were we?")
