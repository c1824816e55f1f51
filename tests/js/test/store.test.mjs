// The local store: versions, snapshots, minimization and the size limit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CONTEXTO_JS } from "../support/paths.mjs";

const {
  createAgentContext,
  CONTEXT_SIZE_LIMIT_BYTES,
  ContextoError,
  isSensitiveKey,
  jsonByteSize,
} = await import(CONTEXTO_JS);

const APPLICATION = { applicationId: "sst", applicationVersion: "8.14.2", environment: "production" };
const FIXED_NOW = Date.parse("2026-09-05T12:00:00.000Z");

function agent(extra = {}) {
  return createAgentContext({ application: APPLICATION, now: () => FIXED_NOW, fetch: () => assert.fail("no request expected"), ...extra });
}

test("every change bumps contextVersion and a no-op does not", () => {
  const a = agent();
  assert.equal(a.contextVersion, 0);
  a.setRoute({ route: "/work-permits/4821", routeName: "workPermit.details", params: { id: "4821" } });
  assert.equal(a.contextVersion, 1);
  a.setPage({ id: "workPermit.details", type: "details", title: "Permissão de Trabalho", semanticId: "workPermit" });
  a.setTabs([{ id: "general", title: "Geral" }, { id: "components", title: "Componentes" }], "general");
  a.setActiveTab("components");
  a.setFocus({ semanticId: "workPermit.validity", type: "field", label: "Validade" });
  a.setSelection({ entityType: "workPermit", entityId: "4821" });
  a.setViewport({ visibleSemanticIds: ["workPermit.validity"] });
  assert.equal(a.contextVersion, 7);
  a.setActiveTab("components");
  a.setSelection({ entityType: "workPermit", entityId: "4821" });
  a.setPage({ id: "workPermit.details", type: "details", title: "Permissão de Trabalho", semanticId: "workPermit" });
  assert.equal(a.contextVersion, 7, "setting the same value again is not a change");
  a.setFocus(null);
  assert.equal(a.contextVersion, 8);
});

test("subscribers get the new frozen state on every change and can unsubscribe", () => {
  const a = agent();
  const seen = [];
  const unsubscribe = a.subscribe((state) => seen.push(state));
  a.setRoute("/work-permits/4821");
  a.setActiveTab("components");
  unsubscribe();
  a.setSelection({ entityType: "workPermit", entityId: "4821" });
  assert.deepEqual(seen.map((s) => s.contextVersion), [1, 2]);
  assert.equal(seen[0].navigation.route, "/work-permits/4821");
  assert.ok(Object.isFrozen(seen[1]));
  assert.throws(() => {
    seen[1].activeTabId = "other";
  }, TypeError);
});

test("a faulty subscriber does not break the store", () => {
  const a = agent();
  const originalError = console.error;
  console.error = () => {};
  try {
    a.subscribe(() => {
      throw new Error("boom");
    });
    let called = false;
    a.subscribe(() => {
      called = true;
    });
    a.setRoute("/x");
    assert.ok(called);
  } finally {
    console.error = originalError;
  }
});

test("tabs carry index and active flags and the active tab id", () => {
  const a = agent();
  a.setTabs([{ id: "general", title: "Geral" }, { id: "components", title: "Componentes" }, { id: "documents", title: "Documentos" }], "general");
  a.setActiveTab("components");
  const snap = a.snapshot();
  assert.equal(snap.activeTabId, "components");
  assert.deepEqual(snap.tabs, [
    { id: "general", title: "Geral", index: 0, active: false },
    { id: "components", title: "Componentes", index: 1, active: true },
    { id: "documents", title: "Documentos", index: 2, active: false },
  ]);
});

