from django.contrib.auth import views as auth_views
from django.urls import path

from approvals.views import audit, calls, catalog, connect, inputs, queue, review, servers, tokens

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", catalog.home, name="home"),
    path("queue/", queue.queue, name="queue"),
    path("queue/<int:pk>/decide/", queue.decide, name="call_decide"),
    path("queue/<int:pk>/edit/", queue.edit, name="call_edit"),
    path("inputs/<int:pk>/", inputs.detail, name="input"),
    path("inputs/<int:pk>/answer/", inputs.answer, name="input_answer"),
    path("calls/", calls.recent, name="calls"),
    path("calls/<int:pk>/", calls.detail, name="call"),
    path("calls/<int:pk>/media/<int:index>/", calls.media, name="call_media"),
    path("servers/", servers.server_list, name="servers"),
    # Slugs are made with '_' only, so a hyphenated path never shadows a server's page.
    path("servers/add-server/", servers.server_add, name="server_add"),
    path("servers/<slug:slug>/", servers.server_detail, name="server"),
    path("servers/<slug:slug>/edit/", servers.server_edit, name="server_edit"),
    path("servers/<slug:slug>/test/", servers.server_test, name="server_test"),
    path("servers/<slug:slug>/sync/", servers.server_sync, name="server_sync"),
    path("catalog/", catalog.catalog, name="catalog"),
    path("catalog/tools/<int:pk>/", catalog.tool_detail, name="tool"),
    path("review/", review.review_list, name="review"),
    path("review/tools/<int:pk>/", review.tool_review, name="tool_review"),
    path("review/tools/<int:pk>/accept/", review.tool_decide, {"accept": True}, name="tool_accept"),
    path("review/tools/<int:pk>/reject/", review.tool_decide, {"accept": False}, name="tool_reject"),
    path("review/servers/<slug:slug>/accept/", review.server_accept_tools, name="server_accept_tools"),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/new/", tokens.token_add, name="token_add"),
    path("tokens/<int:pk>/revoke/", tokens.token_revoke, name="token_revoke"),
    path("connect/", connect.connect, name="connect"),
    path("audit/", audit.audit_log, name="audit"),
    path("audit/events/<int:seq>/", audit.audit_event, name="audit_event"),
    path("audit/calls/<int:pk>/", audit.audit_call, name="audit_call"),
    path("audit/export.csv", audit.audit_export_view, {"fmt": "csv"}, name="audit_export_csv"),
    path("audit/export.jsonl", audit.audit_export_view, {"fmt": "jsonl"}, name="audit_export_jsonl"),
    path("audit/verify/", audit.audit_verify, name="audit_verify"),
    path("audit/retention/", audit.audit_retention_view, name="audit_retention"),
    path("audit/decisions/", audit.my_decisions, name="my_decisions"),
]
