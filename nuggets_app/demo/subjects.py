"""The invented subjects of the demo collection: topics, aspects and sentence templates.

Every place, person and organisation here is made up for the demo. Templates use
``{slots}`` that the generator fills from ``SLOTS`` with a seeded generator.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subject:
    """One demo topic and the sentences documents about it are built from."""

    qid: str
    title: str
    description: str
    narrative: str
    # aspect id -> (aspect text, sentence templates)
    aspects: dict[str, tuple[str, list[str]]]
    core: list[str]
    headlines: list[str]
    # Sentences that name the subject in passing, without saying anything useful.
    mentions: list[str]


SLOTS = {
    "first": [
        "Ada",
        "Bram",
        "Cora",
        "Dev",
        "Edith",
        "Farid",
        "Greta",
        "Hugo",
        "Ines",
        "Jonah",
    ],
    "last": [
        "Almond",
        "Brack",
        "Calloway",
        "Dunmore",
        "Ellery",
        "Fenn",
        "Gorse",
        "Hale",
    ],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"],
    "month": ["March", "April", "May", "June", "September", "October", "November"],
    "year": ["2019", "2020", "2021", "2022", "2023"],
    "small": ["three", "four", "five", "six", "eight", "twelve"],
    "pct": ["12", "18", "25", "31", "40", "55"],
    "money": ["1.2 million", "850,000", "2.4 million", "310,000", "4.1 million"],
}

SUBJECTS = [
    Subject(
        qid="1",
        title="Marrowby harbour tidal turbines",
        description="What is known about the tidal turbines installed in Marrowby harbour?",
        narrative=(
            "Relevant documents report facts about the Marrowby harbour tidal turbine "
            "scheme: its cost, the electricity it produces, its effect on fish and "
            "seals, or the dispute with the fishing fleet. Turbines elsewhere, and "
            "wind turbines, are not relevant."
        ),
        aspects={
            "cost": (
                "cost and funding of the scheme",
                [
                    "The Marrowby turbines cost {money} pounds, most of it from a regional energy grant.",
                    "Harbour trustees borrowed {money} pounds to anchor the turbine frames to the seabed.",
                    "An audit in {month} {year} found the turbine scheme {pct} percent over budget.",
                ],
            ),
            "output": (
                "electricity produced",
                [
                    "At spring tides the {small} turbines in Marrowby harbour supply about {pct} percent of the town's electricity.",
                    "The tidal turbines stop twice a day at slack water, when the current in the harbour mouth falls below one metre per second.",
                    "Engineer {first} {last} said the harbour turbines produced more power in winter, when storms push extra water through the channel.",
                ],
            ),
            "wildlife": (
                "effect on fish, seals and birds",
                [
                    "Divers counted grey seals resting beside the Marrowby turbine frames and saw none injured by the slow blades.",
                    "A survey by {first} {last} found that herring shoals avoid the harbour mouth while the turbines are turning.",
                    "Cormorants now fish in the calm water behind the tidal turbine frames in Marrowby.",
                ],
            ),
            "fishing": (
                "dispute with the fishing fleet",
                [
                    "Marrowby fishermen complained that the turbine exclusion zone closed their shortest route to the crab grounds.",
                    "After {small} months of talks the harbour agreed to move one turbine so that trawlers could pass at low tide.",
                    "Skipper {first} {last} told the council that the turbines had cut his catch by {pct} percent.",
                ],
            ),
        },
        core=[
            "The tidal turbines in Marrowby harbour sit on steel frames in the narrow channel at the harbour mouth.",
            "Marrowby was the first fishing town on the coast to generate electricity from its own tides.",
            "Each Marrowby turbine has three slow blades that turn with the incoming and the outgoing tide.",
        ],
        headlines=[
            "Marrowby harbour turbines: a first year of tidal power",
            "Tides, turbines and trawlers in Marrowby",
            "What the Marrowby tidal scheme really delivers",
        ],
        mentions=[
            "Visitors to Marrowby can see the harbour, its tidal turbines and the old lighthouse in one afternoon.",
            "The bus to Marrowby harbour runs every hour on weekdays.",
        ],
    ),
    Subject(
        qid="2",
        title="saltmarsh beekeeping cooperative of Fennick",
        description="Find information about the Fennick saltmarsh beekeepers' cooperative.",
        narrative=(
            "Relevant documents describe the cooperative of beekeepers on the Fennick "
            "saltmarsh: its sea-lavender honey, how the hives survive flooding, its "
            "members and sales. Beekeeping in general is not relevant."
        ),
        aspects={
            "honey": (
                "sea-lavender honey and its taste",
                [
                    "Fennick saltmarsh honey is pale green and tastes faintly of salt and sea lavender.",
                    "The cooperative harvests its sea-lavender honey in late {month}, after the marsh has flowered.",
                    "A jar of Fennick marsh honey won a regional prize in {year} for its unusual mineral taste.",
                ],
            ),
            "floods": (
                "protecting hives from tides and floods",
                [
                    "Fennick beekeepers set their hives on stilts a metre high so that spring tides pass underneath.",
                    "In the flood of {month} {year} the cooperative moved {small} hives to the sea wall by boat.",
                    "Hive stands on the Fennick marsh are chained together so that storm surges cannot carry them away.",
                ],
            ),
            "members": (
                "members and organisation of the cooperative",
                [
                    "The Fennick cooperative was founded in {year} by {small} families who keep bees on the marsh.",
                    "Members of the beekeeping cooperative share one extractor and one honey house near the Fennick sluice.",
                    "{first} {last}, who chairs the Fennick cooperative, trains new beekeepers every spring.",
                ],
            ),
            "sales": (
                "sales and prices",
                [
                    "The cooperative sells its saltmarsh honey at the Fennick market and to {small} local shops.",
                    "Fennick honey sells for twice the price of ordinary blossom honey.",
                    "Sales of the cooperative's honey rose by {pct} percent after a television report.",
                ],
            ),
        },
        core=[
            "The Fennick saltmarsh beekeeping cooperative keeps its hives among the creeks of the marsh.",
            "Bees from the Fennick cooperative forage on sea lavender, sea aster and samphire.",
            "The saltmarsh cooperative is the only group of beekeepers working on the Fennick marsh.",
        ],
        headlines=[
            "Bees on the marsh: the Fennick cooperative",
            "Salt, lavender and honey in Fennick",
            "How Fennick's beekeepers outwit the tide",
        ],
        mentions=[
            "The walk along the Fennick sea wall passes the marsh, the sluice and a row of beehives.",
            "Fennick is known for its saltmarsh, its birds and its honey.",
        ],
    ),
    Subject(
        qid="3",
        title="Vellin line night trains",
        description="What do reports say about the night train service on the Vellin line?",
        narrative=(
            "Relevant documents describe the night trains on the Vellin railway line: "
            "timetable, sleeping cars, punctuality, or the campaign that saved the "
            "service. Day trains and other railways are not relevant."
        ),
        aspects={
            "timetable": (
                "timetable and route",
                [
                    "The Vellin night train leaves the capital at 22:40 and reaches the coast at 06:15.",
                    "The night service on the Vellin line runs {small} nights a week and stops at every junction.",
                    "From {month} {year} the Vellin night train will also call at Orrin Halt.",
                ],
            ),
            "sleepers": (
                "sleeping cars and comfort",
                [
                    "The sleeping cars of the Vellin night train were refitted in {year} with wider berths.",
                    "Passengers on the Vellin sleeper are woken with tea and a bread roll half an hour before arrival.",
                    "Each Vellin sleeping car has {small} compartments and a small shower at one end.",
                ],
            ),
            "delays": (
                "punctuality and delays",
                [
                    "In {year} the Vellin night train arrived within ten minutes of schedule on {pct} percent of nights.",
                    "Engineering works on the Vellin viaduct delayed the night train by up to two hours in {month}.",
                    "Driver {first} {last} said most night-train delays on the Vellin line come from freight trains ahead.",
                ],
            ),
            "campaign": (
                "campaign that saved the service",
                [
                    "When the operator planned to cut the Vellin night train, {small} thousand people signed a petition.",
                    "The Friends of the Vellin Sleeper, led by {first} {last}, persuaded the ministry to fund the night trains.",
                    "The night service on the Vellin line was saved in {year} by a subsidy of {money} a year.",
                ],
            ),
        },
        core=[
            "The night trains on the Vellin line are the last sleeper service in the country.",
            "The Vellin line night train crosses the moors in darkness and follows the river to the coast.",
            "Night trains have run on the Vellin line since the railway opened.",
        ],
        headlines=[
            "All aboard the Vellin sleeper",
            "The night train that refused to die",
            "A night on the Vellin line",
        ],
        mentions=[
            "The Vellin line also carries day trains, freight and, once a week, a night service.",
            "Our reporter took the Vellin line to the coast for the weekend.",
        ],
    ),
    Subject(
        qid="4",
        title="mushroom farms in the Dunmore tunnels",
        description="Find reports on the mushroom farms in the disused Dunmore railway tunnels.",
        narrative=(
            "Relevant documents report on growing mushrooms in the old Dunmore railway "
            "tunnels: which mushrooms, growing conditions, the business and its "
            "workers, or safety concerns. Wild mushrooms and other farms are not "
            "relevant."
        ),
        aspects={
            "species": (
                "which mushrooms are grown",
                [
                    "The Dunmore tunnel farm grows oyster, shiitake and lion's mane mushrooms on straw and sawdust.",
                    "Pink oyster mushrooms from the Dunmore tunnels fruit in only {small} days.",
                    "The tunnel growers tried button mushrooms in {year} but found them less profitable than shiitake.",
                ],
            ),
            "climate": (
                "growing conditions in the tunnels",
                [
                    "The Dunmore tunnels stay between eleven and fourteen degrees all year, ideal for mushrooms.",
                    "Misting pipes keep the air in the mushroom tunnels at about {pct} percent above normal humidity.",
                    "Fans at both portals of the Dunmore tunnel change the air every {small} hours to clear carbon dioxide.",
                ],
            ),
            "business": (
                "the business and its workers",
                [
                    "The Dunmore mushroom farm employs {small} people and sells to restaurants in the city.",
                    "{first} {last} started the tunnel mushroom business with a loan of {money}.",
                    "Turnover of the Dunmore tunnel farm reached {money} in {year}.",
                ],
            ),
            "safety": (
                "safety in the old tunnels",
                [
                    "Engineers inspect the brick lining of the Dunmore tunnels every {month} before the growing season.",
                    "Workers in the mushroom tunnels carry gas monitors because of poor ventilation in the middle section.",
                    "A rockfall in {year} closed the north end of the Dunmore tunnel for {small} weeks.",
                ],
            ),
        },
        core=[
            "Mushrooms now grow in the disused Dunmore railway tunnels, closed to trains for decades.",
            "The Dunmore tunnels are dark, damp and cool, which suits mushrooms far better than trains.",
            "Racks of mushroom bags line both walls of the old Dunmore tunnel.",
        ],
        headlines=[
            "From steam to shiitake in the Dunmore tunnels",
            "Underground harvest: Dunmore's tunnel mushrooms",
            "Inside the Dunmore mushroom tunnels",
        ],
        mentions=[
            "The cycle path passes the bricked-up Dunmore tunnel where mushrooms are grown.",
            "Dunmore has a castle, a tunnel and a good bakery.",
        ],
    ),
    Subject(
        qid="5",
        title="restoration of the Callow clock tower",
        description="What has been reported about restoring the clock tower in Callow?",
        narrative=(
            "Relevant documents describe the restoration of the Callow town clock "
            "tower: the clock mechanism, the bells, the cost and who paid, and the "
            "craftspeople involved. Other clocks and towers are not relevant."
        ),
        aspects={
            "mechanism": (
                "the clock mechanism",
                [
                    "The Callow clock mechanism was taken apart and every brass wheel cleaned by hand.",
                    "Restorers found that the Callow clock's pendulum had been wound by hand every {small} days for a century.",
                    "The clockmaker {first} {last} replaced a worn escapement in the Callow tower clock.",
                ],
            ),
            "bells": (
                "the bells",
                [
                    "The {small} bells of the Callow clock tower were recast in {year}.",
                    "After the restoration the Callow tower bells strike the hours again, but are silent at night.",
                    "A cracked bell from the Callow clock tower now stands in the town museum.",
                ],
            ),
            "funding": (
                "cost and who paid",
                [
                    "Restoring the Callow clock tower cost {money}, raised by the town council and a heritage fund.",
                    "Residents of Callow gave {money} towards the clock tower appeal.",
                    "The restoration of the Callow tower came in {pct} percent under budget.",
                ],
            ),
            "craft": (
                "craftspeople and methods",
                [
                    "Stonemasons replaced {small} weathered blocks of the Callow clock tower with sandstone from the original quarry.",
                    "Gilders covered the hands of the Callow clock with new gold leaf.",
                    "Apprentice {first} {last} spent a summer repainting the four dials of the Callow tower.",
                ],
            ),
        },
        core=[
            "The Callow clock tower has stood in the market square since the town was rebuilt.",
            "The restoration of the Callow clock tower took {small} years to complete.",
            "Scaffolding came down from the Callow clock tower in {month} {year}.",
        ],
        headlines=[
            "Callow's clock ticks again",
            "Saving the Callow clock tower",
            "Time restored in Callow market square",
        ],
        mentions=[
            "Meet at the foot of the Callow clock tower for the guided walk.",
            "The market in Callow is held under the clock tower every Thursday.",
        ],
    ),
    Subject(
        qid="6",
        title="Orrin community seed library",
        description="Find documents about the seed library run by the Orrin community.",
        narrative=(
            "Relevant documents describe the Orrin community seed library: how "
            "borrowing and returning seed works, the local varieties it keeps, its "
            "volunteers and events. Book libraries and commercial seed sellers are "
            "not relevant."
        ),
        aspects={
            "borrowing": (
                "how borrowing and returning seed works",
                [
                    "Gardeners borrow seed from the Orrin seed library and return a share of seed from their harvest.",
                    "Each member of the Orrin seed library may take {small} packets a season.",
                    "Returned seed is dried, tested and labelled before it goes back on the Orrin library shelves.",
                ],
            ),
            "varieties": (
                "local varieties kept",
                [
                    "The Orrin seed library keeps {small} local bean varieties that no seed company sells.",
                    "The rarest seed in the Orrin library is a red-flowered pea grown in the valley since before {year}.",
                    "Volunteers at the Orrin seed library rescued an old Orrin cabbage from a single packet of seed.",
                ],
            ),
            "volunteers": (
                "volunteers who run it",
                [
                    "The Orrin seed library is run by {small} volunteers from a cupboard in the village hall.",
                    "{first} {last} founded the Orrin seed library in {year} with seed from her own garden.",
                    "Volunteers test the germination of every batch of seed returned to the Orrin library.",
                ],
            ),
            "events": (
                "seed swaps and events",
                [
                    "The Orrin seed swap in {month} drew {small} hundred gardeners to the village hall.",
                    "Children at the Orrin school plant seed from the community seed library each spring.",
                    "The seed library holds a talk on saving tomato seed every {month}.",
                ],
            ),
        },
        core=[
            "The Orrin community seed library lends seed to gardeners instead of books to readers.",
            "The seed library in Orrin keeps its packets in an old card-index cabinet.",
            "Anyone who gardens in Orrin can join the community seed library for free.",
        ],
        headlines=[
            "Borrow a bean: the Orrin seed library",
            "Orrin gardeners share their seed",
            "A library of seeds in Orrin village hall",
        ],
        mentions=[
            "The Orrin village hall hosts a toddler group, a seed library and a film club.",
            "Orrin lies at the end of the valley road, past the reservoir.",
        ],
    ),
]

# Distractor themes: ordinary local news that shares words with the topics.
DISTRACTORS = {
    "wind": [
        "The wind turbines on Hallam ridge were switched off during the gale.",
        "Wind farm operators say the new turbines are quieter than the old ones.",
        "A planning inquiry into {small} more wind turbines opens in {month}.",
    ],
    "watch": [
        "The watch repair shop on Mill Street has closed after {small} decades.",
        "{first} {last} repairs pocket watches and mantel clocks in a workshop behind the post office.",
        "An antique clock sold at auction for {money} in {year}.",
    ],
    "books": [
        "The county library will open on Sundays from {month}.",
        "Readers borrowed {pct} percent more books from the mobile library this year.",
        "A new reading room was added to the library in {year}.",
    ],
    "food": [
        "Mix the flour, butter and honey, then bake for twenty minutes.",
        "The farmers' market now has {small} stalls selling cheese, bread and vegetables.",
        "Fried mushrooms on toast remain the most popular breakfast at the station cafe.",
    ],
    "rail": [
        "Freight trains carrying timber will use the branch line from {month}.",
        "The station car park will close for resurfacing on {weekday}.",
        "Commuters complained about overcrowded morning trains to the city.",
    ],
    "sport": [
        "The harbour rowing club won the regional regatta by {small} lengths.",
        "Callow Rovers drew two all with Dunmore Athletic on {weekday}.",
        "The marathon route follows the sea wall and ends in the market square.",
    ],
    "weather": [
        "Heavy rain is expected on {weekday}, with gales on the coast.",
        "{month} was the wettest month on record for the valley.",
        "Frost damaged early potatoes in gardens across the county.",
    ],
    "bees": [
        "Beekeepers in the hill villages lost {pct} percent of their hives over the winter.",
        "The county beekeeping association meets on the first {weekday} of the month.",
        "Heather honey from the moors sells out every autumn.",
    ],
    "tunnels": [
        "The road tunnel under the estuary will close overnight for maintenance.",
        "Bats roost in the old canal tunnel near the lock.",
        "Railway tunnels across the region are inspected after a brick fell onto the track.",
    ],
    "seeds": [
        "The garden centre has a sale on seed potatoes and onion sets.",
        "A national seed company recalled {small} batches of mislabelled tomato seed.",
        "Seed catalogues seem to arrive earlier every year.",
    ],
    "harbour": [
        "The harbour master warned yachts about strong tides at the harbour mouth.",
        "Fishing boats stayed in the harbour during the storm.",
        "The harbour wall will be repaired this summer at a cost of {money}.",
    ],
    "towers": [
        "The church tower bells will ring for the wedding on {weekday}.",
        "A water tower on the industrial estate is to be demolished in {month}.",
        "The community radio mast replaced the old tower on the hill in {year}.",
    ],
    "night": [
        "Night buses will run every half hour during the festival week.",
        "The night shift at the dairy starts at ten.",
        "Hotels near the station offer cheap rooms for a single night.",
    ],
    "council": [
        "The council meets on {weekday} to discuss parking charges.",
        "A new roundabout on the ring road will cost {money}.",
        "Councillor {first} {last} has called for more street lighting.",
    ],
}

FILLER = [
    "Residents were invited to a public meeting on {weekday} evening.",
    "The local paper first reported the story in {month} {year}.",
    "More information is available from the town hall.",
    "Photographs from the day are on display in the library until {month}.",
    "Not everyone in the town is convinced.",
]
