"""Stop words for Portuguese (first), English and Spanish, accent-folded.

Based on the Snowball lists, trimmed of words that carry meaning in this
domain, plus conversational filler ("gostaria", "please", "quisiera") that
users add to questions and that would otherwise dilute the relevance
threshold. The additive adverbs are stop words in all three languages alike
("também"/"além"/"ademais", "too"/"also"/"besides", "también"/"además"): in
"...and I also need the invoice" they name no topic, and as a term no entry
holds they would count against the question's coverage. Everything is stored
folded (no accents, lower case) because the check runs on folded surface
words.
"""

from __future__ import annotations

from .folding import fold

PORTUGUESE = """
a à ao aos aquela aquelas aquele aqueles aquilo as às até com como da das de
dela delas dele deles depois do dos e é ela elas ele eles em entre era eram
essa essas esse esses esta estas este estes eu foi fomos for foram fosse
fossem fui há isso isto já lhe lhes mais mas me mesmo meu meus minha minhas
muito na não nas nem no nos nós nossa nossas nosso nossos num numa o os ou
para pela pelas pelo pelos por qual quais quando que quem se seja sejam sem
ser será serão seu seus só sua suas também te tem têm tinha tinham tu tua
tuas um uma umas uns você vocês vos está estão estou estamos ser sou somos
são pode podem posso poderia pude quero queria gostaria saber sabe preciso
precisa precisamos favor porfavor olá ola oi bom boa
obrigado obrigada explique explica explicar fale diga dizer me mim ti
algum alguma alguns algumas onde aqui ali lá então assim agora ainda cada
outro outra outros outras tudo todo toda todos todas qualquer quanto quanta
quantos quantas sobre sim vai vou fazer faço faz fazem tenho temos ter
esse essa isso aquilo deste desta disso daquele neste nesta nisso
além ademais
"""

ENGLISH = """
a about above after again against all am an and any are as at be because
been before being below between both but by can could did do does doing
down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up
very was we were what when where which while who whom why will with would
you your yours yourself yourselves please hi hello thanks thank want wanted
need needs know tell explain let lets get got i'm im does did tell us
much many afterwards afterward already still yet
also besides
"""

SPANISH = """
a al algo algunas algunos ante antes como con contra cual cuales cuando de
del desde donde dos el él ella ellas ellos en entre era eras es esa esas ese
eso esos esta estas este esto estos está están estoy fue fueron fui ha han
hay la las le les lo los me mi mis mucho muy más nada ni no nos nosotros o
os otra otro para pero poco por porque que qué quien quién se sea ser si sí
sin sobre su sus también te tengo tiene tienen tu tus un una uno unos usted
ustedes y ya yo quiero quisiera gustaría saber necesito puedo puede pueden
hola gracias favor explica explique dime decir cómo cuál cuáles cuándo
dónde hacer hago tener cuánto cuánta cuántos cuántas después luego ahora
todavía aún entonces así aquí allí allá
además
"""

# How people type the same function words in a chat (all three languages), and English negations and
# contractions written without their apostrophe or split at it ("didn't" is read as "didn" and "t"). As
# terms no entry holds they counted against the question's coverage, so "cm faco pra mandar atestado"
# or "my policy runs out, do i hv to do smth" lost the full body its plain wording gets. Only shorthand
# that cannot also be a content word of a catalog: not "pro" (a plan), "cm" (centimetres), "ai"
# (artificial intelligence), "mt" (a state), "pa" (a state), "bc".
CHAT = """
pra pras pros vc vcs tb tbm qto qta qtos qtas qnto qdo qnd qndo pq oq msm mto mta mtos mtas dps ta tah eh
ur b4 thru til hv abt cuz coz pls plz thx ive youre thats whats
dont didnt doesnt isnt arent wasnt werent cant wont couldnt wouldnt shouldnt havent hasnt
don didn doesn isn aren wasn weren won couldn wouldn shouldn haven hasn
xq tmb dnd cdo porfa xfa ke
"""


STOP_WORDS: frozenset[str] = frozenset(fold(w) for block in (PORTUGUESE, ENGLISH, SPANISH, CHAT) for w in block.split())
