from django.urls import path

from knowledge import apis

app_name = "knowledge"
urlpatterns = [
    path("packages", apis.PackageListApi.as_view(), name="package-list"),
    path("packages/<str:package_ref>", apis.PackageDetailApi.as_view(), name="package-detail"),
]
