/**
 * contexto-react.js — React bindings of contexto.js (PRD-002 §13–§15).
 *
 * React is a peer: this module imports "react" and the host application's
 * bundler (or an import map) provides it. Written with React.createElement so
 * it needs no JSX build.
 *
 *   <AgentProvider options={{ endpoint: "/api/v1", token, application }}>
 *     <AgentPage id="workPermit.details" title="Permissão de Trabalho" route="/work-permits/4821" />
 *     <AgentContext id="workPermit.validity" type="field" label="Validade">
 *       <ValidityField />
 *     </AgentContext>
 *   </AgentProvider>
 *
 *   const agent = useAgentContext();
 *   agent.setActiveTab("components");
 *   agent.setSelection({ entityType: "workPermit", entityId: "4821" });
 *   const reply = await agent.send("Explique isso.");
 */
import * as React from "react";
import { createAgentContext } from "./contexto.js";

const h = React.createElement;

const AgentStoreContext = React.createContext(null);
const AgentParentContext = React.createContext(null);

/**
 * Provides one agent context to the tree. Pass an existing `agent` (from
 * createAgentContext) or the `options` to create one. With `capture` (the
 * default) it attaches the declarative [data-agent-id] capture to `root`
 * (default: document) while mounted.
 */
export function AgentProvider({ agent, options, capture = true, root, children }) {
  const [store] = React.useState(() => agent || createAgentContext(options || {}));
  React.useEffect(() => {
    if (!capture) return undefined;
    const target = root || (typeof document !== "undefined" ? document : null);
    if (!target) return undefined;
    store.attach(target);
    return () => store.detach();
  }, [store, capture, root]);
  return h(AgentStoreContext.Provider, { value: store }, children);
}

/** The agent of the nearest AgentProvider: setRoute, setPage, setTabs, setActiveTab, setFocus, setSelection, setViewport, subscribe, snapshot, send. */
export function useAgentContext() {
  const store = React.useContext(AgentStoreContext);
  if (!store) throw new Error("useAgentContext() must be used inside <AgentProvider>.");
  return store;
}

/** The current (frozen) state of the agent context; re-renders on every change. */
export function useAgentState() {
  const store = useAgentContext();
  const cache = React.useRef({ version: -1, state: null });
  const getSnapshot = () => {
    if (cache.current.version !== store.contextVersion) {
      cache.current = { version: store.contextVersion, state: store.getState() };
    }
    return cache.current.state;
  };
  return React.useSyncExternalStore(store.subscribe, getSnapshot, getSnapshot);
}

function useStableJson(value) {
  return JSON.stringify(value === undefined ? null : value);
}

/** Registers the current page (and, optionally, its route) while mounted. */
export function useAgentPage(page, route) {
  const store = useAgentContext();
  const pageKey = useStableJson(page);
  const routeKey = useStableJson(route);
  React.useEffect(() => {
    if (route !== undefined) store.setRoute(route);
    store.setPage(page);
  }, [store, pageKey, routeKey]); // eslint-disable-line react-hooks/exhaustive-deps
}

/** Registers the tabs of the page and the active one. */
export function useAgentTabs(tabs, activeTabId) {
  const store = useAgentContext();
  const tabsKey = useStableJson(tabs);
  React.useEffect(() => {
    store.setTabs(tabs, activeTabId);
  }, [store, tabsKey, activeTabId]); // eslint-disable-line react-hooks/exhaustive-deps
}

/** Registers the selected record (null clears it). */
export function useAgentSelection(selection) {
  const store = useAgentContext();
  const key = useStableJson(selection);
  React.useEffect(() => {
    store.setSelection(selection || null);
  }, [store, key]); // eslint-disable-line react-hooks/exhaustive-deps
}

/**
 * Registers the client-mode handler of a capability while mounted (agent.onAction):
 * `apply({value, unit, entity, target})` changes the component's state and returns the
 * new value. The latest `apply` is always the one called (no stale closure).
 */
export function useAgentAction(capabilityId, apply) {
  const store = useAgentContext();
  const latest = React.useRef(apply);
  latest.current = apply;
  React.useEffect(() => store.onAction(capabilityId, (request) => latest.current(request)), [store, capabilityId]);
}

/** Component form of useAgentPage: <AgentPage id title type semanticId route />. */
export function AgentPage({ route, children, ...page }) {
  useAgentPage(page, route);
  return children === undefined ? null : h(React.Fragment, null, children);
}

/**
 * Marks a semantic region of the UI: renders `as` (default "div") with the
 * declarative data-agent-* attributes, so focus, click and keyboard
 * navigation inside it set the semantic focus; nested AgentContext elements
 * get their parent from the React tree (data-agent-parent). `entityType` /
 * `entityId` / `displayName` make it a selectable record; `value` is sent as
 * the focused value (opt-in, never read from inputs).
 */
export function AgentContext({
  id,
  type,
  label,
  parent,
  value,
  entityType,
  entityId,
  displayName,
  tab,
  as = "div",
  children,
  ...rest
}) {
  const inherited = React.useContext(AgentParentContext);
  const parentId = parent === undefined ? inherited : parent;
  const props = { ...rest, "data-agent-id": id };
  if (type) props["data-agent-type"] = type;
  if (label) props["data-agent-label"] = label;
  if (parentId) props["data-agent-parent"] = parentId;
  if (value !== undefined && value !== null) props["data-agent-value"] = String(value);
  if (entityId !== undefined && entityId !== null) {
    props["data-agent-entity-id"] = String(entityId);
    if (entityType) props["data-agent-entity-type"] = entityType;
    if (displayName) props["data-agent-display-name"] = displayName;
  }
  if (tab) props["data-agent-tab"] = tab;
  return h(AgentParentContext.Provider, { value: id }, h(as, props, children));
}
