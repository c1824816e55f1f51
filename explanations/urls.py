from django.urls import path

from explanations import apis

app_name = "explanations"
urlpatterns = [
    path("results", apis.ResultCreateApi.as_view(), name="result-create"),
    path("results/<str:result_id>/explanation", apis.ResultExplanationApi.as_view(), name="result-explanation"),
]
