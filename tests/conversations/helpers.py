"""Small helpers shared by the conversations tests."""


def send(client, session, text, *, context=None, key=None):
    body = {"message": text}
    if context is not None:
        body["context"] = context
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(f"/api/v1/sessions/{session.pk}/messages", body, format="json", **headers)
