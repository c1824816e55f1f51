// Declarative capture of [data-agent-id] elements in a jsdom document.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CONTEXTO_JS } from "../support/paths.mjs";
import { makeDom, fakeIntersectionObserver, flush } from "../support/dom.mjs";

const { createAgentContext, computeVisibility, VISIBILITY } = await import(CONTEXTO_JS);

const PAGE = `
<main data-agent-id="workPermit" data-agent-type="page" data-agent-label="Permissão de Trabalho">
  <div role="tablist">
    <button id="tab-general" role="tab" data-agent-id="workPermit.tabs.general" data-agent-type="tab" data-agent-label="Geral">Geral</button>
    <button id="tab-components" role="tab" data-agent-id="workPermit.tabs.components" data-agent-type="tab" data-agent-label="Componentes">Componentes</button>
  </div>
  <section role="tabpanel" data-agent-tab="general" data-agent-id="workPermit.general" data-agent-type="section" data-agent-label="Geral">
    <input id="number" data-agent-id="workPermit.number" data-agent-type="field" data-agent-label="Número" data-agent-value="PT-2026-004821">
    <input id="issuer" data-agent-id="workPermit.issuer" data-agent-type="field" data-agent-label="Emitente">
    <input id="closed" disabled data-agent-id="workPermit.closedAt" data-agent-type="field" data-agent-label="Encerramento">
  </section>
  <section role="tabpanel" data-agent-tab="components" hidden data-agent-id="workPermit.components" data-agent-type="section" data-agent-label="Componentes">
    <table data-agent-id="workPermit.components.table" data-agent-type="table" data-agent-label="Componentes">
      <tr id="row-827" tabindex="0" data-agent-id="workPermit.components.equipment" data-agent-type="row" data-agent-label="Andaime"
          data-agent-entity-type="equipment" data-agent-entity-id="equipment-827" data-agent-display-name="Andaime"><td>Andaime</td></tr>
      <tr id="row-828" tabindex="0" data-agent-id="workPermit.components.equipment" data-agent-type="row" data-agent-label="Guindaste"
          data-agent-entity-type="equipment" data-agent-entity-id="equipment-828" data-agent-display-name="Guindaste"><td>Guindaste</td></tr>
    </table>
    <div data-agent-id="workPermit.components.equipment.details" data-agent-parent="workPermit.components.equipment" data-agent-type="component">
      <input id="validity" data-agent-id="workPermit.components.equipment.validity" data-agent-type="field" data-agent-label="Validade">
      <input id="start" data-agent-id="workPermit.components.equipment.startDate" data-agent-type="field" data-agent-label="Data de Início">
    </div>
  </section>
  <details id="more">
    <summary data-agent-id="workPermit.more" data-agent-type="button" data-agent-label="Mais">Mais</summary>
    <input id="notes" data-agent-id="workPermit.notes" data-agent-type="field" data-agent-label="Observações">
  </details>
  <button id="toggle" aria-expanded="false" aria-controls="approval">Aprovação</button>
  <div id="approval"><input id="approver" data-agent-id="workPermit.approval.approver" data-agent-type="field" data-agent-label="Aprovador"></div>
  <div aria-expanded="false"><input id="inner" data-agent-id="workPermit.inner" data-agent-type="field" data-agent-label="Interno"></div>
  <div style="display:none"><input id="secret" data-agent-id="workPermit.secret" data-agent-type="field" data-agent-label="Oculto"></div>
  <div aria-disabled="true"><button id="approve" data-agent-id="workPermit.approve" data-agent-type="button" data-agent-label="Aprovar">Aprovar</button></div>
</main>`;

function visibilityMap(agent) {
  return Object.fromEntries(agent.snapshot().elements.map((e) => [e.semanticId, e.visibility]));
}

function setup({ io } = {}) {
  const dom = makeDom(PAGE);
  const { document } = dom.window;
  const agent = createAgentContext({ fetch: () => assert.fail("nothing is sent"), IntersectionObserver: io });
  agent.setTabs([{ id: "general", title: "Geral" }, { id: "components", title: "Componentes" }], "general");
  agent.attach(document);
  const $ = (sel) => document.querySelector(sel);
  function showTab(id) {
    for (const panel of document.querySelectorAll('[role="tabpanel"]')) panel.hidden = panel.dataset.agentTab !== id;
    agent.setActiveTab(id);
  }
  return { dom, document, agent, $, showTab };
}

