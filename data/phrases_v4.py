"""The phrase banks version 4 of the bundled dataset (data/cases_v4.py) adds to version 3's.

LONG_ASIDES are what people add after the point of a message, in the words questions use (who,
which, the owner, the port, the version, the cluster, the database) but about nothing in
particular: they name no service and state no value, so no question's gold, count or near miss
changes. MENTIONS are short turns that name a service ({svc}) or a first name ({p}) and say
nothing about it. Neither says "page" or "woke" (the words a counted night page is found by).
"""
from __future__ import annotations

LONG_ASIDES = (
    "I keep forgetting which of these is which, so I'm writing it down for once.",
    "If anyone asks who the owner of what is, point them at the wiki and not at me.",
    "The whole question of which version runs where is a mess we should clean up.",
    "It is the kind of thing that is obvious until somebody new joins and asks about it.",
    "Half of what we know about the clusters lives in people's heads, which is not great.",
    "{p} and I went back and forth on it for a while before we agreed on what it is.",
    "I don't think the doc that says otherwise has been touched in about {n} weeks.",
    "There was a long thread about the database question, but it ended up where it started.",
    "When I asked in the channel, three people gave me three different answers, so take it with salt.",
    "The port numbers were in the old spreadsheet too, but nobody trusts that one any more.",
    "We should really have one place where the owner, the port and the version of everything are listed.",
    "I'm only saying it because it cost me an hour last time and I'd like that hour back.",
    "{p} will probably correct me if I got any of that wrong, which happens more than I admit.",
    "It's one of those things that does not matter at all until the night it matters a lot.",
    "The on-call handbook has a section on this, but it is out of date by a couple of versions.",
    "I asked what the plan was and the answer was that there is a plan, which is something.",
    "Which is to say that it works, and nobody wants to touch it before the end of the quarter.",
    "The last time we changed anything like that it took {n} days to get everything back in order.",
    "I'd rather know where things are than guess at two in the morning with the phone ringing.",
    "It is not the most exciting part of the job, but somebody has to keep track of it.",
    "I did check it twice, once on the dashboard and once in the config, and they agree for now.",
    "Somebody on the {n}th floor asked me about this yesterday, and I had to look it up myself.",
    "We can talk about what to do with it when the migration work is done and dusted.",
    "As far as I can tell that is how it has been since before I joined the team.",
    "Who decided that is a good question, and I don't think anyone remembers any more.",
    "The release notes don't say a word about it, which is why I'm saying it here.",
)

MENTIONS = (
    "{svc} again.", "{svc}, yes.", "ok, {svc}.", "hm, {svc}.", "{svc}? no idea.", "{svc} rings a bell.",
    "ugh, {svc}.", "{svc} is on my list too.", "let's come back to {svc} later.", "I'll ask {p} about {svc}.",
    "{p} asked about {svc} again.", "{svc}, right?", "and {svc}?", "was it {svc}?", "wait, {svc} or the other one?",
    "is that the one {p} mentioned, {svc}?", "what about {svc}?", "who is looking at {svc} today?",
    "is {p} around?", "ask {p}, I think.", "{p} would know.", "did you see what {p} wrote?", "ha, {p}.",
    "not sure, maybe {p}?", "what does {p} think?", "the one {p} runs?", "right, that one.",
    "which one was that again?", "who was it again?", "what was the number again?",
)
