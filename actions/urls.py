from django.urls import path

from actions import apis

app_name = "actions"
urlpatterns = [
    path("capabilities", apis.CapabilityListApi.as_view(), name="capability-list"),
    path("actions/<str:action_id>", apis.ActionDetailApi.as_view(), name="action-detail"),
    path("actions/<str:action_id>/confirm", apis.ActionConfirmApi.as_view(), name="action-confirm"),
    path("actions/<str:action_id>/report", apis.ActionReportApi.as_view(), name="action-report"),
]
