// send(): sessions, whole contexts, JSON Merge Patch deltas and retries.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CONTEXTO_JS } from "../support/paths.mjs";
import { fakeFetch, SESSION, answer, apiError } from "../support/fake-fetch.mjs";

const { createAgentContext, createMergePatch, applyMergePatch, ContextoError } = await import(CONTEXTO_JS);

let clock = Date.parse("2026-09-05T12:00:00.000Z");
const now = () => clock;

function agent(fetch, extra = {}) {
  const a = createAgentContext({ endpoint: "/api/v1/", token: "tok-123", application: { applicationId: "sst" }, fetch, now, ...extra });
  a.setRoute({ route: "/work-permits/4821", params: { id: "4821" } });
  a.setPage({ id: "workPermit.details", title: "Permissão de Trabalho" });
  a.setTabs([{ id: "general", title: "Geral" }, { id: "components", title: "Componentes" }], "general");
  return a;
}

test("the first message creates the session and carries the whole context", async () => {
  const fetch = fakeFetch([SESSION, answer("snap-1")]);
  const a = agent(fetch);
  const reply = await a.send("Explique isso.");
  assert.equal(reply.status, "answer");
  assert.equal(a.sessionId, "s-1");
  assert.equal(a.lastAcceptedSnapshotId, "snap-1");
  const [session, message] = fetch.calls;
  assert.equal(session.url, "/api/v1/sessions");
  assert.equal(session.method, "POST");
  assert.deepEqual(session.body, {});
  assert.equal(message.url, "/api/v1/sessions/s-1/messages");
  assert.equal(message.headers.Authorization, "Token tok-123");
  assert.equal(message.headers["Content-Type"], "application/json");
  assert.equal(message.body.message, "Explique isso.");
  assert.equal(message.body.context.navigation.route, "/work-permits/4821");
  assert.equal(message.body.context.activeTabId, "general");
  assert.equal(message.body.context.contextVersion, 3);
  assert.equal(message.body.context.capturedAt, "2026-09-05T12:00:00.000Z");
  assert.equal(message.body.context.baseSnapshotId, undefined);
});

test("csrf mode sends X-CSRFToken with same-origin credentials and no Authorization", async () => {
  const fetch = fakeFetch([SESSION, answer("snap-1")]);
  const a = agent(fetch, { token: undefined, csrfToken: "csrf-abc" });
  await a.send("Oi");
  const { headers, credentials } = fetch.calls[1];
  assert.equal(headers["X-CSRFToken"], "csrf-abc");
  assert.equal(headers.Authorization, undefined);
  assert.equal(credentials, "same-origin");
});

test("the next message sends a JSON Merge Patch against the accepted snapshot", async () => {
  const fetch = fakeFetch([SESSION, answer("snap-1"), answer("snap-2"), answer("snap-3")]);
  const a = agent(fetch);
  await a.send("Explique isso.");
  const first = fetch.calls[1].body.context;

  clock += 1000;
  a.setActiveTab("components");
  a.setSelection({ entityType: "equipment", entityId: "equipment-828", displayName: "Guindaste" });
  await a.send("E este?");
  const second = fetch.calls[2].body.context;
  assert.deepEqual(Object.keys(second), ["baseSnapshotId", "delta"], "a delta takes the place of the context");
  assert.equal(second.baseSnapshotId, "snap-1");
  assert.deepEqual(second.delta, {
    activeTabId: "components",
    tabs: [{ id: "general", title: "Geral", index: 0, active: false }, { id: "components", title: "Componentes", index: 1, active: true }],
    selection: { entityType: "equipment", entityId: "equipment-828", displayName: "Guindaste" },
    capturedAt: "2026-09-05T12:00:01.000Z",
    contextVersion: 5,
  });
  const rebuilt = applyMergePatch(first, second.delta);
  assert.equal(rebuilt.selection.entityId, "equipment-828");

  clock += 1000;
  a.setSelection(null);
  await a.send("E agora?");
  const third = fetch.calls[3].body.context;
  assert.equal(third.baseSnapshotId, "snap-2", "deltas are against the last accepted snapshot");
  assert.equal(third.delta.selection, null, "a removed key is null in the patch");
  assert.equal(applyMergePatch(rebuilt, third.delta).selection, undefined);
});

test("delta: false always sends the whole context", async () => {
  const fetch = fakeFetch([SESSION, answer("snap-1"), answer("snap-2")]);
  const a = agent(fetch, { delta: false });
  await a.send("1");
  await a.send("2");
  assert.equal(fetch.calls[2].body.context.delta, undefined);
  assert.equal(fetch.calls[2].body.context.contextVersion, 3);
});