test("focusing a declared field sets the semantic focus with its parents and value", () => {
  const { agent, $ } = setup();
  $("#number").focus();
  const { focus } = agent.snapshot();
  assert.deepEqual(focus, {
    semanticId: "workPermit.number",
    type: "field",
    label: "Número",
    value: "PT-2026-004821",
    parentIds: ["workPermit", "workPermit.general"],
  });
});

test("keyboard navigation moves the semantic focus field by field", () => {
  const { agent, $, document } = setup();
  const seen = [];
  agent.subscribe((s) => s.focus && seen.at(-1) !== s.focus.semanticId && seen.push(s.focus.semanticId));
  // What the browser does on Tab / Tab: move DOM focus to the next control.
  for (const id of ["#number", "#issuer"]) {
    $(id).dispatchEvent(new document.defaultView.KeyboardEvent("keydown", { key: "Tab", bubbles: true }));
    $(id).focus();
  }
  assert.deepEqual(seen, ["workPermit.number", "workPermit.issuer"]);
  // Enter on a declared row (roving focus without a DOM focus change) also counts.
  $("#tab-components").dispatchEvent(new document.defaultView.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  assert.equal(agent.snapshot().focus.semanticId, "workPermit.tabs.components");
  $("#tab-general").dispatchEvent(new document.defaultView.KeyboardEvent("keydown", { key: "ArrowLeft", bubbles: true }));
  assert.equal(agent.snapshot().focus.semanticId, "workPermit.tabs.components", "other keys do not move the semantic focus");
});

test("clicking a row selects its record and focuses it", () => {
  const { agent, $, showTab } = setup();
  showTab("components");
  $("#row-828 td").click();
  const snap = agent.snapshot();
  assert.deepEqual(snap.selection, { entityType: "equipment", entityId: "equipment-828", displayName: "Guindaste" });
  assert.equal(snap.focus.semanticId, "workPermit.components.equipment");
  assert.equal(snap.focus.label, "Guindaste");
  assert.deepEqual(snap.focus.parentIds, ["workPermit", "workPermit.components", "workPermit.components.table"]);
});

test("data-agent-parent declares the parent when the DOM nesting does not", () => {
  const { agent, $, showTab } = setup();
  showTab("components");
  $("#validity").focus();
  assert.deepEqual(agent.snapshot().focus.parentIds, [
    "workPermit",
    "workPermit.components",
    "workPermit.components.table",
    "workPermit.components.equipment",
    "workPermit.components.equipment.details",
  ]);
});

test("hidden, collapsed, inactive and disabled elements are marked and never become the focus", () => {
  const { agent, $, document } = setup();
  $("#number").focus();
  const expected = {
    "#validity": VISIBILITY.INACTIVE,
    "#row-827": VISIBILITY.INACTIVE,
    "#notes": VISIBILITY.COLLAPSED,
    "#approver": VISIBILITY.COLLAPSED,
    "#inner": VISIBILITY.COLLAPSED,
    "#secret": VISIBILITY.HIDDEN,
    "#closed": VISIBILITY.DISABLED,
    "#approve": VISIBILITY.DISABLED,
    "#number": VISIBILITY.VISIBLE,
    '[data-agent-id="workPermit.more"]': VISIBILITY.VISIBLE,
  };
  for (const [sel, vis] of Object.entries(expected)) {
    assert.equal($(sel).getAttribute("data-agent-visibility"), vis, sel);
  }
  for (const sel of ["#validity", "#notes", "#approver", "#inner", "#secret", "#closed", "#approve"]) {
    $(sel).dispatchEvent(new document.defaultView.FocusEvent("focusin", { bubbles: true }));
    $(sel).click();
    assert.equal(agent.snapshot().focus.semanticId, "workPermit.number", `${sel} must not become the focus`);
  }
  const visibility = visibilityMap(agent);
  assert.equal(visibility["workPermit.components.equipment.validity"], "inactive");
  assert.equal(visibility["workPermit.notes"], "collapsed");
  assert.equal(visibility["workPermit.secret"], "hidden");
  assert.equal(visibility["workPermit.closedAt"], "disabled");
  assert.equal(visibility["workPermit.number"], "visible");
  const { elements } = agent.snapshot();
  assert.deepEqual(elements[0], { semanticId: "workPermit", type: "page", label: "Permissão de Trabalho", visibility: "visible" });
  const firstHidden = elements.findIndex((e) => e.visibility !== "visible");
  assert.ok(elements.slice(firstHidden).every((e) => e.visibility !== "visible"), "visible elements come first");
  assert.throws(() => agent.setFocus({ semanticId: "workPermit.notes", type: "field" }), { code: "FOCUS_NOT_VISIBLE" });
});

test("switching tab makes the other panel inactive and drops a focus inside it", async () => {
  const { agent, $, showTab } = setup();
  showTab("components");
  $("#validity").focus();
  assert.equal(agent.snapshot().focus.semanticId, "workPermit.components.equipment.validity");
  const before = agent.contextVersion;
  showTab("general");
  await Promise.resolve();
  await Promise.resolve();
  const snap = agent.snapshot();
  assert.equal(snap.activeTabId, "general");
  assert.equal(snap.focus, undefined);
  assert.equal(visibilityMap(agent)["workPermit.components.equipment.validity"], "inactive");
  assert.ok(agent.contextVersion > before);
});

test("opening a <details> or expanding a region is seen by the mutation observer", async () => {
  const { agent, $ } = setup();
  assert.equal(visibilityMap(agent)["workPermit.notes"], "collapsed");
  $("#more").open = true;
  $("#toggle").setAttribute("aria-expanded", "true");
  await flush();
  const visibility = visibilityMap(agent);
  assert.equal(visibility["workPermit.notes"], "visible");
  assert.equal(visibility["workPermit.approval.approver"], "visible");
  $("#notes").focus();
  assert.equal(agent.snapshot().focus.semanticId, "workPermit.notes");
});

test("computeVisibility uses the store's active tab for data-agent-tab panels", () => {
  const { $ } = setup();
  const panel = $('[data-agent-tab="components"]');
  panel.hidden = false;
  assert.equal(computeVisibility($("#validity"), { activeTabId: "general" }), "inactive");
  assert.equal(computeVisibility($("#validity"), { activeTabId: "components" }), "visible");
});

test("the IntersectionObserver keeps visibleSemanticIds, top and bottom in screen order", () => {
  const IO = fakeIntersectionObserver();
  const { agent, $ } = setup({ io: IO });
  const rects = { "#number": 300, "#issuer": 100, "#closed": 200, "#tab-general": 10 };
  for (const [sel, top] of Object.entries(rects)) {
    $(sel).getBoundingClientRect = () => ({ top, left: 0, bottom: top + 20, right: 100, width: 100, height: 20 });
  }
  IO.trigger([[$("#number"), true], [$("#issuer"), true], [$("#closed"), true], [$("#validity"), true]]);
  let { viewport } = agent.snapshot();
  // #closed is disabled and #validity inactive: neither counts as visible.
  assert.deepEqual(viewport, {
    visibleSemanticIds: ["workPermit.issuer", "workPermit.number"],
    topVisibleElement: "workPermit.issuer",
    bottomVisibleElement: "workPermit.number",
  });
  IO.trigger([[$("#tab-general"), true], [$("#number"), false]]);
  ({ viewport } = agent.snapshot());
  assert.deepEqual(viewport.visibleSemanticIds, ["workPermit.tabs.general", "workPermit.issuer"]);
  assert.equal(viewport.topVisibleElement, "workPermit.tabs.general");
  assert.equal(viewport.bottomVisibleElement, "workPermit.issuer");
});

test("no DOM, HTML or coordinates leave the page", () => {
  const IO = fakeIntersectionObserver();
  const { agent, $, showTab } = setup({ io: IO });
  showTab("components");
  $("#row-827").click();
  $("#validity").focus();
  IO.trigger([[$("#validity"), true], [$("#start"), true]]);
  const json = JSON.stringify(agent.snapshot());
  assert.doesNotMatch(json, /<|>|input|tabindex|getBoundingClientRect|"top":|"left":|"x":|"y":/);
  for (const value of Object.values(agent.snapshot())) {
    assert.ok(typeof value !== "object" || value === null || !("nodeType" in value));
  }
});

test("detach() stops the capture", () => {
  const { agent, $ } = setup();
  agent.detach();
  $("#issuer").focus();
  assert.equal(agent.snapshot().focus, undefined);
});
