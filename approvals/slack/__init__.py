"""Slack approvals: each waiting call posted to a channel with Approve, Deny and Open, decided from there by the
Slack users linked to console people under the queue's rules, and the message updated once the call is decided.

`transport` is the only code that talks to Slack; `signature` checks what Slack sends; `blocks` is what a message
says; `messages` posts and updates them off the call's path; `linking` maps Slack users to people; `interactions`
turns a signed click into a decision.
"""
