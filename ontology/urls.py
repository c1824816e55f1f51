from django.urls import path

from ontology import apis

app_name = "ontology"
urlpatterns: list = [
    path("profile", apis.ProfileApi.as_view(), name="profile"),
    path("ontology/skills", apis.SkillListApi.as_view(), name="skill-list"),
    path("ontology/route", apis.OntologyRouteApi.as_view(), name="route"),
]
