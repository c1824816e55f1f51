"""What each admin group may do with explanations (see accounts/roles.py).

Operators watch results and their explanation tasks (retrying those whose provider
was unavailable) and the Celery task results; auditors read explanations with
their number checks. Nobody edits a narrative: it is evidence.
"""

from accounts.roles import AUDITORS, OPERATORS

ROLES = {
    OPERATORS: {
        "explanations": ("view_result", "view_explanation"),
        "django_celery_results": ("view_taskresult", "view_groupresult", "view_chordcounter"),
    },
    AUDITORS: {"explanations": ("view_result", "view_explanation")},
}
