from django.urls import path

from . import apis

urlpatterns = [
    path("context-schema", apis.ContextSchemaApi.as_view(), name="context-schema"),
    path("accessible-entities", apis.AccessibleEntityListCreateApi.as_view(), name="accessible-entity-list"),
    path(
        "accessible-entities/<int:entity_pk>", apis.AccessibleEntityDetailApi.as_view(), name="accessible-entity-detail"
    ),
]
