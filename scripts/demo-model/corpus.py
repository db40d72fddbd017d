#!/usr/bin/env python3
"""Synthetic training corpus for poot's bundled demo model.

Short children's stories and simple chat dialogues from a procedural grammar
of the project's own making: characters (children and animals), places,
objects, actions, feelings, weather, simple cause and effect, and dialogue,
with several sentence templates for every story beat. Everything is
deterministic from a seed: document i is made by random.Random(seed * 1_000_003 + i),
so the corpus can be generated in parallel and still be reproducible.

Documents come in two kinds:
  * stories: plain text, one story per document;
  * chats: a list of {"role", "content"} messages, rendered by the trainer
    through the model's chat template.

Usage:
  python3 corpus.py --seed 1 --count 5        # print a few documents
  python3 corpus.py --seed 1 --count 1000 --out corpus.txt
"""

import argparse
import json
import random

# --------------------------------------------------------------------------
# The world.

GIRLS = ["Lily", "Mia", "Sara", "Anna", "Emma", "Lucy", "Zoe", "Ella", "Ruby", "Nora", "Kim",
         "Rosa", "Ivy", "Maya", "Lena", "Amy", "Jane", "Sophie", "Lola", "Daisy", "Molly",
         "Grace", "Alice", "Clara", "Hannah", "Julia", "Nina", "Tina", "Bella", "Mila"]
BOYS = ["Tom", "Ben", "Max", "Jack", "Sam", "Leo", "Tim", "Finn", "Noah", "Jake", "Dan", "Eli",
        "Oscar", "Hugo", "Theo", "Leon", "Pete", "Bob", "Alex", "Luke", "Ryan", "Jim", "Adam",
        "Oliver", "Henry", "Felix", "Milo", "Toby", "Owen", "Nick"]

# kind: (sound, home, food, how it moves, baby word)
ANIMALS = {
    "cat": ("meow", "in a cozy house", "fish", "ran", "kitten"),
    "dog": ("woof", "in a little house in the yard", "bones", "ran", "puppy"),
    "bunny": ("nothing at all", "in a hole under the ground", "carrots", "hopped", "bunny"),
    "bird": ("tweet", "in a nest in a tree", "seeds", "flew", "chick"),
    "fox": ("yip", "in a den in the forest", "berries", "ran", "cub"),
    "bear": ("grr", "in a big cave", "honey", "walked", "cub"),
    "duck": ("quack", "in a pond", "bread", "waddled", "duckling"),
    "frog": ("ribbit", "in a pond", "bugs", "jumped", "tadpole"),
    "mouse": ("squeak", "in a small hole in the wall", "cheese", "ran", "mouse"),
    "owl": ("hoot", "in a hole in an old tree", "bugs", "flew", "owlet"),
    "pig": ("oink", "on a farm", "apples", "trotted", "piglet"),
    "lamb": ("baa", "on a farm", "grass", "ran", "lamb"),
    "turtle": ("nothing at all", "in a pond", "leaves", "walked", "turtle"),
    "squirrel": ("chit chit", "in a tree", "nuts", "ran", "squirrel"),
    "horse": ("neigh", "in a barn", "hay", "ran", "foal"),
    "cow": ("moo", "on a farm", "grass", "walked", "calf"),
    "hen": ("cluck", "on a farm", "corn", "walked", "chick"),
    "lion": ("roar", "on the grassland", "meat", "ran", "cub"),
    "monkey": ("ooh ooh", "in the jungle", "bananas", "climbed", "baby monkey"),
    "elephant": ("toot", "on the grassland", "leaves", "walked", "calf"),
}
ANIMAL_NAMES = ["Whiskers", "Spot", "Fluffy", "Pip", "Coco", "Buddy", "Sunny", "Bubbles",
                "Max", "Rosie", "Nutmeg", "Pebble", "Daisy", "Biscuit", "Ziggy", "Honey",
                "Patch", "Momo", "Tiny", "Ginger", "Shadow", "Clover", "Lucky", "Peanut"]
FLYERS = {"bird", "owl", "duck", "hen"}

TRAITS = ["little", "happy", "kind", "brave", "curious", "shy", "silly", "clever", "gentle",
          "playful", "friendly", "busy", "sleepy", "cheerful", "small", "funny", "quiet"]
TRAIT_LOVES = {
    "little": "to play outside",
    "happy": "to sing and dance",
    "kind": "to help others",
    "brave": "to explore new places",
    "curious": "to look at new things",
    "shy": "to read quiet books",
    "silly": "to make funny faces",
    "clever": "to solve puzzles",
    "gentle": "to take care of flowers",
    "playful": "to run and jump",
    "friendly": "to make new friends",
    "busy": "to build things",
    "sleepy": "to nap in the sun",
    "cheerful": "to laugh with friends",
    "small": "to play hide and seek",
    "funny": "to tell jokes",
    "quiet": "to watch the clouds",
}

