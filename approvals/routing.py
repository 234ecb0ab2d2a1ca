from django.urls import path

from approvals.live.consumers import OperatorConsumer

LIVE_PATH = "ws/console/"

websocket_urlpatterns = [
    path(LIVE_PATH, OperatorConsumer.as_asgi(), name="live"),
]
