import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from config.wsgi_body import RequestBodyMiddleware

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
# Bodies up to Django's in-memory limit are read whole (and on time) before Django parses them.
application = RequestBodyMiddleware(get_wsgi_application(), max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
