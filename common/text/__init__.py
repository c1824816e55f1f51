"""Text analysis defined once: folding, tokens, stop words, stems, language guess.

Pure Python, no Django: the router's analyzer, the reference resolver, the
offline provider, the number extractor, the ontology and the redaction all
read text through this package, so one word means one thing everywhere.
"""

from .analysis import (
    analyze,
    analyze_fields,
    analyze_identifier,
    code_term,
    content_words,
    query_key,
    stem,
    stem_many,
    stem_portuguese,
    tokens,
)
from .folding import fold, fold_aligned, fold_lower
from .language import LANGUAGES, guess_language
from .stopwords import STOP_WORDS

__all__ = [
    "LANGUAGES",
    "STOP_WORDS",
    "analyze",
    "analyze_fields",
    "analyze_identifier",
    "code_term",
    "content_words",
    "fold",
    "fold_aligned",
    "fold_lower",
    "guess_language",
    "query_key",
    "stem",
    "stem_many",
    "stem_portuguese",
    "tokens",
]