for (const code of ["STALE_CONTEXT_AGE", "UNKNOWN_BASE_CONTEXT"]) {
  test(`${code} → re-snapshot and retry once with the whole context`, async () => {
    const fetch = fakeFetch([SESSION, answer("snap-1"), apiError(409, code), answer("snap-9")]);
    const a = agent(fetch);
    await a.send("1");
    clock += 400_000;
    a.setActiveTab("components");
    const reply = await a.send("2");
    assert.equal(reply.contextSnapshotId, "snap-9");
    const [, , failed, retried] = fetch.calls;
    assert.equal(failed.body.context.baseSnapshotId, "snap-1");
    assert.equal(retried.body.context.baseSnapshotId, undefined);
    assert.equal(retried.body.context.activeTabId, "components");
    assert.equal(retried.body.message, "2");
    assert.equal(a.lastAcceptedSnapshotId, "snap-9");
  });
}

test("a second stale answer is not retried again and surfaces the API error", async () => {
  const fetch = fakeFetch([SESSION, apiError(409, "STALE_CONTEXT_AGE", "too old", { ttlSeconds: 300 }), apiError(409, "STALE_CONTEXT_AGE", "too old")]);
  const a = agent(fetch);
  await assert.rejects(a.send("1"), (err) => {
    assert.ok(err instanceof ContextoError);
    assert.equal(err.code, "STALE_CONTEXT_AGE");
    assert.equal(err.status, 409);
    return true;
  });
  assert.equal(fetch.calls.length, 3);
});

test("other API errors are thrown as they are, with code, message, details and status", async () => {
  const fetch = fakeFetch([SESSION, apiError(403, "CONTEXT_FORBIDDEN", "Entity not accessible.", { field: "selection.entityId" })]);
  const a = agent(fetch);
  await assert.rejects(a.send("1"), (err) => {
    assert.equal(err.code, "CONTEXT_FORBIDDEN");
    assert.equal(err.message, "Entity not accessible.");
    assert.deepEqual(err.details, { field: "selection.entityId" });
    assert.equal(err.status, 403);
    return true;
  });
  assert.equal(fetch.calls.length, 2, "no retry");
  assert.equal(a.lastAcceptedSnapshotId, null);
});

test("a non-JSON error body still gives a code", async () => {
  const fetch = fakeFetch([SESSION, { status: 502 }]);
  await assert.rejects(agent(fetch).send("1"), { code: "HTTP_502", status: 502 });
});

test("an oversized context is refused before any request, the session included", async () => {
  const fetch = fakeFetch([]);
  const a = agent(fetch);
  a.setPage({ id: "p", title: "x".repeat(6000) });
  await assert.rejects(a.send("Explique isso."), { code: "CONTEXT_SIZE_LIMIT_EXCEEDED" });
  assert.equal(fetch.calls.length, 0);
  // The store still works once the context shrinks.
  fetch.queue.push(SESSION, answer("snap-1"));
  a.setPage({ id: "p", title: "ok" });
  await a.send("Explique isso.");
  assert.equal(fetch.calls.length, 2);
});

test("messages are sent in order, one at a time", async () => {
  let release;
  const gate = new Promise((resolve) => {
    release = resolve;
  });
  const fetch = fakeFetch([SESSION, answer("snap-1"), answer("snap-2")]);
  const slowFirstMessage = async (url, init) => {
    if (fetch.calls.length === 1) await gate; // hold the first message
    return fetch(url, init);
  };
  const a = agent(slowFirstMessage);
  const p1 = a.send("1");
  const p2 = a.send("2");
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(fetch.calls.length, 1, "the second message waits for the first");
  release();
  await Promise.all([p1, p2]);
  assert.deepEqual(fetch.calls.slice(1).map((c) => c.body.message), ["1", "2"]);
  assert.equal(fetch.calls[2].body.context.baseSnapshotId, "snap-1");
});

test("an existing session id is reused", async () => {
  const fetch = fakeFetch([answer("snap-1")]);
  const a = agent(fetch, { sessionId: "abc" });
  await a.send("1");
  assert.equal(fetch.calls[0].url, "/api/v1/sessions/abc/messages");
});

