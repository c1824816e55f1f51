"""gunicorn fits the ontology's models in each worker before it serves (config/gunicorn.conf.py)."""

import runpy

from ontology.routing.classifier import chunk_classifier
from ontology.routing.patterns import pattern_model


def test_a_worker_fits_the_ontology_models_before_its_first_request():
    pattern_model.cache_clear()
    chunk_classifier.cache_clear()
    config = runpy.run_path("config/gunicorn.conf.py")
    config["post_worker_init"](worker=None)
    assert pattern_model.cache_info().currsize == 1
    assert chunk_classifier.cache_info().currsize == 1
