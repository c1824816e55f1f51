"""What each admin group may do with knowledge (see accounts/roles.py).

Any staff member reads the knowledge admin (its own rule, ``knowledge.admin``);
curators also edit packages, run the retrieval test and revert revisions.
"""

from accounts.roles import ALL, CURATORS

ROLES = {CURATORS: {"knowledge": ALL}}
