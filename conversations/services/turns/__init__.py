"""The agent turn: one inbound user message in, one reply out.

    1. idempotent retry?  → the first response, no provider call      ``idempotency``
    2. validate the UI context                                         ``context_step``
    3. open the turn       (1-3 in one short transaction: the tenant's  ``session_rows``
                           session read once, locked, with its agent):
                           status check, context snapshot, inbound
                           message, enrichment counter reset
    4. resolve references  (may ask back)                              ``context_step``
    4b. action chain       (an UPDATE_FIELD intent: preview, question    ``action_step``
                           or refusal from the actions app; no LLM)
    5. knowledge set       (the knowledge router, focus first)         ``knowledge_step``
    5b. ontology route     (agents with an ontology; may interrupt)    ``ontology_step``
    6. the agent loop      (no transaction held): prompt → provider    ``agent_loop``
                           → reply contract; s=99 fetches under the
                           per-message budget; hand-offs
    6b. grounding          (numbers of an answer in what was            ``grounding_step``
                           delivered; the agent's number_policy)
    7. close the turn      (short transaction, session row locked):    ``session_rows``
                           reply, hand-off, session status, response

``service.message_send`` runs the steps in order; ``outcome`` holds what they
pass to each other.

The provider call never runs inside a transaction and holds no database
connection (it goes back to the pool first: ``common.db_pool``); every write to the session
row happens under ``select_for_update``, so concurrent messages to one session
never lose an update of ``collected_packages`` or the counter.
"""

from .idempotency import request_fingerprint
from .knowledge_step import knowledge_set_for_turn
from .outcome import TurnContext, TurnOutcome, TurnResult
from .service import message_send

__all__ = ["TurnContext", "TurnOutcome", "TurnResult", "knowledge_set_for_turn", "message_send", "request_fingerprint"]
