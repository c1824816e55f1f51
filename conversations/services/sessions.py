import logging

from django.db import transaction

from conversations.exceptions import AgentNotFoundError, InvalidSessionTransitionError, NoDefaultAgentError
from conversations.models import Agent, Session, SessionStatus

logger = logging.getLogger("conversations")


def _agent_pick(slug: str | None) -> Agent:
    agents = Agent.objects.filter(is_active=True)
    if slug:
        agent = agents.filter(slug=slug).first()
        if agent is None:
            raise AgentNotFoundError(details={"agent": slug})
        return agent
    agent = agents.filter(is_default=True).first() or agents.order_by("id").first()
    if agent is None:
        raise NoDefaultAgentError()
    return agent


@transaction.atomic
def session_create(*, acting_user, tenant, agent_slug: str | None = None) -> Session:
    agent = _agent_pick(agent_slug)
    session = Session(tenant=tenant, user=acting_user, agent=agent)
    # Not the foreign keys: the agent was read just above and the tenant and user by authentication,
    # so full_clean's SELECT per key (three round trips on every new session) proves nothing new;
    # the database's constraints still hold them.
    session.full_clean(exclude=["tenant", "user", "agent"])
    session.save()
    logger.info("session created session=%s tenant=%s agent=%s", session.pk, tenant.pk, agent.slug)
    return session


def session_transition(*, session: Session, status: str) -> bool:
    """Move a (locked) session along the allowed-transition map; save; True if it changed.

    A move to the current status is a no-op; an illegal move raises.
    """
    if session.status == status:
        return False
    if not session.can_transition_to(status):
        raise InvalidSessionTransitionError(details={"from": session.status, "to": status})
    session.status = status
    session.save(update_fields=["status", "updated_at"])
    return True


@transaction.atomic
def session_close(*, acting_user, session: Session) -> Session:
    session = Session.objects.select_for_update().get(pk=session.pk)
    if session_transition(session=session, status=SessionStatus.CLOSED):
        logger.info("session closed session=%s by=%s", session.pk, getattr(acting_user, "pk", None))
    return session
