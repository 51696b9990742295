"""The phrase bank version 6 of the bundled dataset (data/cases_v6.py) adds to version 4's asides.

QUESTION_ASIDES are what people say around their point in the very words questions are asked in
(which, what, who, how many, the version, the port, the owner, the cluster, the date, live, runs,
hosts, reserved): chat about the questions nobody has answered yet. Like version 4's asides they
name no service, no person's value, no region and no date, so no gold, count or near miss changes;
none says "page", "woke" or "night" (the words a counted night page is found by) or "first to
move" (a rollout order's question).
"""
from __future__ import annotations

QUESTION_ASIDES = (
    "Which cluster hosts what, and on which port, is anyone's guess on a Monday.",
    "Nobody could tell me what version is live, or who the owner of the service is now.",
    "How many days a migration takes on the new cluster depends on who you ask.",
    "What date the test is on, and for which service, changes every time I look at the calendar.",
    "The number of vCPUs reserved for each service is a question for the capacity sheet.",
    "Where the data lives and which database does what is written down for about half of it.",
    "Who owns the ingress in front of it now is on the wiki, in theory.",
    "I'd have to check on which day the last failover was, the calendar is a mess.",
    "What runs on which host is the first thing anyone new asks, and the last thing we document.",
    "Is it live, does it run, does it listen on the port it should: that is the whole checklist.",
    "What the current version of the database is, and what it was last month, are two questions.",
    "Who did the rebuild and on what date is in the ticket, if the ticket is up to date.",
    "How many of these does each of us own at the moment? More than last quarter, that is for sure.",
)
