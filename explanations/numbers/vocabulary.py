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
# Denominators of fractions in words after a number ("três quartos" is 3/4, "um quarto" 1/4).
FRACTION_WORDS = {
    "terco": 3, "tercos": 3, "quarto": 4, "quartos": 4, "quinto": 5, "quintos": 5, "sexto": 6, "sextos": 6,
    "decimo": 10, "decimos": 10,
}  # fmt: skip
# "pelo menos três" is "at least three", not minus three.
NOT_A_SIGN_AFTER = {"pelo", "ao", "no", "mais", "a", "o", "de", "em", "bem"}
ORDINAL_MARKS = {"º", "ª", "°"}
# Month names in English and Spanish: a model writing them still cites a month.
FOREIGN_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12,
    "enero": 1, "febrero": 2, "marzo": 3, "mayo": 5, "junio": 6, "julio": 7, "septiembre": 9,
    "octubre": 10, "noviembre": 11, "diciembre": 12,
}  # fmt: skip
# Ordinals in words read only before a period noun ("segundo trimestre").
ORDINAL_WORDS = {
    "primeiro": 1, "primeira": 1, "segundo": 2, "segunda": 2, "terceiro": 3, "terceira": 3,
    "quarto": 4, "quarta": 4,
}  # fmt: skip
PERIOD_NOUNS = {"trimestre": "quarter", "semestre": "semester"}
# Collective nouns multiply the number before them ("duas dúzias" is 24).
COLLECTIVES = {
    "duzia": 12, "duzias": 12, "dezena": 10, "dezenas": 10, "centena": 100, "centenas": 100,
}  # fmt: skip
# Money written as words after the number, and the currency they name.
CURRENCY_WORDS = {
    "real": "BRL", "reais": "BRL", "dolar": "USD", "dolares": "USD", "euro": "EUR", "euros": "EUR",
    "brl": "BRL", "usd": "USD", "eur": "EUR",
}  # fmt: skip
CURRENCY_SYMBOLS = {"R$": "BRL", "US$": "USD", "U$": "USD", "$": "USD", "€": "EUR"}
# ISO codes written as words, before or after the digits ("EUR 9.800,00", "9.800,00 USD").
CURRENCY_CODES = {"brl": "BRL", "usd": "USD", "eur": "EUR"}
# Nouns that count things: a number before them is a count ("cinco filiais").
COUNT_NOUNS = frozenset("""
loja lojas filial filiais unidade unidades agencia agencias funcionario funcionarios funcionaria funcionarias
colaborador colaboradores colaboradora colaboradoras pessoa pessoas empregado empregados trabalhador trabalhadores
servidor servidores profissional profissionais cliente clientes pedido pedidos item itens produto produtos
vaga vagas contratacao contratacoes demissao demissoes admissao admissoes desligamento desligamentos
departamento departamentos setor setores cargo cargos equipe equipes time times regiao regioes cidade cidades
estado estados vendedor vendedores gerente gerentes categoria categorias contrato contratos dependente dependentes
beneficiario beneficiarios matricula matriculas registro registros venda vendas nota notas fatura faturas
dia dias semana semanas mes meses ano anos hora horas turno turnos vez vezes caso casos centro centros
""".split())  # fmt: skip
# Nouns before a digit-only number that make it an identifier ("loja 0423").
CODE_NOUNS = frozenset("""
loja filial unidade agencia codigo cod matricula centro cc setor departamento depto nº numero lote
lojas filiais unidades agencias codigos matriculas
""".split())  # fmt: skip