# place: (article form, features, things one does there)
PLACES = {
    "park": ("the park", ["a big tree", "the swings", "a long slide", "a green bench"],
             ["played on the swings", "went down the slide", "ran on the grass"]),
    "garden": ("the garden", ["the flowers", "a small bush", "the fence", "a tall sunflower"],
               ["watered the flowers", "looked at the bugs", "picked some berries"]),
    "forest": ("the forest", ["a big tree", "a old log", "a pile of leaves", "a small stream"],
               ["walked under the tall trees", "listened to the birds", "collected pine cones"]),
    "beach": ("the beach", ["the sand", "a big rock", "the water", "a sand castle"],
              ["built a sand castle", "splashed in the water", "looked for shells"]),
    "farm": ("the farm", ["the barn", "a hay pile", "the fence", "the big red tractor"],
             ["fed the animals", "rode on the tractor", "jumped in the hay"]),
    "lake": ("the lake", ["the water", "a small boat", "the tall grass", "a wooden dock"],
             ["threw stones in the water", "watched the ducks", "sat on the dock"]),
    "hill": ("the hill", ["the top of the hill", "a big rock", "the tall grass", "a lonely tree"],
             ["rolled down the hill", "flew a kite", "looked at the town below"]),
    "meadow": ("the meadow", ["the flowers", "the tall grass", "a small pond", "a big rock"],
               ["picked flowers", "chased butterflies", "rolled in the grass"]),
    "playground": ("the playground", ["the slide", "the sandbox", "the swings", "the monkey bars"],
                   ["played in the sandbox", "climbed the monkey bars", "went down the slide"]),
    "backyard": ("the backyard", ["the fence", "a big tree", "the sandbox", "a flower pot"],
                 ["played catch", "dug in the dirt", "jumped on the grass"]),
    "library": ("the library", ["a tall shelf", "a soft chair", "a big table", "a reading corner"],
                ["read a book about animals", "looked at the pictures", "listened to a story"]),
    "market": ("the market", ["a fruit stand", "a big basket", "a flower stand", "a bread stand"],
               ["bought some apples", "smelled the fresh bread", "looked at the flowers"]),
    "pond": ("the pond", ["the water", "a lily pad", "the tall reeds", "a flat stone"],
             ["watched the frogs", "threw bread to the ducks", "looked at the fish"]),
    "river": ("the river", ["the water", "a small bridge", "a big rock", "the sandy bank"],
              ["skipped stones", "watched the fish swim", "walked on the bridge"]),
    "zoo": ("the zoo", ["the lion cage", "the monkey house", "a big pond", "the gate"],
            ["saw the lions", "waved at the monkeys", "fed the goats"]),
    "town": ("the town", ["the bakery", "a toy shop", "the fountain", "the big clock"],
             ["walked by the shops", "looked at the fountain", "visited the bakery"]),
}
INDOOR = {"library", "market", "zoo", "town"}

COLORS = ["red", "blue", "green", "yellow", "pink", "purple", "orange", "white", "brown", "shiny"]

# object: (verb phrase for playing with it, can it be colored, can it fly away, is it a pair)
OBJECTS = {
    "ball": ("play catch with", True, False),
    "kite": ("fly", True, True),
    "hat": ("wear", True, True),
    "book": ("read", True, False),
    "toy car": ("play with", True, False),
    "doll": ("play with", False, False),
    "teddy bear": ("hug", False, False),
    "shell": ("look at", False, False),
    "balloon": ("hold", True, True),
    "box": ("open", True, False),
    "key": ("keep", False, False),
    "drum": ("play", True, False),
    "boat": ("sail", True, False),
    "flower": ("smell", True, False),
    "map": ("read", False, True),
    "bell": ("ring", False, False),
    "blanket": ("cuddle with", True, False),
    "crayon": ("draw with", True, False),
    "scarf": ("wear", True, True),
    "bucket": ("fill with sand", True, False),
    "puzzle": ("solve", False, False),
    "robot": ("play with", False, False),
    "whistle": ("blow", False, False),
    "rock": ("keep", False, False),
}

FEELINGS_GOOD = ["happy", "glad", "proud", "excited", "calm", "thankful", "safe", "warm"]
FEELINGS_BAD = ["sad", "scared", "worried", "upset", "lonely", "tired", "angry", "confused"]

FOODS = ["cookies", "apples", "a sandwich", "soup", "pancakes", "cake", "berries", "a pie",
         "bread", "rice", "a banana", "carrots"]

WEATHER_BAD = [
    ("rain", "it started to rain", "the rain stopped"),
    ("wind", "a strong wind began to blow", "the wind became calm"),
    ("storm", "dark clouds came and a storm began", "the storm went away"),
    ("snow", "soft snow began to fall", "the snow stopped falling"),
]

TIMES = ["One day", "One morning", "One sunny day", "One afternoon", "One evening",
         "One cold morning", "One warm day", "One bright morning", "Last summer", "One windy day"]

PARENTS = ["mom", "dad", "grandma", "grandpa"]

SKILLS = [("ride a bike", "rode the bike", "fell off the bike"),
          ("swim", "swam across the pool", "sank and got water in the nose"),
          ("climb the big tree", "climbed to the top", "slipped down"),
          ("tie shoes", "tied a perfect bow", "made a big knot"),
          ("jump rope", "jumped ten times in a row", "tripped on the rope"),
          ("whistle", "made a loud whistle", "only made a soft puff of air"),
          ("skate", "skated all around", "fell on the ice"),
          ("bake bread", "baked a warm loaf", "burned the bread")]

