"""Portuguese number words, scales, months and markers (keys are lower case
without accents, except months, which are matched as written)."""

from decimal import Decimal

UNITS = {
    "zero": 0, "um": 1, "uma": 1, "dois": 2, "duas": 2, "tres": 3, "quatro": 4,
    "cinco": 5, "seis": 6, "sete": 7, "oito": 8, "nove": 9, "dez": 10, "onze": 11,
    "doze": 12, "treze": 13, "catorze": 14, "quatorze": 14, "quinze": 15,
    "dezesseis": 16, "dezasseis": 16, "dezessete": 17, "dezassete": 17,
    "dezoito": 18, "dezenove": 19, "dezanove": 19,
}  # fmt: skip
TENS = {
    "vinte": 20, "trinta": 30, "quarenta": 40, "cinquenta": 50, "sessenta": 60,
    "setenta": 70, "oitenta": 80, "noventa": 90,
}  # fmt: skip
HUNDREDS = {
    "cento": 100, "duzentos": 200, "duzentas": 200, "trezentos": 300, "trezentas": 300,
    "quatrocentos": 400, "quatrocentas": 400, "quinhentos": 500, "quinhentas": 500,
    "seiscentos": 600, "seiscentas": 600, "setecentos": 700, "setecentas": 700,
    "oitocentos": 800, "oitocentas": 800, "novecentos": 900, "novecentas": 900,
}  # fmt: skip
SCALES = {
    "mil": 10**3, "milhao": 10**6, "milhoes": 10**6, "bilhao": 10**9,
    "bilhoes": 10**9, "trilhao": 10**12, "trilhoes": 10**12,
}  # fmt: skip
# Abbreviations (Babel's compact format writes "R$ 1,2 mi") follow digits only.
DIGIT_SCALES = {**SCALES, "mi": 10**6, "bi": 10**9, "tri": 10**12, "mm": 10**6}
# Informal magnitudes read only when glued to the digits ("R$ 10k", "5M",
# "R$ 5MM"): spaced, "5 m" is more likely metres. "M" is read as million; if
# the model meant "mil" the value is wrong and the narrative fails, which is
# the safe side (an unread number would never be checked at all).
GLUED_SCALES = {"k": 10**3, "m": 10**6, "mm": 10**6}
MONTHS = {
    "janeiro": 1, "fevereiro": 2, "março": 3, "abril": 4, "maio": 5, "junho": 6,
    "julho": 7, "agosto": 8, "setembro": 9, "outubro": 10, "novembro": 11, "dezembro": 12,
}  # fmt: skip
MONTH_ABBREVIATIONS = "jan|fev|mar|abr|mai|jun|jul|ago|set|out|nov|dez"
# Proportions in words are arithmetic the model did ("metade da diferença",
# "o dobro"): they are extracted so that, unless given, they fail the check.
PROPORTIONS = {
    "metade": Decimal("0.5"), "terco": Decimal(1) / 3, "tercos": Decimal(2) / 3,
    "dobro": Decimal(2), "triplo": Decimal(3), "quadruplo": Decimal(4),
    # Plural fractions ("três quartos da diferença"): the numerator is read on
    # its own and may well be citable (3 is March), so the fraction word must
    # be read too, or the share would pass. Singular "quarto" is left alone
    # ("quarto trimestre", an ordinal in words).
    "quartos": Decimal(1) / 4, "quintos": Decimal(1) / 5, "sextos": Decimal(1) / 6,
    "decimos": Decimal(1) / 10,
}  # fmt: skip
# "pelo menos três" is "at least three", not minus three.
NOT_A_SIGN_AFTER = {"pelo", "ao", "no", "mais", "a", "o", "de", "em", "bem"}
ORDINAL_MARKS = {"º", "ª", "°"}
