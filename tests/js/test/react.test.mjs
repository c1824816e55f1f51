// React bindings: AgentProvider, useAgentContext, <AgentContext>, hooks (PRD §13–§15, §39).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CONTEXTO_JS, CONTEXTO_REACT_JS } from "../support/paths.mjs";
import { makeDom, installGlobals } from "../support/dom.mjs";
import { fakeFetch, SESSION, answer } from "../support/fake-fetch.mjs";

// React DOM reads the browser globals when it is first imported.
const dom = makeDom('<div id="root"></div>');
installGlobals(dom);
const React = await import("react");
const { act } = React;
const { createRoot } = await import("react-dom/client");
const { createAgentContext } = await import(CONTEXTO_JS);
const { AgentProvider, AgentContext, AgentPage, useAgentAction, useAgentContext, useAgentState, useAgentPage, useAgentTabs, useAgentSelection } = await import(CONTEXTO_REACT_JS);
const h = React.createElement;

async function render(element) {
  const container = document.createElement("div");
  document.body.appendChild(container);
  const root = createRoot(container);
  await act(async () => root.render(element));
  return {
    container,
    $: (sel) => container.querySelector(sel),
    rerender: (el) => act(async () => root.render(el)),
    unmount: () => act(async () => root.unmount()),
  };
}

const TABS = [{ id: "general", title: "Geral" }, { id: "components", title: "Componentes" }, { id: "documents", title: "Documentos" }];

function WorkPermit({ tab, equipment }) {
  useAgentPage({ id: "workPermit.details", type: "details", title: "Permissão de Trabalho", semanticId: "workPermit" }, { route: "/work-permits/4821", routeName: "workPermit.details", params: { id: "4821" } });
  useAgentTabs(TABS, tab);
  useAgentSelection(equipment ? { entityType: "equipment", entityId: equipment.id, displayName: equipment.name } : null);
  return h(
    AgentContext,
    { id: "workPermit", type: "page", label: "Permissão de Trabalho", as: "main" },
    h(
      AgentContext,
      { id: "workPermit.components", type: "section", label: "Componentes", as: "section" },
      h(AgentContext, { id: "workPermit.components.equipment.validity", type: "field", label: "Validade", value: "30 dias", as: "label" }, h("input", { id: "validity" })),
      h(AgentContext, { id: "workPermit.components.equipment.startDate", type: "field", label: "Data de Início", as: "label" }, h("input", { id: "start" })),
    ),
  );
}

test("React registers page, route, active tab, selection and semantic focus", async () => {
  const agent = createAgentContext({ fetch: () => assert.fail("nothing is sent") });
  const view = await render(h(AgentProvider, { agent }, h(WorkPermit, { tab: "components", equipment: { id: "equipment-827", name: "Andaime" } })));
  let snap = agent.snapshot();
  assert.deepEqual(snap.navigation, { route: "/work-permits/4821", routeName: "workPermit.details", params: { id: "4821" } });
  assert.equal(snap.page.title, "Permissão de Trabalho");
  assert.equal(snap.activeTabId, "components");
  assert.equal(snap.selection.entityId, "equipment-827");
  await act(async () => view.$("#validity").focus());
  snap = agent.snapshot();
  assert.deepEqual(snap.focus, {
    semanticId: "workPermit.components.equipment.validity",
    type: "field",
    label: "Validade",
    value: "30 dias",
    parentIds: ["workPermit", "workPermit.components"],
  });
  // Tab, selection and focus changes update the context.
  const version = agent.contextVersion;
  await view.rerender(h(AgentProvider, { agent }, h(WorkPermit, { tab: "documents", equipment: { id: "equipment-828", name: "Guindaste" } })));
  await act(async () => view.$("#start").focus());
  snap = agent.snapshot();
  assert.equal(snap.activeTabId, "documents");
  assert.equal(snap.selection.displayName, "Guindaste");
  assert.equal(snap.focus.semanticId, "workPermit.components.equipment.startDate");
  assert.ok(agent.contextVersion >= version + 3);
  await view.unmount();
});

test("<AgentContext> renders data-agent-* attributes and nests parents from the React tree", async () => {
  const agent = createAgentContext();
  const view = await render(
    h(AgentProvider, { agent, capture: false },
      h(AgentContext, { id: "a", type: "page", label: "A" },
        h(AgentContext, { id: "a.b", type: "table", as: "table" },
          h("tbody", null,
            h(AgentContext, { id: "a.b.row", type: "row", as: "tr", entityType: "equipment", entityId: "equipment-827", displayName: "Andaime", className: "row" }, h("td", null, "Andaime")))),
        h(AgentContext, { id: "x", parent: "elsewhere" }))),
  );
  const row = view.$("tr");
  assert.equal(row.getAttribute("data-agent-id"), "a.b.row");
  assert.equal(row.getAttribute("data-agent-parent"), "a.b");
  assert.equal(row.getAttribute("data-agent-entity-id"), "equipment-827");
  assert.equal(row.className, "row");
  assert.equal(view.$('[data-agent-id="a"]').hasAttribute("data-agent-parent"), false);
  assert.equal(view.$('[data-agent-id="x"]').getAttribute("data-agent-parent"), "elsewhere");
  // capture: false → no listeners: focus does not change the store.
  row.click();
  assert.equal(agent.snapshot().focus, undefined);
  await view.unmount();
});