FEARS = [("the dark", "the lights went out", "the dark is just the night, and the stars are there to keep us company"),
         ("thunder", "a loud boom came from the sky", "thunder is only the sound of the clouds, and it cannot hurt us"),
         ("the big dog next door", "the big dog barked", "the dog only barks to say hello"),
         ("the deep water", "the water came up high", "the water is fun when you are careful and stay close"),
         ("the old house", "the door of the old house creaked", "the house is just old and the noise is only the wind"),
         ("the tall slide", "it was time to go down the slide", "the slide is safe and it is fun to go fast")]

MAKES = [("a cake", "mixed the flour, the eggs and the sugar", "put it in the oven",
          "The cake was sweet and soft"),
         ("a sand castle", "dug the sand and filled the bucket", "made four tall towers",
          "The castle was the biggest one on the beach"),
         ("a picture", "took out the paper and the crayons", "drew a sun, a house and a tree",
          "The picture was bright and beautiful"),
         ("a snowman", "rolled three big balls of snow", "gave it a carrot nose",
          "The snowman smiled with its stone mouth"),
         ("a garden", "dug small holes in the dirt", "put a seed in each hole and gave them water",
          "Soon, green plants grew and pretty flowers came up"),
         ("a tower of blocks", "stacked the blocks one by one", "put the last block on top",
          "The tower was taller than the table"),
         ("a paper boat", "folded the paper again and again", "put the boat on the water",
          "The little boat floated and sailed away"),
         ("a birthday card", "cut the paper and glued on a heart", "wrote a happy note inside",
          "The card was full of color and love")]

# --------------------------------------------------------------------------
# Characters.


class Char:
    """A character with a name, a kind and pronouns."""

    def __init__(self, name, kind, female, trait, animal):
        self.name, self.kind, self.female, self.trait, self.animal = name, kind, female, trait, animal
        self.he = "she" if female else "he"
        self.him = "her" if female else "him"
        self.his = "her" if female else "his"

    def intro(self, rng):
        """First mention: 'a little girl named Lily'."""
        trait = self.trait
        art = "an" if trait[0] in "aeiou" else "a"
        return f"{art} {trait} {self.kind} named {self.name}"


def pick_name(rng, female, used):
    pool = GIRLS if female else BOYS
    while True:
        n = rng.choice(pool)
        if n not in used:
            used.add(n)
            return n


def make_char(rng, used, animal=None, kind=None, trait=None, female=None):
    if female is None:
        female = rng.random() < 0.5
    if animal is None:
        animal = rng.random() < 0.35
    if trait is None:
        trait = rng.choice(TRAITS)
    if animal:
        if kind is None:
            kind = rng.choice(list(ANIMALS))
        while True:
            name = rng.choice(ANIMAL_NAMES)
            if name not in used:
                used.add(name)
                break
        return Char(name, kind, female, trait, True)
    if kind is None:
        kind = "girl" if female else "boy"
    return Char(pick_name(rng, female, used), kind, female, trait, False)


def cap(s):
    return s[:1].upper() + s[1:]