test("snapshot() is a frozen minimal JSON with capturedAt and contextVersion", () => {
  const a = agent();
  a.setRoute({ route: "/work-permits/4821", params: { id: "4821" }, breadcrumbs: [] });
  a.setPage({ id: "workPermit.details", title: "Permissão de Trabalho", metadata: {}, semanticId: undefined });
  a.setFocus({ semanticId: "workPermit.validity", type: "field", label: "Validade", parentIds: ["workPermit", "workPermit.components"] });
  const snap = a.snapshot();
  assert.ok(Object.isFrozen(snap));
  assert.ok(Object.isFrozen(snap.focus.parentIds));
  assert.deepEqual(snap, {
    application: APPLICATION,
    navigation: { route: "/work-permits/4821", params: { id: "4821" } },
    page: { id: "workPermit.details", title: "Permissão de Trabalho" },
    focus: { semanticId: "workPermit.validity", type: "field", label: "Validade", parentIds: ["workPermit", "workPermit.components"] },
    user: {},
    capturedAt: "2026-09-05T12:00:00.000Z",
    contextVersion: 3,
  });
  assert.deepEqual(JSON.parse(JSON.stringify(snap)), snap, "pure JSON");
});

test("a typical work-permit context stays within 1–3 KB", () => {
  const a = agent();
  a.setRoute({ route: "/work-permits/4821", routeName: "workPermit.details", params: { id: "4821" } });
  a.setPage({ id: "workPermit.details", type: "details", title: "Permissão de Trabalho PT-2026-004821", semanticId: "workPermit" });
  a.setTabs([{ id: "general", title: "Geral" }, { id: "components", title: "Componentes" }, { id: "documents", title: "Documentos" }], "components");
  a.setSelection({ entityType: "equipment", entityId: "equipment-827", displayName: "Andaime" });
  a.setFocus({ semanticId: "workPermit.components.equipment.validity", type: "field", label: "Validade", parentIds: ["workPermit", "workPermit.components", "workPermit.components.equipment"], value: "30 dias" });
  a.setViewport({ visibleSemanticIds: ["workPermit.components.table", "workPermit.components.equipment.validity", "workPermit.components.equipment.startDate"], topVisibleElement: "workPermit.components.table", bottomVisibleElement: "workPermit.components.equipment.startDate" });
  const size = jsonByteSize(a.snapshot());
  assert.ok(size >= 500 && size <= 3072, `typical context is ${size} bytes`);
});

test("sensitive keys are dropped client-side, at any depth", () => {
  const a = agent({ user: { locale: "pt-BR", email: "ana@example.com" } });
  a.setSelection({
    entityType: "employee",
    entityId: "e-1",
    displayName: "Ana",
    fields: { cpf: "123.456.789-09", CNPJ: "1", rg: "2", contactEmail: "a@b.c", telefone: "3", phone_number: "4", "Endereço": "5", address: "6", "salário": 7, salary: 8, password: "9", accessToken: "10", role: "Técnica" },
  });
  const snap = a.snapshot();
  assert.deepEqual(snap.user, { locale: "pt-BR" });
  assert.deepEqual(snap.selection.fields, { role: "Técnica" });
  assert.doesNotMatch(JSON.stringify(snap), /123\.456|a@b\.c|ana@example/);
});

test("isSensitiveKey matches words, not substrings of other words", () => {
  for (const key of ["cpf", "CPF", "userEmail", "user_email", "e-mail-x", "telefone", "endereço", "ENDERECO", "salário", "api_token", "tokenValue", "password", "rg"]) {
    assert.ok(isSensitiveKey(key), key);
  }
  for (const key of ["semanticId", "entityType", "label", "organization", "progress", "phonetic", "tokens", "title"]) {
    assert.ok(!isSensitiveKey(key), key);
  }
});

test("a context over 5,120 bytes throws CONTEXT_SIZE_LIMIT_EXCEEDED", () => {
  const a = agent();
  a.setPage({ id: "p", title: "x".repeat(CONTEXT_SIZE_LIMIT_BYTES) });
  assert.throws(() => a.snapshot(), (err) => {
    assert.ok(err instanceof ContextoError);
    assert.equal(err.code, "CONTEXT_SIZE_LIMIT_EXCEEDED");
    assert.equal(err.details.limit, 5120);
    assert.ok(err.details.size > 5120);
    return true;
  });
});

