"""The names and words every version of the bundled dataset draws on: people, services, clusters,
regions, datastores and the calendar words. All of it is invented; no real people or private facts.
The last slice of each name pool is reserved for a dev split (pool_split), so a test split and its
dev split share no service, cluster or person."""
from __future__ import annotations

from datetime import date

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
# More invented services than version 1 had: a long case needs about twenty.
V2_EXTRA_SERVICES = ("auk-billing gannet-api petrel-sync shrike-cache tern-gateway plover-jobs "
                     "dipper-search skua-auth linnet-mail wryneck-cdn smew-ledger ouzel-queue "
                     "rail-render crake-ingest eider-notify scaup-export teal-metrics garganey-etl "
                     "pintail-geo shoveler-pdf bunting-flags siskin-audit redpoll-orders "
                     "twite-push brambling-crm chiffchaff-ocr godwit-dns whimbrel-media "
                     "knot-ratelimit stint-archive").split()
REGIONS = ("eu-west", "us-east", "ap-south", "eu-central", "us-west", "sa-east", "ap-north")

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
MONTHS = ("January February March April May June July August September October November "
          "December").split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
                9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}


def pool_split(pool: list[str] | tuple, dev: bool, dev_share: float = 0.25) -> list[str]:
    """The test or dev slice of a name pool (the dev slice is the tail)."""
    cut = int(len(pool) * (1 - dev_share))
    return list(pool[cut:] if dev else pool[:cut])


def month_day(d: date) -> str:
    """The canonical gold form of a date, e.g. 'June 22'."""
    return f"{MONTHS[d.month - 1]} {d.day}"

# More services for version 3, whose cases hold facts about some thirty services each.
V3_EXTRA_SERVICES = ("alder-queue birch-auth cedar-index damson-api elm-relay fir-billing gorse-cache "
                     "hazel-sync ilex-ingest juniper-lite kapok-mail larch-ocr maple-geo nutmeg-pdf "
                     "olive-export poplar-jobs quince-flags rowan-router sumac-search teak-notify "
                     "upas-ledger viburnum-cdn willow-media yucca-push zelkova-dns aspen-audit "
                     "balsa-crm catalpa-store dogwood-sched eucalypt-feed ficus-gateway ginkgo-tiles "
                     "holly-metrics iroko-stream jacaranda-rpc kowhai-bus linden-pay mulberry-vault "
                     "neem-render osier-cleanup").split()

# Version 3 names a case's services from a few of these words with numbers (lantern-417).
SERVICE_WORDS = sorted({s.split("-")[0] for s in SERVICES + V2_EXTRA_SERVICES + V3_EXTRA_SERVICES if "-" in s})
