from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from common import health
from common.views import api_not_found, home
from conversations.demo import work_permit_demo
from explanations.metrics import metrics_view

# The admin speaks for the product, not the framework.
admin.site.site_header = "Contexto administration"
admin.site.site_title = "Contexto admin"
admin.site.index_title = "Knowledge, conversations and explanations"

api_v1 = [
    path("", include("knowledge.urls")),
    path("", include("conversations.urls")),
    path("", include("ontology.urls")),
    path("", include("explanations.urls")),
    path("", include("actions.urls")),
]

urlpatterns = [
    path("", home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("demo/", work_permit_demo, name="demo"),
    path("", include("mcp_server.urls")),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    re_path(r"^api/", api_not_found),
]

handler404 = "common.views.handler404"
handler500 = "common.views.handler500"
