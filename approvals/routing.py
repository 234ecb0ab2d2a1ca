from django.urls import path

from approvals.views.consumers import LIVE_PATH, OperatorConsumer

websocket_urlpatterns = [
    path(LIVE_PATH, OperatorConsumer.as_asgi(), name="live"),
]