test("the size is measured in UTF-8 bytes, not characters", () => {
  const a = agent();
  a.setPage({ id: "p", title: "" });
  const base = jsonByteSize(a.snapshot());
  // "ç" is one character but two UTF-8 bytes: a title of N "ç" costs 2N bytes.
  const room = CONTEXT_SIZE_LIMIT_BYTES - base;
  a.setPage({ id: "p", title: "ç".repeat(Math.floor(room / 2)) });
  assert.ok(jsonByteSize(a.snapshot()) <= CONTEXT_SIZE_LIMIT_BYTES);
  a.setPage({ id: "p", title: "ç".repeat(Math.floor(room / 2) + 1) });
  assert.throws(() => a.snapshot(), { code: "CONTEXT_SIZE_LIMIT_EXCEEDED" });
  assert.ok("ç".repeat(Math.floor(room / 2) + 1).length + base < CONTEXT_SIZE_LIMIT_BYTES, "by characters it would have fit");
});

test("setFocus needs a semanticId; an unknown type is sent as component", () => {
  const a = agent();
  assert.throws(() => a.setFocus({ type: "field" }), { code: "INVALID_FOCUS" });
  a.setFocus({ semanticId: "x.y", type: "widget" });
  assert.equal(a.snapshot().focus.type, "component");
});

test("user is always present and navigation defaults to location.pathname", () => {
  globalThis.location = { pathname: "/demo/" };
  try {
    const snap = agent().snapshot();
    assert.deepEqual(snap.user, {});
    assert.deepEqual(snap.navigation, { route: "/demo/" });
  } finally {
    delete globalThis.location;
  }
});

test("setElements declares labels and visibility; a non-visible element cannot be the focus", () => {
  const a = agent();
  a.setFocus({ semanticId: "f.a", type: "field" });
  a.setElements([
    { semanticId: "f.a", type: "field", label: "A", visibility: "collapsed" },
    { semanticId: "f.b", type: "field", label: "B" },
  ]);
  const snap = a.snapshot();
  assert.equal(snap.focus, undefined, "the focus became collapsed and was dropped");
  assert.deepEqual(snap.elements, [
    { semanticId: "f.a", type: "field", label: "A", visibility: "collapsed" },
    { semanticId: "f.b", type: "field", label: "B", visibility: "visible" },
  ]);
  assert.throws(() => a.setFocus({ semanticId: "f.a", type: "field" }), { code: "FOCUS_NOT_VISIBLE" });
  a.setFocus({ semanticId: "f.b", type: "field" });
});

test("the elements hint list is trimmed before the size limit applies", () => {
  const a = agent();
  a.setPage({ id: "p", type: "details", title: "Página" });
  a.setElements(Array.from({ length: 40 }, (_, i) => ({ semanticId: `page.section.field${i}`, type: "field", label: `Campo número ${i} com um rótulo longo` })));
  const snap = a.snapshot();
  assert.ok(snap.elements.length > 10 && snap.elements.length < 40, `kept ${snap.elements.length}`);
  assert.equal(snap.elements[0].semanticId, "page.section.field0", "the first ones are kept");
  assert.ok(jsonByteSize(snap) <= 4096);
});

test("nothing is sent to the server while the context changes", () => {
  let requests = 0;
  const a = agent({ fetch: () => { requests += 1; } });
  for (let i = 0; i < 50; i += 1) {
    a.setFocus({ semanticId: `field.${i}`, type: "field" });
    a.setActiveTab(i % 2 ? "general" : "components");
    a.snapshot();
  }
  assert.equal(requests, 0);
  assert.equal(a.contextVersion, 100);
});
