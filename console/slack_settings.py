"""Slack approvals (approvals/slack, docs/slack.md): the Slack app's credentials and where its Web API is."""

import os

from django.core.exceptions import ImproperlyConfigured

from console.environment import env_bool, given_secret

# The app's bot token (xoxb-...) and its signing secret, each from the environment or a NAME_FILE; with both set,
# waiting calls are posted to the channel of their rule or server, and /slack/interactions/ takes decisions.
SLACK_BOT_TOKEN = given_secret("SLACK_BOT_TOKEN")
SLACK_SIGNING_SECRET = given_secret("SLACK_SIGNING_SECRET")
if bool(SLACK_BOT_TOKEN) != bool(SLACK_SIGNING_SECRET):
    raise ImproperlyConfigured(
        "Slack approvals need both SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (or their _FILE variants), or neither"
    )
# The Web API's base URL; tests point it at a fake on loopback.
SLACK_API_URL = os.environ.get("SLACK_API_URL", "https://slack.com/api").strip().rstrip("/")
# The longest wait on one Web API request.
SLACK_TIMEOUT_SECONDS = float(os.environ.get("SLACK_TIMEOUT_SECONDS", 10))
# A Slack user nobody linked yet is linked to the active person with the same email, when Slack says the email is
# confirmed: for workspaces whose emails the organisation controls, as its single sign-on does.
SLACK_LINK_BY_EMAIL = env_bool("SLACK_LINK_BY_EMAIL")