test("createMergePatch/applyMergePatch round-trip (RFC 7396)", () => {
  const cases = [
    [{ a: 1, b: { c: 2, d: [1, 2] } }, { a: 1, b: { c: 3, d: [1, 2] } }, { b: { c: 3 } }],
    [{ a: 1, b: 2 }, { a: 1 }, { b: null }],
    [{ a: { x: 1 } }, { a: { x: 1 } }, {}],
    [{ a: [1, 2, 3] }, { a: [1, 2] }, { a: [1, 2] }],
    [{ a: { x: 1 } }, { a: "scalar" }, { a: "scalar" }],
    [{}, { n: { deep: { er: true } } }, { n: { deep: { er: true } } }],
  ];
  for (const [source, target, expected] of cases) {
    const patch = createMergePatch(source, target);
    assert.deepEqual(patch, expected);
    assert.deepEqual(applyMergePatch(source, patch), target);
  }
  // RFC 7396 appendix A examples for apply.
  assert.deepEqual(applyMergePatch({ a: "b" }, { a: "c" }), { a: "c" });
  assert.deepEqual(applyMergePatch({ a: "b" }, { b: "c" }), { a: "b", b: "c" });
  assert.deepEqual(applyMergePatch({ a: "b" }, { a: null }), {});
  assert.deepEqual(applyMergePatch({ a: [{ b: "c" }] }, { a: [1] }), { a: [1] });
  assert.deepEqual(applyMergePatch({ e: null }, { a: 1 }), { e: null, a: 1 });
  assert.deepEqual(applyMergePatch({ a: "foo" }, null), null);
  assert.deepEqual(applyMergePatch({}, { a: { bb: { ccc: null } } }), { a: { bb: {} } });
});

test("resetSession() makes the next message open a new session with the whole context", async () => {
  const fetch = fakeFetch([SESSION, answer("snap-1"), { status: 201, body: { id: "s-2" } }, answer("snap-2")]);
  const a = agent(fetch);
  await a.send("1");
  a.resetSession();
  await a.send("2");
  assert.equal(fetch.calls[2].url, "/api/v1/sessions");
  assert.equal(fetch.calls[3].url, "/api/v1/sessions/s-2/messages");
  assert.ok(fetch.calls[3].body.context.contextVersion);
});

test("initialVersion continues the version of a resumed session; sessionBody names the agent", async () => {
  const fetch = fakeFetch([{ status: 201, body: { id: 7 } }, answer(41)]);
  const a = createAgentContext({ fetch, now, initialVersion: 40, sessionBody: { agent: "sst" }, application: { applicationId: "sst" } });
  a.setRoute("/x");
  await a.send("1");
  assert.deepEqual(fetch.calls[0].body, { agent: "sst" });
  assert.equal(fetch.calls[1].url, "/api/v1/sessions/7/messages");
  assert.equal(fetch.calls[1].body.context.contextVersion, 41);
  assert.equal(a.lastAcceptedSnapshotId, 41);
});

test("a snake_case context_snapshot_id is understood too", async () => {
  const fetch = fakeFetch([SESSION, { status: 201, body: { status: "answered", context_snapshot_id: 5 } }, answer(6)]);
  const a = agent(fetch);
  await a.send("1");
  a.setActiveTab("components");
  await a.send("2");
  assert.equal(fetch.calls[2].body.context.baseSnapshotId, "5", "snapshot ids travel as strings");
});

test("a skewed client clock is corrected from the server's Date header and the message retried", async () => {
  const serverNow = clock + 600_000; // the client is 10 minutes behind
  const dateHeader = { Date: new Date(serverNow).toUTCString() };
  const fetch = fakeFetch([
    { status: 201, body: { id: "s-1" } }, // no Date header: nothing learnt yet
    { ...apiError(409, "STALE_CONTEXT_AGE", "too old"), headers: dateHeader },
    { ...answer("snap-1"), headers: dateHeader },
  ]);
  const a = agent(fetch);
  const reply = await a.send("Explique isso.");
  assert.equal(reply.contextSnapshotId, "snap-1");
  assert.equal(fetch.calls[1].body.context.capturedAt, new Date(clock).toISOString());
  assert.equal(fetch.calls[2].body.context.capturedAt, new Date(serverNow).toISOString(), "retried with the server's time");
  assert.equal(a.snapshot().capturedAt, new Date(serverNow).toISOString(), "and kept for the next ones");
});

test("the session answer's Date header fixes the clock before the first message", async () => {
  const serverNow = clock - 60_000; // the client is a minute ahead
  const fetch = fakeFetch([
    { status: 201, body: { id: "s-1" }, headers: { Date: new Date(serverNow).toUTCString() } },
    { ...answer("snap-1"), headers: { Date: new Date(serverNow).toUTCString() } },
  ]);
  const a = agent(fetch);
  await a.send("1");
  assert.equal(fetch.calls.length, 2);
  assert.equal(fetch.calls[1].body.context.capturedAt, new Date(serverNow).toISOString());
});

test("a few seconds of difference with the server are ignored", async () => {
  const fetch = fakeFetch([{ status: 201, body: { id: "s-1" }, headers: { Date: new Date(clock + 2000).toUTCString() } }, answer("snap-1")]);
  const a = agent(fetch);
  await a.send("1");
  assert.equal(fetch.calls[1].body.context.capturedAt, new Date(clock).toISOString());
});
