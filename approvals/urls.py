from django.contrib.auth import views as auth_views
from django.urls import path

from approvals.views import catalog, connect, tokens

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", catalog.home, name="home"),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/new/", tokens.token_add, name="token_add"),
    path("tokens/<int:pk>/revoke/", tokens.token_revoke, name="token_revoke"),
    path("connect/", connect.connect, name="connect"),
]