function Chat({ onReply }) {
  const agent = useAgentContext();
  const state = useAgentState();
  return h("div", null,
    h("output", { id: "version" }, String(state.contextVersion)),
    h("output", { id: "tab" }, state.activeTabId || ""),
    h("button", { id: "components", onClick: () => agent.setActiveTab("components") }, "Componentes"),
    h("button", { id: "ask", onClick: () => agent.send("Explique isso.").then(onReply) }, "Perguntar"));
}

test("useAgentContext() and useAgentState() drive a chat: re-render on change, send on demand", async () => {
  const fetch = fakeFetch([SESSION, answer("snap-1", { message: "A validade é…" })]);
  let reply;
  const view = await render(h(AgentProvider, { options: { fetch, token: "t" } }, h(Chat, { onReply: (r) => { reply = r; } })));
  assert.equal(view.$("#version").textContent, "0");
  await act(async () => view.$("#components").click());
  assert.equal(view.$("#tab").textContent, "components");
  assert.equal(view.$("#version").textContent, "1");
  assert.equal(fetch.calls.length, 0, "changes are not sent");
  await act(async () => view.$("#ask").click());
  await act(async () => new Promise((r) => setTimeout(r, 0)));
  assert.equal(reply.message, "A validade é…");
  assert.equal(fetch.calls[1].body.context.activeTabId, "components");
  await view.unmount();
});

test("<AgentPage> registers the page as a component", async () => {
  const agent = createAgentContext();
  const view = await render(h(AgentProvider, { agent, capture: false }, h(AgentPage, { id: "home", title: "Início", route: "/" })));
  assert.deepEqual(agent.snapshot().page, { id: "home", title: "Início" });
  assert.equal(agent.snapshot().navigation.route, "/");
  await view.unmount();
});

test("useAgentContext() outside a provider is an error", async () => {
  function Orphan() {
    useAgentContext();
    return null;
  }
  const originalError = console.error;
  console.error = () => {};
  try {
    const container = document.createElement("div");
    const root = createRoot(container, { onUncaughtError: () => {} });
    let caught;
    class Boundary extends React.Component {
      static getDerivedStateFromError(error) {
        caught = error;
        return { failed: true };
      }
      constructor(props) {
        super(props);
        this.state = { failed: false };
      }
      render() {
        return this.state.failed ? null : this.props.children;
      }
    }
    await act(async () => root.render(h(Boundary, null, h(Orphan))));
    assert.match(String(caught && caught.message), /inside <AgentProvider>/);
    await act(async () => root.unmount());
  } finally {
    console.error = originalError;
  }
});

test("the provider detaches the capture on unmount", async () => {
  const agent = createAgentContext();
  const view = await render(h(AgentProvider, { agent }, h(AgentContext, { id: "f", type: "field" }, h("input", { id: "f" }))));
  const input = view.$("#f");
  await view.unmount();
  document.body.appendChild(input.parentElement || input);
  input.focus();
  assert.equal(agent.snapshot().focus, undefined);
});

test("useAgentAction registers a capability handler while mounted, with the latest state", async () => {
  const preview = {
    id: "a-1", capability: "workPermit.equipment.updateValidity", status: "needs_confirmation", execution: "client",
    target: "workPermit.components.equipment.validity", parameters: { value: 30, unit: "days" },
    entity: { entityType: "equipment", entityId: "equipment-827" }, preview: { label: "Validade", confirmationToken: "t" },
  };
  const fetch = fakeFetch([
    { body: { ...preview, status: "confirmed", preview: null } },
    ({ body }) => ({ body: { ...preview, status: "verified", preview: null, message: `ok ${body.value}` } }),
  ]);
  const agent = createAgentContext({ fetch, application: { applicationId: "sst" } });
  function Validity() {
    const [days, setDays] = React.useState(20);
    useAgentAction("workPermit.equipment.updateValidity", ({ value }) => {
      setDays(value);
      return value;
    });
    return h("span", { id: "days" }, `${days} dias`);
  }
  const view = await render(h(AgentProvider, { agent, capture: false }, h(Validity)));
  let done;
  await act(async () => {
    done = await agent.confirmAction(preview);
  });
  assert.equal(view.$("#days").textContent, "30 dias");
  assert.equal(done.message, "ok 30");
  await view.unmount();
  await assert.rejects(agent.confirmAction(preview), (err) => err.code === "NO_ACTION_HANDLER");
});
