"""Fit the per-process ontology models ahead of the first request (gunicorn's post_worker_init)."""

from common.text import embeddings
from ontology.routing.classifier import chunk_classifier
from ontology.routing.patterns import pattern_model


def warm_ontology_models() -> None:
    pattern_model()
    chunk_classifier()
    if embeddings.enabled():
        embeddings.available()  # load the sentence-embedding engine (~70 MB) before the first question
