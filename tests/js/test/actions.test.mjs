// Actions: onAction handlers, the preview/confirm flow, the report and the refresh after verification.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CONTEXTO_JS } from "../support/paths.mjs";
import { fakeFetch, SESSION } from "../support/fake-fetch.mjs";
import { makeDom } from "../support/dom.mjs";

const { createAgentContext, ContextoError } = await import(CONTEXTO_JS);

const CAPABILITY = "workPermit.equipment.updateValidity";
const VALIDITY = "workPermit.components.equipment.validity";
const now = () => Date.parse("2026-09-05T12:00:00.000Z");

function agent(fetch, extra = {}) {
  const a = createAgentContext({ endpoint: "/api/v1", token: "tok", application: { applicationId: "sst" }, fetch, now, ...extra });
  a.setRoute({ route: "/work-permits/4821", params: { id: "4821" } });
  a.setPage({ id: "workPermit.details", title: "Permissão de Trabalho" });
  a.setSelection({ entityType: "equipment", entityId: "equipment-827", displayName: "Andaime" });
  a.setFocus({ semanticId: VALIDITY, type: "field", label: "Validade", value: "20 dias" });
  return a;
}

function action(status, extra = {}) {
  return {
    id: "0b8f2d6e-5f61-5d5a-9a55-3f3c0f2d9a10",
    capability: CAPABILITY,
    status,
    reason: null,
    execution: "client",
    target: VALIDITY,
    parameters: { value: 30, unit: "days" },
    entity: { entityType: "equipment", entityId: "equipment-827" },
    preview: status === "needs_confirmation"
      ? { label: "Validade", before: "20 dias", after: "30 dias", confirmationToken: "tok-preview", expiresAt: "2026-09-05T12:05:00Z" }
      : null,
    message: null,
    ...extra,
  };
}

const VERIFIED = "A validade do equipamento foi alterada para 30 dias.";

test("confirmAction confirms, runs the handler, reports the new value and refreshes after verification", async () => {
  const fetch = fakeFetch([
    { body: action("confirmed") },
    ({ body }) => ({ body: { ...action("verified", { message: VERIFIED }), contextSnapshotId: 12, seen: body } }),
  ]);
  const a = agent(fetch);
  const applied = [];
  a.onAction(CAPABILITY, (request) => {
    applied.push(request);
    return 30;
  });
  const refreshed = [];
  a.onRefresh((done) => refreshed.push(done));

  const done = await a.confirmAction(action("needs_confirmation"));

  const [confirmCall, reportCall] = fetch.calls;
  assert.equal(confirmCall.url, `/api/v1/actions/${action("x").id}/confirm`);
  assert.deepEqual(confirmCall.body, { confirmationToken: "tok-preview" });
  assert.equal(applied.length, 1);
  assert.equal(applied[0].capability, CAPABILITY);
  assert.equal(applied[0].target, VALIDITY);
  assert.equal(applied[0].value, 30);
  assert.equal(applied[0].unit, "days");
  assert.deepEqual(applied[0].entity, { entityType: "equipment", entityId: "equipment-827" });
  assert.equal(reportCall.url, `/api/v1/actions/${action("x").id}/report`);
  assert.equal(reportCall.body.value, 30);
  assert.equal(reportCall.body.context.focus.semanticId, VALIDITY);
  assert.equal(reportCall.body.context.focus.value, 30, "without DOM capture the handler's value describes the field");
  assert.equal(reportCall.body.context.selection.entityId, "equipment-827");
  assert.ok(reportCall.body.context.capturedAt);
  assert.equal(done.status, "verified");
  assert.equal(done.message, VERIFIED);
  assert.deepEqual(refreshed.map((r) => r.status), ["verified"]);
  assert.equal(a.lastAcceptedSnapshotId, 12, "the next message's delta starts from the reported snapshot");
});

test("with DOM capture the report carries what the page shows, not what the handler claims", async () => {
  const dom = makeDom(`<main><label id="v" data-agent-id="${VALIDITY}" data-agent-type="field" data-agent-label="Validade" data-agent-value="20 dias"><input></label></main>`);
  const fetch = fakeFetch([{ body: action("confirmed") }, { body: action("failed", { reason: "verification_mismatch" }) }]);
  const a = agent(fetch);
  a.attach(dom.window.document);
  a.onAction(CAPABILITY, () => 30); // claims 30 but never changes the page
  const refreshed = [];
  a.onRefresh((done) => refreshed.push(done));
  const done = await a.confirmAction(action("needs_confirmation"));
  assert.equal(fetch.calls[1].body.value, 30);
  assert.equal(fetch.calls[1].body.context.focus.value, "20 dias");
  assert.equal(done.status, "failed");
  assert.deepEqual(refreshed, [], "nothing refreshes for a change that was not verified");
});