def a_an(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


# --------------------------------------------------------------------------
# Story pieces. Each returns a list of sentences (strings ending in
# punctuation) and uses the context dictionary for consistency.


class Story:
    def __init__(self, rng, hero=None, place=None, obj=None):
        self.rng = rng
        self.used = set()
        self.hero = hero or make_char(rng, self.used)
        self.used.add(self.hero.name)
        self.friend = make_char(rng, self.used, animal=self.hero.animal and rng.random() < 0.7)
        self.parent = rng.choice(PARENTS)
        self.place = place or rng.choice(list(PLACES))
        self.obj = obj or rng.choice(list(OBJECTS))
        self.color = rng.choice(COLORS) if OBJECTS[self.obj][1] else None
        self.sents = []
        self.paras = []

    # helpers ------------------------------------------------------------
    def c(self, options):
        return self.rng.choice(options)

    def say(self, s):
        self.sents.append(s)

    def para(self):
        if self.sents:
            self.paras.append(" ".join(self.sents))
            self.sents = []

    def objname(self, with_color=True):
        if with_color and self.color:
            return f"{self.color} {self.obj}"
        return self.obj

    def place_name(self):
        return PLACES[self.place][0]

    def parent_of(self, ch):
        return f"{ch.his} {self.parent}"

    def quote(self, speaker, line, verb="said"):
        """A dialogue line with a few layouts."""
        r = self.rng.random()
        if line.endswith("?"):
            verb = "asked" if verb == "said" else verb
        if r < 0.45:
            body = line[:-1] + "," if line.endswith(".") else line
            return f'"{body}" {verb} {speaker}.'
        if r < 0.8:
            return f'{cap(speaker)} {verb}, "{line}"'
        body = line[:-1] + "," if line.endswith(".") else line
        return f'"{body}" {speaker} {verb} with a smile.' if verb == "said" else f'"{body}" {verb} {speaker}.'

    # openings -------------------------------------------------------------
    def opening(self):
        h, rng = self.hero, self.rng
        t = rng.random()
        if t < 0.4:
            self.say(f"Once upon a time, there was {h.intro(rng)}.")
        elif t < 0.6:
            self.say(f"Once upon a time, {self.c(['in a small town', 'in a quiet village', 'in a little house', 'in a big forest', 'on a sunny farm', 'near a blue lake'])}, "
                     f"there lived {h.intro(rng)}.")
        elif t < 0.8:
            self.say(f"There was once {h.intro(rng)}.")
        else:
            self.say(f"{self.c(TIMES)}, {h.intro(rng)} went to {self.place_name()}.")
            return
        r = rng.random()
        if r < 0.35:
            self.say(f"{cap(h.he)} loved {TRAIT_LOVES[h.trait]}.")
        elif r < 0.6 and h.animal:
            self.say(f"{h.name} lived {ANIMALS[h.kind][1]} and liked to eat {ANIMALS[h.kind][2]}.")
        elif r < 0.8:
            self.say(f"{h.name} had {a_an(self.objname())} that {h.he} loved very much.")
            self.has_obj = True
        else:
            self.say(f"{h.name} liked to play with {h.his} friend {self.friend.name}, "
                     f"{a_an(self.friend.trait + ' ' + self.friend.kind)}.")
            self.friend_known = True
        self.say(f"{self.c(TIMES)}, {h.name} went to {self.place_name()}"
                 f"{self.c(['', ' with ' + self.parent_of(h), ' to play', ' to have fun'])}.")

    def meet_friend(self):
        h, f = self.hero, self.friend
        if getattr(self, "friend_known", False):
            self.say(f"{f.name} was there too.")
        else:
            self.say(self.c([
                f"There, {h.he} met {f.intro(self.rng)}.",
                f"At {self.place_name()}, {h.he} saw {f.intro(self.rng)}.",
                f"{cap(h.he)} met {a_an(f.trait + ' ' + f.kind)} named {f.name}.",
            ]))
            ask, answer = self.c([
                ("Hello! Do you want to play with me?", "Yes, let's play together!"),
                ("Hi! My name is " + f.name + ". Can I play too?", "Hi! I am " + h.name + ". Sure, come and play!"),
                ("Hello! What are you doing?", "I am playing. Do you want to play with me?"),
                ("Hi! Can we be friends?", "Yes! Let's be friends!")])
            self.say(self.quote(f.name, ask))
            self.say(self.quote(h.name, answer))
        self.friend_known = True

    def play_at_place(self):
        h = self.hero
        acts = PLACES[self.place][2]
        a1, a2 = self.rng.sample(acts, 2)
        self.say(self.c([
            f"{h.name} {a1} and {a2}.",
            f"First, {h.he} {a1}. Then {h.he} {a2}.",
            f"{cap(h.he)} {a1}, and it was so much fun.",
        ]))

    # plots ------------------------------------------------------------------
    def plot_lost(self):
        h, f, rng = self.hero, self.friend, self.rng
        o = self.objname()
        self.opening()
        self.play_at_place()
        feat = self.c(PLACES[self.place][1])
        self.say(self.c([f"Then {h.name} looked for {h.his} {o}, but it was gone!",
                         f"When it was time to go home, {h.name} could not find {h.his} {o}.",
                         f"Suddenly, {h.name} saw that {h.his} {o} was not there."]))
        self.say(f"{h.name} felt {self.c(['sad', 'worried', 'upset'])}.")
        self.say(self.quote(h.name, self.c([f"Where is my {self.obj}?", f"Oh no! I lost my {self.obj}!",
                                            f"I need to find my {self.obj}."]), "cried"))
        self.para()
        self.meet_friend() if not getattr(self, "friend_known", False) or rng.random() < 0.5 else None
        self.say(self.quote(f.name, self.c(["Don't be sad. I will help you look for it.",
                                            "I can help you! Let's look together.",
                                            "Let's find it together."])))
        wrong = self.c([p for p in PLACES[self.place][1] if p != feat])
        self.say(self.c([f"They looked near {wrong}, but the {self.obj} was not there.",
                         f"First they looked near {wrong}. There was nothing there."]))
        self.say(self.c([f"Then {f.name} saw something {self.color or 'small'} near {feat}.",
                         f"Then they looked behind {feat}, and there it was!"]))
        self.say(self.quote(f.name, self.c([f"Look! I found your {self.obj}!", f"Here it is!"]), "shouted"))
        self.para()
        self.say(f"{h.name} was so {self.c(['happy', 'glad', 'thankful'])}. {cap(h.he)} gave {f.name} a big hug.")
        self.say(self.quote(h.name, self.c(["Thank you for helping me!", "You are a good friend!",
                                             "Thank you! You are the best!"])))
        self.say(self.c([f"From that day on, {h.name} and {f.name} were best friends.",
                         f"After that, {h.name} always kept {h.his} {self.obj} close.",
                         f"They played together until the sun went down.",
                         f"{h.name} learned that friends help each other."]))

    def plot_stuck(self):
        h, f = self.hero, self.friend
        o = self.objname()
        self.opening()
        if not getattr(self, "has_obj", False):
            self.say(f"{cap(h.he)} had {a_an(o)} with {h.him}.")
        self.say(f"{h.name} wanted to {OBJECTS[self.obj][0]} the {self.obj}.")
        spot, cause = self.c([
            ("up in a tall tree", "a big wind came and blew it away"),
            ("on the roof", f"{h.he} threw it too high"),
            ("in the middle of the pond", "it slipped from " + h.his + " hands and fell in the water"),
            ("on top of a high shelf", "it bounced and jumped away"),
            ("in a thorny bush", "it rolled away down the path"),
        ])
        self.say(f"But {cause}, and the {self.obj} got stuck {spot}.")
        self.say(f"{h.name} could not reach it. {cap(h.he)} felt {self.c(['sad', 'upset', 'worried'])}.")
        self.para()
        self.meet_friend() if not getattr(self, "friend_known", False) else None
        self.say(self.quote(f.name, "What is wrong?"))
        self.say(self.quote(h.name, f"My {self.obj} is stuck {spot}, and I cannot get it."))
        tool, way = self.c([
            ("a long stick", "pushed the " + self.obj + " gently"),
            ("a ladder", "climbed up carefully"),
            ("a rope", "pulled and pulled"),
            ("a big box", "stood on it and reached up high"),
        ])
        if f.kind in FLYERS:
            self.say(f"{f.name} had an idea. {cap(f.he)} flew up and got the {self.obj} with {f.his} beak.")
        else:
            self.say(self.c([f"{f.name} had an idea. {cap(f.he)} found {tool} and {way}.",
                             f"{f.name} thought for a moment. Then {f.he} got {tool} and {way}."]))
            self.say(self.c(["At last, the " + self.obj + " came down.",
                             "Soon the " + self.obj + " was free!"]))
        self.para()
        self.say(f"{h.name} was very {self.c(['happy', 'glad', 'thankful'])}.")
        self.say(self.quote(h.name, self.c(["Thank you, " + f.name + "! You are so clever!",
                                             "Thank you for helping me!"])))
        self.say(self.c([f"Then they played with the {self.obj} together, and they were careful not to lose it again.",
                         f"{h.name} and {f.name} became good friends.",
                         f"Because {f.name} helped {h.him}, {h.name} had a wonderful day."]))

    def plot_share(self):
        h, f = self.hero, self.friend
        o = self.objname()
        self.opening()
        if not getattr(self, "has_obj", False):
            self.say(f"{cap(h.he)} had a new {o}.")
        self.meet_friend() if not getattr(self, "friend_known", False) else None
        self.say(f"{f.name} saw the {self.obj} and wanted to {OBJECTS[self.obj][0]} it too.")
        self.say(self.quote(f.name, self.c([f"Can I {OBJECTS[self.obj][0]} your {self.obj}, please?",
                                            f"Can I play with your {self.obj}?",
                                            f"May I try your {self.obj}?"])))
        self.para()
        self.say(self.quote(h.name, self.c([f"No, it is my {self.obj}!", "No, it is mine!",
                                             f"No, I want to keep it."])))
        self.say(f"{f.name} felt {self.c(['sad', 'lonely', 'upset'])} and walked away.")
        self.say(self.c([f"{h.name} played alone, but it was not fun anymore.",
                         f"{h.name} looked at {f.name} and felt bad.",
                         f"Soon {h.name} saw that playing alone was no fun."]))
        self.say(self.c([f"{cap(h.he)} thought about how {f.name} felt.",
                         f"{cap(h.he)} remembered what {h.his} {self.parent} always said: sharing is caring."]))
        self.para()
        self.say(f"{h.name} ran to {f.name}.")
        self.say(self.quote(h.name, self.c([f"I am sorry. Let's play with my {self.obj} together.",
                                             f"Here, you can {OBJECTS[self.obj][0]} it too. I am sorry."])))
        self.say(f"{f.name} smiled. They took turns and had so much fun.")
        self.say(self.c([f"{h.name} learned that sharing makes everyone happy.",
                         "Sharing made the day better for both of them.",
                         f"From then on, {h.name} always shared {h.his} toys."]))

    def plot_weather(self):
        h, f = self.hero, self.friend
        name, start, stop = self.c(WEATHER_BAD)
        self.opening()
        if self.place in INDOOR:
            self.place = self.c([p for p in PLACES if p not in INDOOR])
            self.say(f"After that, {h.he} went to {self.place_name()}.")
        self.play_at_place()
        self.say(f"But then {start}.")
        self.say(self.c([f"{h.name} did not want to get cold, so {h.he} ran home.",
                         f"Because of the {name}, {h.name} had to go inside.",
                         f"{h.name} and {h.his} {self.parent} went back home."]))
        self.say(f"{h.name} felt {self.c(['sad', 'bored', 'upset'])}.")
        self.say(self.quote(h.name, self.c([f"I wanted to play outside!", "Now I cannot play!"])))
        self.para()
        food = self.c(FOODS)
        self.say(self.quote(f"{h.his} {self.parent}", self.c([
            "We can play a game inside.", f"Let's make {food} together.",
            "Let's read a story while we wait."])))
        self.say(self.c([f"They played a fun game on the floor.",
                         f"They made {food} together, and it was yummy.",
                         f"They read a book about a brave little {self.c(list(ANIMALS))}."]))
        self.say(f"{h.name} felt {self.c(['happy', 'warm', 'calm'])} again.")
        self.para()
        self.say(f"After a while, {stop}. {self.c(['The sun came out.', 'The sky was blue again.', 'There was a big rainbow in the sky.'])}")
        self.say(self.c([f"{h.name} ran outside and played until dinner.",
                         f"{h.name} learned that a {name}y day can still be a good day." if name != "snow" else f"{h.name} learned that a snowy day can still be a good day.",
                         f"It was a good day after all."]))

    def plot_fear(self):
        h = self.hero
        fear, event, calm = self.c(FEARS)
        self.opening()
        self.say(f"But {h.name} was afraid of {fear}.")
        self.say(f"One night, {event}." if fear in ("the dark", "thunder") else f"One day, {event}.")
        self.say(f"{h.name} felt {self.c(['scared', 'afraid', 'very scared'])} and {self.c(['started to cry', 'hid under the blanket', 'ran to ' + h.his + ' ' + self.parent])}.")
        self.say(self.quote(h.name, self.c(["I am scared!", f"I do not like {fear}!"]), "cried"))
        self.para()
        self.say(f"{cap(h.his)} {self.parent} gave {h.him} a hug.")
        self.say(self.quote(f"{h.his} {self.parent}", f"Do not be afraid. {cap(calm)}."))
        self.say(self.c([f"{h.name} took a deep breath.", f"{h.name} held {h.his} {self.parent}'s hand."]))
        self.say(self.c([f"{cap(h.he)} looked again, and it was not so scary.",
                         f"Slowly, {h.he} felt brave."]))
        self.para()
        self.say(self.quote(h.name, self.c(["I am not scared anymore!", "I can be brave!"])))
        self.say(self.c([f"From that day on, {h.name} was not afraid of {fear}.",
                         f"{h.name} learned that being brave means trying even when you are scared.",
                         f"{h.name} smiled, and {h.his} {self.parent} smiled too."]))

    def plot_skill(self):
        h, f = self.hero, self.friend
        skill, done, fail = self.c(SKILLS)
        self.opening()
        self.say(f"{h.name} wanted to learn to {skill}.")
        self.say(f"{cap(h.he)} tried, but {h.he} {fail}.")
        self.say(f"{h.name} felt {self.c(['sad', 'upset', 'tired'])}.")
        self.say(self.quote(h.name, self.c([f"I can not do it!", "It is too hard!"]), "cried"))
        self.para()
        helper = self.c([f"{h.his} {self.parent}", f.name if getattr(self, "friend_known", False) else f"{h.his} friend {f.name}"])
        self.say(self.quote(helper, self.c(["Do not give up. Try again, slowly.",
                                           "Everyone falls at first. Let's try again together.",
                                           "You can do it! Just keep trying."])))
        self.say(f"So {h.name} tried again. And again. And again.")
        self.say(self.c([f"Every day {h.he} got a little better.",
                         f"It was hard, but {h.he} did not stop."]))
        self.para()
        self.say(f"At last, {h.name} {done}!")
        self.say(self.quote(h.name, self.c(["I did it!", "Look! I can do it!"]), "shouted"))
        self.say(f"{h.name} felt {self.c(['proud', 'so happy', 'very proud'])}.")
        self.say(self.c([f"{h.name} learned that if you keep trying, you can do hard things.",
                         "Trying again was the best idea.",
                         f"{cap(helper)} clapped and cheered for {h.him}."]))

    def plot_make(self):
        h, f = self.hero, self.friend
        thing, step1, step2, result = self.c(MAKES)
        self.opening()
        helper = self.c([f"{h.his} {self.parent}", f.name if getattr(self, "friend_known", False) else f"{h.his} friend {f.name}"])
        self.say(f"{h.name} wanted to make {thing}.")
        self.say(self.quote(h.name, f"Will you help me make {thing}?"))
        self.say(self.quote(helper, self.c(["Yes, of course!", "Sure! That sounds like fun!"])))
        self.para()
        self.say(f"First, they {step1}.")
        if self.rng.random() < 0.5:
            oops = self.c(["it fell down", "they made a big mess", "it did not look right"])
            self.say(f"Oh no, {oops}!")
            self.say(self.c(["But they did not give up.", "They laughed and started again."]))
        self.say(f"Then they {step2}.")
        self.say(f"{result}.")
        self.para()
        self.say(f"{h.name} was {self.c(['very proud', 'so happy', 'excited'])}.")
        self.say(self.quote(h.name, self.c([f"We made {thing} together!", "Thank you for helping me!"])))
        self.say(self.c([f"They showed it to everyone, and everyone smiled.",
                         f"It was the best day ever.",
                         f"{h.name} learned that working together makes things fun."]))

    def plot_help_animal(self):
        h = self.hero
        kind = self.c([k for k in ANIMALS if k != h.kind])
        hurt = self.c(["had a hurt leg", "was stuck in a net", "was lost and alone", "was cold and hungry"])
        self.opening()
        self.play_at_place()
        self.say(f"Then {h.name} heard a small sound. It was a little {kind}.")
        self.say(f"The {kind} {hurt}.")
        self.say(self.quote(h.name, self.c([f"Poor little {kind}! I will help you.",
                                             "Do not worry. I am here to help."])))
        self.para()
        fix = {"had a hurt leg": "wrapped the leg in a soft cloth",
               "was stuck in a net": "slowly pulled the net away",
               "was lost and alone": f"helped it find its way back home",
               "was cold and hungry": f"gave it some {ANIMALS[kind][2]} and a warm blanket"}[hurt]
        self.say(f"{h.name} {fix}.")
        self.say(self.c([f"The {kind} said {ANIMALS[kind][0]}, as if to say thank you." if ANIMALS[kind][0] != "nothing at all"
                         else f"The {kind} looked at {h.name} with big, thankful eyes.",
                         f"Soon the {kind} felt much better."]))
        self.para()
        self.say(f"{h.name} felt {self.c(['warm inside', 'happy', 'proud'])}.")
        self.say(self.c([f"After that, the {kind} visited {h.name} every day.",
                         f"{h.name} learned that it is good to be kind to animals.",
                         f"The {kind} and {h.name} became best friends."]))

    def plot_gift(self):
        h, f = self.hero, self.friend
        o = self.objname()
        self.opening()
        self.meet_friend() if not getattr(self, "friend_known", False) else None
        self.say(f"Tomorrow was {f.name}'s birthday.")
        self.say(f"{h.name} wanted to give {f.name} a special gift.")
        self.say(self.c([f"{cap(h.he)} thought and thought.", f"{cap(h.he)} did not know what to give."]))
        self.para()
        self.say(self.c([f"Then {h.he} saw {a_an(o)} in a shop window.",
                         f"Then {h.he} found {a_an(o)} at {self.place_name()}."]))
        self.say(self.quote(h.name, f"{cap(f.name)} will love this {self.obj}!"))
        self.say(f"{cap(h.he)} wrapped it in {self.c(COLORS[:7])} paper with a big bow.")
        self.para()
        self.say(f"The next day, {h.name} gave the gift to {f.name}.")
        self.say(f"{f.name} opened it and {self.c(['jumped with joy', 'gave a big smile', 'laughed happily'])}.")
        self.say(self.quote(f.name, f"Thank you! I love my new {self.obj}!"))
        self.say(self.c([f"They played with the {self.obj} all day long.",
                         f"{h.name} learned that giving can feel even better than getting.",
                         "It was the best birthday ever."]))

    def plot_find(self):
        h, f = self.hero, self.friend
        self.opening()
        self.play_at_place()
        feat = self.c(PLACES[self.place][1])
        thing = self.c(["a shiny key", "an old map", "a small box", "a golden bell", "a tiny egg"])
        self.say(f"Near {feat}, {h.name} found {thing}.")
        self.say(self.quote(h.name, self.c([f"What is this?", "Wow! Look at this!"])))
        self.para()
        if thing == "a shiny key":
            self.say(f"{h.name} showed the key to {h.his} {self.parent}. They found an old box, and the key opened it!")
            self.say(f"Inside the box, there were {self.c(['old toys', 'pretty pictures', 'shiny stones'])}.")
        elif thing == "an old map":
            self.say(f"The map had a big red X on it. {h.name} and {f.name} followed the map.")
            self.say(f"At the X, they found a box full of {self.c(['candy', 'toys', 'books', 'shells'])}.")
        elif thing == "a small box":
            self.say(f"{h.name} opened the box. Inside was a {self.c(['note', 'ring', 'tiny toy', 'seed'])}.")
            self.say(f"{cap(h.he)} took it home and showed it to {h.his} {self.parent}.")
        elif thing == "a golden bell":
            self.say(f"{h.name} rang the bell. Ding, ding! All the birds came to sing.")
            self.say(f"The music was so pretty that everyone stopped to listen.")
        else:
            self.say(f"{h.name} kept the egg warm. The next day, the egg cracked, and a baby bird came out!")
            self.say(f"The baby bird said tweet. {h.name} took it back to its nest in a tree.")
        self.para()
        self.say(f"{h.name} felt {self.c(['excited', 'happy', 'amazed'])}.")
        self.say(self.c(["It was a day full of surprises.",
                         f"{h.name} could not wait to tell everyone about it.",
                         f"{h.name} learned that there are surprises everywhere if you look closely."]))

    PLOTS = ["plot_lost", "plot_stuck", "plot_share", "plot_weather", "plot_fear", "plot_skill",
             "plot_make", "plot_help_animal", "plot_gift", "plot_find"]

    def tell(self, plot=None):
        getattr(self, plot or self.c(self.PLOTS))()
        self.para()
        if self.rng.random() < 0.15:
            self.paras.append("The end.")
        return "\n\n".join(self.paras)


def story(rng, **kw):
    plot = kw.pop("plot", None)
    return Story(rng, **kw).tell(plot)


# --------------------------------------------------------------------------
# Chats.

COLOR_FACTS = {"the sky": "blue", "grass": "green", "a banana": "yellow", "snow": "white",
               "a carrot": "orange", "the sun": "yellow", "a strawberry": "red", "the sea": "blue",
               "a leaf": "green", "milk": "white", "a lemon": "yellow", "chocolate": "brown",
               "a tomato": "red", "a pumpkin": "orange", "the night sky": "dark"}
GREETINGS = ["Hi!", "Hello!", "Hello there!", "Hi, how are you?", "Good morning!", "Hey!"]
GREET_REPLIES = ["Hello! I am Poot. Would you like to hear a story?",
                 "Hi there! I can tell you a short story. What should it be about?",
                 "Hello! I am happy to see you. Do you want a story?"]
THANKS = ["Thank you!", "Thanks!", "That was a nice story. Thank you!", "I liked that story!"]
THANK_REPLIES = ["You are welcome!", "I am glad you liked it!", "You are welcome! Come back for another story."]
PLOT_TOPICS = {"plot_lost": "a lost toy", "plot_stuck": "a stuck toy", "plot_share": "sharing",
               "plot_weather": "a rainy day", "plot_fear": "being brave", "plot_skill": "not giving up",
               "plot_make": "making something", "plot_help_animal": "helping an animal",
               "plot_gift": "a birthday gift", "plot_find": "a surprise"}


def story_request(rng):
    """A user's request and the story that answers it."""
    r = rng.random()
    used = set()
    if r < 0.3:
        kind = rng.choice(list(ANIMALS))
        trait = rng.choice(TRAITS)
        hero = make_char(rng, used, animal=True, kind=kind, trait=trait)
        ask = rng.choice([f"Tell me a story about a {kind}.", f"Can you tell me a story about a {trait} {kind}?",
                          f"Please tell me a story about {a_an(kind)}.", f"I want a story about a {kind}."])
        return ask, Story(rng, hero=hero).tell()
    if r < 0.5:
        female = rng.random() < 0.5
        hero = make_char(rng, used, animal=False, female=female)
        ask = rng.choice([f"Tell me a story about a {hero.kind} named {hero.name}.",
                          f"Can you write a story about {hero.name}?",
                          f"Write a short story about a {hero.trait} {hero.kind} called {hero.name}."])
        return ask, Story(rng, hero=hero).tell()
    if r < 0.65:
        place = rng.choice(list(PLACES))
        ask = rng.choice([f"Tell me a story that happens at {PLACES[place][0]}.",
                          f"Can you tell me a story about a day at {PLACES[place][0]}?"])
        s = Story(rng, place=place)
        return ask, s.tell(rng.choice(["plot_lost", "plot_stuck", "plot_help_animal", "plot_find"]))
    if r < 0.85:
        plot = rng.choice(Story.PLOTS)
        ask = rng.choice([f"Tell me a story about {PLOT_TOPICS[plot]}.",
                          f"Can you tell me a short story about {PLOT_TOPICS[plot]}?"])
        return ask, Story(rng).tell(plot)
    ask = rng.choice(["Tell me a story.", "Tell me a short story.", "Can you tell me a story?",
                      "Please tell me a bedtime story.", "I want to hear a story."])
    return ask, Story(rng).tell()


def fact_qa(rng):
    r = rng.random()
    kind = rng.choice(list(ANIMALS))
    sound, home, food, move, baby = ANIMALS[kind]
    if r < 0.2:
        if sound == "nothing at all":
            return f"What does {a_an(kind)} say?", f"{cap(a_an(kind))} is very quiet. It does not make much sound at all."
        return f"What does {a_an(kind)} say?", f"{cap(a_an(kind))} says {sound}!"
    if r < 0.35:
        return f"Where does {a_an(kind)} live?", f"{cap(a_an(kind))} lives {home}."
    if r < 0.5:
        return (f"What does {a_an(kind)} like to eat?",
                f"{cap(a_an(kind))} likes to eat {food}.")
    if r < 0.6:
        return f"What is a baby {kind} called?", (f"A baby {kind} is called {a_an(baby)}." if baby != kind
                                                  else f"A baby {kind} is just called a baby {kind}.")
    if r < 0.75:
        thing = rng.choice(list(COLOR_FACTS))
        return f"What color is {thing}?", f"{cap(thing)} is {COLOR_FACTS[thing]}."
    if r < 0.85:
        return (rng.choice(["What is your name?", "Who are you?", "What are you?"]),
                rng.choice(["My name is Poot. I am a small model that tells short stories.",
                            "I am Poot, a tiny story model. I know about animals, friends and fun days."]))
    if r < 0.92:
        return "How are you?", rng.choice(["I am happy, thank you! Would you like to hear a story?",
                                           "I feel great today! What can I do for you?"])
    f = rng.choice(FEELINGS_BAD[:5])
    return (f"I feel {f}.", rng.choice([f"I am sorry you feel {f}. Maybe a happy story will help. Would you like one?",
                                        f"It is okay to feel {f} sometimes. Take a deep breath. I am here for you."]))


SYSTEMS = ["You are Poot, a friendly assistant that tells short stories for children.",
           "You are a helpful assistant.", "You tell short, happy stories."]


def chat(rng):
    """A list of messages."""
    msgs = []
    if rng.random() < 0.2:
        msgs.append({"role": "system", "content": rng.choice(SYSTEMS)})
    turns = 1 if rng.random() < 0.65 else 2
    for t in range(turns):
        r = rng.random()
        if t == 0 and turns == 2 and r < 0.5:
            msgs += [{"role": "user", "content": rng.choice(GREETINGS)},
                     {"role": "assistant", "content": rng.choice(GREET_REPLIES)}]
            continue
        if t == 1 and msgs[-1]["content"].count("\n") > 1 and r < 0.4:
            msgs += [{"role": "user", "content": rng.choice(THANKS)},
                     {"role": "assistant", "content": rng.choice(THANK_REPLIES)}]
            continue
        if r < 0.55:
            q, a = story_request(rng)
        else:
            q, a = fact_qa(rng)
        msgs += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    return msgs


def document(seed, i, chat_share=0.12):
    """Document i of the corpus for a seed: a story string or a message list."""
    rng = random.Random(seed * 1_000_003 + i)
    if rng.random() < chat_share:
        return chat(rng)
    return story(rng)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    out = open(args.out, "w", encoding="utf-8") if args.out != "-" else None
    for i in range(args.count):
        d = document(args.seed, i)
        text = d if isinstance(d, str) else json.dumps(d, ensure_ascii=False)
        if out:
            out.write(text + "\n\n")
        else:
            print(text, end="\n\n----\n\n")
    if out:
        out.close()


if __name__ == "__main__":
    main()
