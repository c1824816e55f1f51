from django.apps import AppConfig


class OntologyConfig(AppConfig):
    name = "ontology"
