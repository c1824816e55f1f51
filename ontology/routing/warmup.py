"""Fit the per-process ontology models ahead of the first request (gunicorn's post_worker_init)."""

from ontology.routing.classifier import chunk_classifier
from ontology.routing.patterns import pattern_model


def warm_ontology_models() -> None:
    pattern_model()
    chunk_classifier()
