"""What a client may ask the console to let through: the kinds of calls, which rules apply to one at a time."""

from django.db import models


class CallKind(models.TextChoices):
    """What a client asks the console to let through: a tool call, a coding agent's permission request,
    a resource read or a prompt get.

    Each kind is a Call, so holding, quorum, separation of duties, audit and the queue apply to all;
    a rule applies to one kind.
    """

    TOOL = "tool", "Tool calls"
    PERMISSION = "permission", "Permission requests from coding agents"
    RESOURCE = "resource", "Resource reads"
    PROMPT = "prompt", "Prompt gets"
