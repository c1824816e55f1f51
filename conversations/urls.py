from django.urls import path

from conversations import apis
from conversations.context_api import ContextApi
from conversations.context.urls import urlpatterns as context_urlpatterns

app_name = "conversations"
urlpatterns = [
    path("context", ContextApi.as_view(), name="context"),
    path("sessions", apis.SessionCreateApi.as_view(), name="session-create"),
    path("sessions/<int:session_id>", apis.SessionDetailApi.as_view(), name="session-detail"),
    path("sessions/<int:session_id>/messages", apis.SessionMessagesApi.as_view(), name="session-messages"),
    path(
        "sessions/<int:session_id>/messages/<int:message_id>/feedback",
        apis.MessageFeedbackApi.as_view(),
        name="message-feedback",
    ),
]
urlpatterns += context_urlpatterns