test("a handler that changes the page reports the page's new value", async () => {
  const dom = makeDom(`<main><label id="v" data-agent-id="${VALIDITY}" data-agent-type="field" data-agent-value="20 dias"><input></label></main>`);
  const fetch = fakeFetch([{ body: action("confirmed") }, { body: action("verified") }]);
  const a = agent(fetch);
  a.attach(dom.window.document);
  a.onAction(CAPABILITY, async ({ value }) => {
    dom.window.document.getElementById("v").setAttribute("data-agent-value", `${value} dias`);
    return value;
  });
  await a.confirmAction(action("needs_confirmation"));
  assert.equal(fetch.calls[1].body.context.focus.value, "30 dias");
});

test("a client action without a handler is refused before anything is confirmed", async () => {
  const fetch = fakeFetch([]);
  const a = agent(fetch);
  await assert.rejects(a.confirmAction(action("needs_confirmation")), (err) => {
    assert.ok(err instanceof ContextoError);
    assert.equal(err.code, "NO_ACTION_HANDLER");
    return true;
  });
  assert.equal(fetch.calls.length, 0);
});

test("a webhook action is verified by the server: no handler, no report, then the refresh", async () => {
  const fetch = fakeFetch([{ body: action("verified", { execution: "webhook", message: VERIFIED }) }]);
  const a = agent(fetch);
  const refreshed = [];
  a.onRefresh((done) => refreshed.push(done.message));
  const done = await a.confirmAction(action("needs_confirmation", { execution: "webhook" }));
  assert.equal(done.status, "verified");
  assert.equal(fetch.calls.length, 1);
  assert.deepEqual(refreshed, [VERIFIED]);
});

test("a refused confirmation rejects with the server's code", async () => {
  const fetch = fakeFetch([{ status: 409, body: { error: { code: "ACTION_NOT_AWAITING_CONFIRMATION", message: "no", details: { status: "verified" } } } }]);
  const a = agent(fetch);
  a.onAction(CAPABILITY, () => 30);
  await assert.rejects(a.confirmAction(action("needs_confirmation")), (err) => err.code === "ACTION_NOT_AWAITING_CONFIRMATION" && err.status === 409);
});

test("send() runs a client action the server confirmed without a preview", async () => {
  const fetch = fakeFetch([
    SESSION,
    { status: 201, body: { status: "answered", reply: "Aplicando…", contextSnapshotId: 3, action: action("confirmed") } },
    { body: { ...action("verified", { message: VERIFIED }), contextSnapshotId: 4 } },
  ]);
  const a = agent(fetch);
  let calls = 0;
  a.onAction(CAPABILITY, () => {
    calls += 1;
    return 30;
  });
  const reply = await a.send("Altere isso para 30 dias.");
  assert.equal(calls, 1);
  assert.equal(reply.action.status, "verified");
  assert.equal(fetch.calls[2].url, `/api/v1/actions/${action("x").id}/report`);
});

test("send() leaves a preview alone: nothing is applied until confirmAction()", async () => {
  const fetch = fakeFetch([SESSION, { status: 201, body: { status: "answered", contextSnapshotId: 3, action: action("needs_confirmation") } }]);
  const a = agent(fetch);
  a.onAction(CAPABILITY, () => assert.fail("a preview must not run the handler"));
  const reply = await a.send("Altere isso para 30 dias.");
  assert.equal(reply.action.status, "needs_confirmation");
  assert.equal(fetch.calls.length, 2);
});

test("onAction validates its arguments and returns an unregister function", async () => {
  const a = agent(fakeFetch([]));
  assert.throws(() => a.onAction("", () => 1), (err) => err.code === "INVALID_ACTION_HANDLER");
  assert.throws(() => a.onAction(CAPABILITY, null), (err) => err.code === "INVALID_ACTION_HANDLER");
  const off = a.onAction(CAPABILITY, () => 30);
  off();
  await assert.rejects(a.confirmAction(action("needs_confirmation")), (err) => err.code === "NO_ACTION_HANDLER");
  await assert.rejects(a.confirmAction({ id: "x" }), (err) => err.code === "INVALID_ACTION");
});
