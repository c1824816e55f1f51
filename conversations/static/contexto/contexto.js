/**
 * contexto.js — the Contexto front-end client (PRD-002 §13–§18, §26–§29, §35–§39).
 *
 * An ES module with no build step and no dependencies. It keeps a small,
 * semantic model of what the user is looking at (route, page, tabs, focus,
 * selection, viewport) in a local store and sends it to the Contexto API only
 * when the user talks to the agent, either whole (`context`) or as a JSON
 * Merge Patch (RFC 7396) against the last snapshot the server accepted
 * (`context: {baseSnapshotId, delta}`).
 *
 * No DOM, HTML, screenshots or mouse coordinates ever leave the page: DOM
 * capture only reads the declarative `data-agent-*` attributes.
 *
 *   import { createAgentContext } from "/static/contexto/contexto.js";
 *   const agent = createAgentContext({ endpoint: "/api/v1", token, application });
 *   agent.attach(document);           // declarative capture of [data-agent-id]
 *   agent.setPage({ id: "workPermit.details", title: "Permissão de Trabalho" });
 *   const reply = await agent.send("Explique isso.");
 */

/** Hard limit of the UTF-8 JSON context, shared with the server (PRD §35). */
export const CONTEXT_SIZE_LIMIT_BYTES = 5120;

/**
 * Keys never sent, wherever they appear: the server's default list
 * (conversations/context/redaction.py DEFAULT_SENSITIVE_KEYS, kept in step by a
 * test), so what the server would mask never leaves the page in the first place.
 */
export const SENSITIVE_KEYS = Object.freeze([
  "cpf", "cnpj", "rg", "pis", "nis", "ctps", "passport", "passaporte",
  "email", "mail", "telefone", "phone", "celular", "mobile", "whatsapp",
  "endereco", "address", "cep", "salario", "salary", "remuneracao",
  "password", "senha", "secret", "token", "apikey", "authorization", "cookie",
  "cartao", "creditcard", "iban", "nascimento", "birthdate",
]);

/** Visibility states of PRD §26. Only "visible" elements may become the focus. */
export const VISIBILITY = Object.freeze({
  VISIBLE: "visible",
  HIDDEN: "hidden",
  COLLAPSED: "collapsed",
  INACTIVE: "inactive",
  DISABLED: "disabled",
});

/**
 * Error codes after which send() re-snapshots and retries once with the whole
 * context. The clock ones are retried with the capture time corrected by the
 * server's Date header (a client clock off by minutes must not break the chat).
 */
export const RETRY_WITH_FULL_CONTEXT_CODES = Object.freeze([
  "STALE_CONTEXT_AGE",
  "UNKNOWN_BASE_CONTEXT",
  "CONTEXT_TIMESTAMP_IN_FUTURE",
]);

// Below this, a difference with the server's Date header (1 s resolution plus
// latency) is noise, not skew.
const CLOCK_SKEW_TOLERANCE_MS = 5000;

/** Element types of PRD §10; anything else is sent as "component". */
export const ELEMENT_TYPES = Object.freeze(["page", "section", "tab", "component", "field", "button", "table", "row", "cell", "menu"]);

// Caps that keep a typical context in the 1–3 KB range of PRD §35.
const MAX_VISIBLE_IDS = 40;
const MAX_ELEMENTS = 40;
const MAX_PARENT_DEPTH = 12;
// The `elements` hint list is trimmed (last first) while the snapshot is over
// this many bytes; only what remains is subject to the hard limit.
const ELEMENTS_SOFT_BUDGET_BYTES = 4096;

/** An error with the wire shape of the API: {"error": {"code", "message", "details"}}. */
export class ContextoError extends Error {
  constructor(code, message, { details = {}, status = null } = {}) {
    super(message);
    this.name = "ContextoError";
    this.code = code;
    this.details = details;
    this.status = status;
  }
}

// ---------------------------------------------------------------- pure helpers

const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function stripAccents(s) {
  return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
}

const SENSITIVE_SET = new Set(SENSITIVE_KEYS);

/**
 * True when a key names sensitive data: any of its words (camelCase, snake,
 * kebab or spaced; accents ignored), or two or three adjacent words joined,
 * is a sensitive key: `email`, `contactEmail`, `e-mail`, `user_phone`,
 * `Endereço` and `tokenCount` all are; `phonetic` and `tokens` are not.
 */
export function isSensitiveKey(key) {
  const words = stripAccents(String(key))
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  // Adjacent words joined too, so "e-mail" and "pass_word" are caught.
  for (let i = 0; i < words.length; i += 1) {
    let joined = "";
    for (let j = i; j < Math.min(words.length, i + 3); j += 1) {
      joined += words[j];
      if (SENSITIVE_SET.has(joined)) return true;
    }
  }
  return false;
}

/** True when a focused field names personal data by its last id segment or its label. */
export function isSensitiveField({ semanticId, label } = {}) {
  const last = String(semanticId || "").split(".").pop();
  return isSensitiveKey(last) || (label !== undefined && isSensitiveKey(label));
}

/**
 * A copy of `value` without sensitive keys, undefined/null values, functions,
 * empty objects and empty arrays: the minimal JSON of a snapshot.
 */
export function minimize(value) {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "function" || typeof value === "symbol") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    const out = value.map(minimize).filter((v) => v !== undefined);
    return out.length ? out : undefined;
  }
  if (typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      if (isSensitiveKey(k)) continue;
      const m = minimize(v);
      if (m !== undefined) out[k] = m;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value;
}

export function deepFreeze(value) {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export function deepEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Size in bytes of the UTF-8 JSON of `value`, measured with TextEncoder. */
export function jsonByteSize(value) {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

/**
 * The JSON Merge Patch (RFC 7396) that turns `source` into `target`.
 * Objects are patched key by key (a removed key becomes null); arrays and
 * scalars are replaced whole. Snapshots never hold null, so null only ever
 * means "removed".
 */
export function createMergePatch(source, target) {
  if (!isPlainObject(source) || !isPlainObject(target)) return deepClone(target);
  const patch = {};
  for (const key of Object.keys(source)) {
    if (!Object.prototype.hasOwnProperty.call(target, key)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(target)) {
    const before = source[key];
    if (!Object.prototype.hasOwnProperty.call(source, key)) {
      patch[key] = deepClone(value);
    } else if (isPlainObject(before) && isPlainObject(value)) {
      const sub = createMergePatch(before, value);
      if (Object.keys(sub).length) patch[key] = sub;
    } else if (!deepEqual(before, value)) {
      patch[key] = deepClone(value);
    }
  }
  return patch;
}

/** Applies a JSON Merge Patch (RFC 7396) to `target`, returning a new value. */
export function applyMergePatch(target, patch) {
  if (!isPlainObject(patch)) return deepClone(patch);
  const out = isPlainObject(target) ? deepClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

function deepClone(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

// ------------------------------------------------------------ DOM visibility

const AGENT_SELECTOR = "[data-agent-id]";
const CONTROL_SELECTOR = "input, select, textarea, button";

function cssEscape(value) {
  if (globalThis.CSS && typeof globalThis.CSS.escape === "function") return globalThis.CSS.escape(value);
  return String(value).replace(/["\\]/g, "\\$&");
}

function isDisplayedNone(el, view) {
  if (el.hidden || el.getAttribute("aria-hidden") === "true" || el.hasAttribute("inert")) return true;
  if (!view || typeof view.getComputedStyle !== "function") return false;
  const style = view.getComputedStyle(el);
  return style.display === "none" || style.visibility === "hidden";
}

function isTabPanel(el) {
  return el.getAttribute("role") === "tabpanel" || el.hasAttribute("data-agent-tab");
}

/**
 * The PRD §26 visibility of an element, judged from the DOM only:
 * - inactive: inside a tab panel that is not the active one (hidden, or whose
 *   `data-agent-tab` is not the store's active tab);
 * - collapsed: inside a closed <details> (outside its <summary>), under an
 *   ancestor with aria-expanded="false", or inside a region controlled by a
 *   button with aria-expanded="false";
 * - hidden: `hidden`, aria-hidden, inert, display:none or visibility:hidden on
 *   the element or an ancestor;
 * - disabled: :disabled, aria-disabled="true" (itself or an ancestor), or a
 *   wrapper all of whose form controls are disabled.
 */
export function computeVisibility(el, { activeTabId } = {}) {
  const doc = el.ownerDocument;
  const view = doc && doc.defaultView;
  let hidden = false;
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    if (isTabPanel(node)) {
      const tabId = node.getAttribute("data-agent-tab");
      if (isDisplayedNone(node, view) || (tabId && activeTabId && tabId !== activeTabId)) {
        return VISIBILITY.INACTIVE;
      }
    }
    if (node.tagName === "DETAILS" && !node.open) {
      const summary = node.querySelector(":scope > summary");
      if (!summary || !summary.contains(el)) return VISIBILITY.COLLAPSED;
    }
    if (node.getAttribute("aria-expanded") === "false") return VISIBILITY.COLLAPSED;
    if (node.id && doc) {
      const controller = doc.querySelector(`[aria-controls~="${cssEscape(node.id)}"][aria-expanded="false"]`);
      if (controller) return VISIBILITY.COLLAPSED;
    }
    if (!hidden && isDisplayedNone(node, view)) hidden = true;
  }
  if (hidden) return VISIBILITY.HIDDEN;
  if (isDisabled(el)) return VISIBILITY.DISABLED;
  return VISIBILITY.VISIBLE;
}

function isDisabled(el) {
  if (typeof el.matches === "function" && el.matches(":disabled")) return true;
  if (el.closest('[aria-disabled="true"]') || el.closest("[data-agent-disabled]")) return true;
  if (el.closest("fieldset[disabled]")) return true;
  const controls = el.querySelectorAll(CONTROL_SELECTOR);
  return controls.length > 0 && Array.from(controls).every((c) => c.matches(":disabled"));
}

export function elementType(type) {
  return ELEMENT_TYPES.includes(type) ? type : "component";
}

/** Reads the declarative description of an [data-agent-id] element. */
export function describeElement(el) {
  const data = {
    semanticId: el.getAttribute("data-agent-id"),
    type: elementType(el.getAttribute("data-agent-type")),
    label: el.getAttribute("data-agent-label") || undefined,
  };
  if (el.hasAttribute("data-agent-value")) data.value = el.getAttribute("data-agent-value");
  return data;
}

function parentElementOf(el, root) {
  const declared = el.getAttribute("data-agent-parent");
  if (declared) {
    const scope = root && root.querySelector ? root : el.ownerDocument;
    const found = scope.querySelector(`[data-agent-id="${cssEscape(declared)}"]`);
    return { id: declared, el: found };
  }
  const ancestor = el.parentElement && el.parentElement.closest(AGENT_SELECTOR);
  return ancestor ? { id: ancestor.getAttribute("data-agent-id"), el: ancestor } : null;
}

/** Semantic parents of an element, outermost first (PRD §11 `parentIds`). */
export function parentIdsOf(el, root) {
  const ids = [];
  const seen = new Set([el.getAttribute("data-agent-id")]);
  let current = el;
  for (let depth = 0; current && depth < MAX_PARENT_DEPTH; depth += 1) {
    const parent = parentElementOf(current, root);
    if (!parent || seen.has(parent.id)) break;
    seen.add(parent.id);
    ids.unshift(parent.id);
    current = parent.el;
  }
  return ids;
}

function selectionOf(el) {
  const holder = el.closest("[data-agent-entity-id]");
  if (!holder) return null;
  return {
    entityType: holder.getAttribute("data-agent-entity-type") || undefined,
    entityId: holder.getAttribute("data-agent-entity-id"),
    displayName: holder.getAttribute("data-agent-display-name") || undefined,
  };
}

// ---------------------------------------------------------------- the store

const SESSION_PATH = "/sessions";

function defaultNavigation() {
  const loc = globalThis.location;
  return loc && loc.pathname ? { route: loc.pathname } : undefined;
}

function normalizeRoute(route) {
  if (route === null || route === undefined) return undefined;
  if (typeof route === "string") return { route };
  return { ...route };
}

function normalizeTabs(tabs, activeTabId) {
  return (tabs || []).map((tab, index) => {
    const t = typeof tab === "string" ? { id: tab, title: tab } : tab;
    return { id: String(t.id), title: t.title ?? String(t.id), index, active: t.id === activeTabId };
  });
}

/**
 * Creates the local agent context of one page.
 *
 * options:
 * - endpoint: API base URL (default "/api/v1").
 * - token: API token, sent as `Authorization: Token <token>`; or
 * - csrfToken: CSRF token for session auth (sent as X-CSRFToken, same-origin cookies).
 * - application: { applicationId, applicationVersion, environment }.
 * - user: optional UserContext (locale, timezone, roles…); sensitive keys are dropped.
 * - sessionId: resume an existing conversation session (with initialVersion,
 *   the contextVersion it had reached).
 * - sessionBody: the body of POST /sessions (e.g. { agent: "slug" }).
 * - delta: false to always send the whole context.
 * - fetch, now, IntersectionObserver: injectable for tests.
 */
export function createAgentContext(options = {}) {
  const endpoint = String(options.endpoint ?? "/api/v1").replace(/\/+$/, "");
  const fetchImpl = options.fetch || ((...args) => globalThis.fetch(...args));
  const now = options.now || (() => Date.now());
  const IO = options.IntersectionObserver || globalThis.IntersectionObserver;
  const maxBytes = options.maxBytes ?? CONTEXT_SIZE_LIMIT_BYTES;

  let state = {
    application: options.application ? { ...options.application } : undefined,
    navigation: undefined,
    page: undefined,
    tabs: [],
    activeTabId: undefined,
    focus: undefined,
    selection: undefined,
    viewport: undefined,
    elements: [], // [{semanticId, type, label, visibility}] the UI declares (PRD §26)
    user: options.user ? { ...options.user } : undefined,
    // A page that resumes a session (sessionId) passes the version it reached, since
    // the server refuses a version lower than the session's last (STALE_CONTEXT_VERSION).
    contextVersion: Number.isInteger(options.initialVersion) ? options.initialVersion : 0,
  };
  const listeners = new Set();
  let sessionId = options.sessionId || null;
  let lastAccepted = null; // { id, context } of the last snapshot the server accepted
  let pending = Promise.resolve();
  const actionHandlers = new Map(); // capabilityId → apply(request) returning the new value
  const refreshListeners = new Set(); // called with each verified action (the UI reloads what changed)
  let clockOffsetMs = 0; // server time − local time, learnt from Date headers when skewed

  function commit(patch) {
    const next = { ...state, ...patch };
    const changed = Object.keys(patch).some((k) => !deepEqual(state[k], next[k]));
    if (!changed) return false;
    next.contextVersion = state.contextVersion + 1;
    state = next;
    const view = getState();
    for (const listener of Array.from(listeners)) {
      try {
        listener(view);
      } catch (err) {
        // A faulty listener must not break the store or the other listeners.
        if (globalThis.console) console.error(err);
      }
    }
    return true;
  }

  function getState() {
    return deepFreeze(deepClone(state));
  }

  function visibilityOf(semanticId) {
    const known = state.elements.find((e) => e.semanticId === semanticId);
    return known ? known.visibility : undefined;
  }

  function assertNotHidden(semanticId) {
    const vis = visibilityOf(semanticId);
    if (vis && vis !== VISIBILITY.VISIBLE) {
      throw new ContextoError("FOCUS_NOT_VISIBLE", `${semanticId} is ${vis} and cannot become the focus.`, {
        details: { semanticId, visibility: vis },
      });
    }
  }

  const api = {
    get contextVersion() {
      return state.contextVersion;
    },
    get sessionId() {
      return sessionId;
    },
    get lastAcceptedSnapshotId() {
      return lastAccepted ? lastAccepted.id : null;
    },
    getState,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    setApplication(application) {
      return commit({ application: application ? { ...application } : undefined });
    },
    setUser(user) {
      return commit({ user: user ? { ...user } : undefined });
    },
    setRoute(route) {
      return commit({ navigation: normalizeRoute(route) });
    },
    setPage(page) {
      return commit({ page: page ? { ...page } : undefined });
    },
    setTabs(tabs, activeTabId) {
      const active = activeTabId ?? (tabs || []).find((t) => t && t.active)?.id ?? state.activeTabId;
      const changed = commit({ tabs: normalizeTabs(tabs, active), activeTabId: active });
      if (changed) api.refresh();
      return changed;
    },
    setActiveTab(tabId) {
      const tabs = state.tabs.map((t) => ({ ...t, active: t.id === tabId }));
      const changed = commit({ tabs, activeTabId: tabId ?? undefined });
      if (changed) api.refresh();
      return changed;
    },
    /** Sets the semantic focus; null clears it. A known non-visible element is refused. */
    setFocus(focus) {
      if (!focus) return commit({ focus: undefined });
      if (!focus.semanticId) throw new ContextoError("INVALID_FOCUS", "focus.semanticId is required.");
      assertNotHidden(focus.semanticId);
      return commit({ focus: { ...focus, type: elementType(focus.type) } });
    },
    /**
     * Declares the UI elements (semanticId, type, label, visibility) without
     * DOM capture; attach() maintains this list from [data-agent-id] itself.
     */
    setElements(elements) {
      const list = (elements || []).slice(0, MAX_ELEMENTS).map((e) => ({
        semanticId: e.semanticId,
        type: elementType(e.type),
        label: e.label,
        visibility: e.visibility || VISIBILITY.VISIBLE,
      }));
      const patch = { elements: list };
      const hidden = state.focus && list.find((e) => e.semanticId === state.focus.semanticId && e.visibility !== VISIBILITY.VISIBLE);
      if (hidden) patch.focus = undefined; // a focus that is no longer visible is dropped
      return commit(patch);
    },
    setSelection(selection) {
      return commit({ selection: selection ? { ...selection } : undefined });
    },
    setViewport(viewport) {
      return commit({ viewport: viewport ? { ...viewport } : undefined });
    },
    /**
     * The context as sent: frozen, minimal JSON (no empty or sensitive keys)
     * with `capturedAt`. Throws CONTEXT_SIZE_LIMIT_EXCEEDED over 5,120 bytes.
     */
    snapshot() {
      const navigation = state.navigation || defaultNavigation();
      const context = minimize({
        application: state.application,
        navigation,
        page: state.page,
        tabs: state.tabs.length ? state.tabs : undefined,
        activeTabId: state.activeTabId,
        focus: state.focus,
        selection: state.selection,
        viewport: state.viewport,
        elements: state.elements,
      }) || {};
      if (context.focus && context.focus.value !== undefined && isSensitiveField(context.focus)) {
        // A focused field that is itself personal data (employee.cpf, "Telefone"): its value stays here.
        delete context.focus.value;
      }
      context.user = minimize(state.user) || {};
      context.capturedAt = new Date(now() + clockOffsetMs).toISOString();
      context.contextVersion = state.contextVersion;
      let size = jsonByteSize(context);
      while (size > ELEMENTS_SOFT_BUDGET_BYTES && context.elements && context.elements.length) {
        context.elements.pop();
        if (!context.elements.length) delete context.elements;
        size = jsonByteSize(context);
      }
      if (size > maxBytes) {
        throw new ContextoError(
          "CONTEXT_SIZE_LIMIT_EXCEEDED",
          `The UI context is ${size} bytes; the limit is ${maxBytes}.`,
          { details: { size, limit: maxBytes } },
        );
      }
      return deepFreeze(context);
    },
    /**
     * Sends the user's message with the current context and returns the
     * server's reply (answer, handoff, clarification or intent proposal).
     * Messages are sent one at a time, in order.
     */
    send(message, sendOptions = {}) {
      const run = pending.then(() => doSend(message, sendOptions));
      pending = run.catch(() => undefined);
      return run;
    },
    /**
     * Registers the client-mode handler of a capability (seed §38: the front end
     * applies a confirmed change). `apply({capability, target, value, unit, entity,
     * action})` changes the page and returns (or resolves to) the field's new value.
     * Contexto then reports that value with the context captured after the change,
     * and the server verifies both. Returns the unregister function.
     */
    onAction(capabilityId, apply) {
      if (!capabilityId || typeof apply !== "function") {
        throw new ContextoError("INVALID_ACTION_HANDLER", "onAction(capabilityId, apply) needs an id and a function.");
      }
      actionHandlers.set(capabilityId, apply);
      return () => {
        if (actionHandlers.get(capabilityId) === apply) actionHandlers.delete(capabilityId);
      };
    },
    /** Listens for verified actions (both modes): reload or re-render what changed. Returns the unsubscribe. */
    onRefresh(listener) {
      refreshListeners.add(listener);
      return () => refreshListeners.delete(listener);
    },
    /**
     * Confirms a previewed action (`reply.action` with status needs_confirmation).
     * A webhook capability comes back verified or failed; a client one is applied
     * by its onAction handler and reported. Resolves to the final action, whose
     * `message` is the agent's sentence ("A validade do equipamento foi alterada
     * para 30 dias.") — said only once the server verified the change.
     */
    confirmAction(action) {
      const run = pending.then(() => doConfirm(action));
      pending = run.catch(() => undefined);
      return run;
    },
    /** Forgets the accepted base snapshot: the next message carries the whole context. */
    resetBase() {
      lastAccepted = null;
    },
    /** Starts over: the next message creates a new session and carries the whole context. */
    resetSession() {
      sessionId = null;
      lastAccepted = null;
    },
    attach(root) {
      return attachDom(root);
    },
    detach() {
      if (dom) dom.detach();
      dom = null;
    },
    /** Re-reads the visibility of the declared elements (called on DOM mutations). */
    refresh() {
      if (dom) dom.refresh();
    },
  };

  // ---------------------------------------------------------------- network

  function headers() {
    const h = { "Content-Type": "application/json", Accept: "application/json" };
    if (options.token) h.Authorization = `Token ${options.token}`;
    if (options.csrfToken) h["X-CSRFToken"] = options.csrfToken;
    return h;
  }

  async function request(path, body) {
    const response = await fetchImpl(`${endpoint}${path}`, {
      method: "POST",
      headers: headers(),
      credentials: options.token ? "omit" : "same-origin",
      body: JSON.stringify(body),
    });
    learnClock(response);
    let data = null;
    const text = await response.text();
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = null;
      }
    }
    if (!response.ok) {
      const error = (data && data.error) || {};
      throw new ContextoError(
        error.code || `HTTP_${response.status}`,
        error.message || `The Contexto API answered ${response.status}.`,
        { details: error.details || {}, status: response.status },
      );
    }
    return data;
  }

  function learnClock(response) {
    const header = response.headers && typeof response.headers.get === "function" ? response.headers.get("Date") : null;
    const server = header ? Date.parse(header) : NaN;
    if (Number.isNaN(server)) return;
    const offset = server - now();
    clockOffsetMs = Math.abs(offset) > CLOCK_SKEW_TOLERANCE_MS ? offset : 0;
  }

  async function ensureSession(sendOptions) {
    if (sessionId) return sessionId;
    const body = minimize({ ...(options.sessionBody || {}), ...(sendOptions.sessionBody || {}) }) || {};
    const created = await request(SESSION_PATH, body);
    sessionId = created && (created.id ?? created.sessionId);
    if (!sessionId) throw new ContextoError("INVALID_RESPONSE", "The session response has no id.");
    return sessionId;
  }

  function messageBody(message, context, useDelta) {
    if (useDelta && lastAccepted) {
      // The server takes a delta in place of the context: {baseSnapshotId (a string), delta}.
      const delta = createMergePatch(lastAccepted.context, context);
      return { message, context: { baseSnapshotId: String(lastAccepted.id), delta } };
    }
    return { message, context };
  }

  async function doSend(message, sendOptions) {
    // Snapshot first: an oversized context is refused before any request.
    let context = api.snapshot();
    const offsetBefore = clockOffsetMs;
    const id = await ensureSession(sendOptions);
    if (clockOffsetMs !== offsetBefore) context = api.snapshot(); // the session answer fixed our clock
    const path = `${SESSION_PATH}/${encodeURIComponent(id)}/messages`;
    const useDelta = sendOptions.delta !== false && options.delta !== false;
    let reply;
    try {
      reply = await request(path, { ...(sendOptions.extra || {}), ...messageBody(message, context, useDelta) });
    } catch (err) {
      if (!(err instanceof ContextoError) || !RETRY_WITH_FULL_CONTEXT_CODES.includes(err.code)) throw err;
      lastAccepted = null;
      context = api.snapshot();
      reply = await request(path, { ...(sendOptions.extra || {}), ...messageBody(message, context, false) });
    }
    const snapshotId = reply && (reply.contextSnapshotId ?? reply.context_snapshot_id);
    if (snapshotId !== undefined && snapshotId !== null) lastAccepted = { id: snapshotId, context };
    if (reply && reply.action) reply.action = await settleAction(reply.action);
    return reply;
  }

  // ---------------------------------------------------------------- actions

  function actionPath(action, step) {
    return `/actions/${encodeURIComponent(action.id)}/${step}`;
  }

  async function doConfirm(action) {
    if (!action || !action.id || !action.preview || !action.preview.confirmationToken) {
      throw new ContextoError("INVALID_ACTION", "confirmAction() needs an action with a preview to confirm.");
    }
    if (action.execution === "client") handlerOf(action); // no handler: refuse before confirming anything
    const confirmed = await request(actionPath(action, "confirm"), { confirmationToken: action.preview.confirmationToken });
    return settleAction(confirmed);
  }

  function handlerOf(action) {
    const apply = actionHandlers.get(action.capability);
    if (!apply) {
      throw new ContextoError("NO_ACTION_HANDLER", `No onAction handler for ${action.capability}.`, {
        details: { capability: action.capability },
      });
    }
    return apply;
  }

  /** Runs a confirmed client action, and tells the refresh listeners about verified ones. */
  async function settleAction(action) {
    let result = action;
    if (action && action.status === "confirmed" && action.execution === "client") {
      result = await applyAndReport(action);
    }
    if (result && result.status === "verified") {
      for (const listener of Array.from(refreshListeners)) {
        try {
          await listener(result);
        } catch (err) {
          if (globalThis.console) console.error(err);
        }
      }
    }
    return result;
  }

  async function applyAndReport(action) {
    const apply = handlerOf(action);
    const parameters = action.parameters || {};
    const value = await apply({
      capability: action.capability,
      target: action.target,
      value: parameters.value,
      unit: parameters.unit ?? undefined,
      entity: action.entity || undefined,
      action,
    });
    // The context after the change: the target as the page now shows it (its declared
    // data-agent-value when captured from the DOM, else the handler's value). The server
    // compares both with what was asked; either one off and the change is not done.
    const shown = dom ? dom.valueOf(action.target) : undefined;
    const context = JSON.parse(JSON.stringify(api.snapshot()));
    const focus = context.focus && context.focus.semanticId === action.target
      ? context.focus
      : { semanticId: action.target, type: "field", label: (action.preview && action.preview.label) || undefined };
    context.focus = minimize({ ...focus, value: shown !== undefined ? shown : value });
    const reported = await request(actionPath(action, "report"), { value: value ?? null, context });
    if (reported && reported.contextSnapshotId !== undefined && reported.contextSnapshotId !== null) {
      lastAccepted = { id: reported.contextSnapshotId, context };
    }
    return reported;
  }

  // ------------------------------------------------------------ DOM capture

  let dom = null;

  function attachDom(root) {
    if (dom) dom.detach();
    const doc = root.ownerDocument || root;
    const view = doc.defaultView || globalThis;
    const intersecting = new Map(); // semanticId -> element
    let observer = null;
    let mutations = null;
    let scheduled = false;

    function elements() {
      return Array.from(root.querySelectorAll(AGENT_SELECTOR));
    }

    function onInteraction(event) {
      const target = event.target;
      if (!target || typeof target.closest !== "function") return;
      const el = target.closest(AGENT_SELECTOR);
      if (!el || (root !== doc && !root.contains(el))) return;
      const visibility = computeVisibility(el, { activeTabId: state.activeTabId });
      el.setAttribute("data-agent-visibility", visibility);
      if (visibility !== VISIBILITY.VISIBLE) return; // never the focus
      const described = describeElement(el);
      const focus = { ...described, parentIds: parentIdsOf(el, root) };
      const selection = selectionOf(el);
      if (selection) api.setSelection(selection);
      refreshVisibility();
      api.setFocus(focus);
    }

    function onKeydown(event) {
      // Keyboard activation (Enter/Space) of a declared element counts as a click;
      // Tab and arrow keys move the DOM focus, which arrives as focusin.
      if (event.key === "Enter" || event.key === " ") onInteraction(event);
    }

    function refreshVisibility() {
      const byId = new Map(); // the same id on several elements (rows): a visible copy wins
      for (const el of elements()) {
        const id = el.getAttribute("data-agent-id");
        const vis = computeVisibility(el, { activeTabId: state.activeTabId });
        if (el.getAttribute("data-agent-visibility") !== vis) el.setAttribute("data-agent-visibility", vis);
        const known = byId.get(id);
        if (!known || (known.visibility !== VISIBILITY.VISIBLE && vis === VISIBILITY.VISIBLE)) {
          const { semanticId, type, label } = describeElement(el);
          byId.set(id, { semanticId, type, label, visibility: vis });
        }
      }
      // Visible elements first (document order), then the others: trimming keeps the useful ones.
      const all = Array.from(byId.values());
      const ordered = all.filter((e) => e.visibility === VISIBILITY.VISIBLE).concat(all.filter((e) => e.visibility !== VISIBILITY.VISIBLE));
      api.setElements(ordered);
      if (observer) {
        for (const el of elements()) observer.observe(el);
        updateViewport();
      }
    }

    function updateViewport() {
      const visible = [];
      for (const [id, el] of intersecting) {
        if (!el.isConnected) {
          intersecting.delete(id);
          continue;
        }
        const vis = visibilityOf(id);
        if (vis && vis !== VISIBILITY.VISIBLE) continue; // hidden, collapsed, inactive or disabled
        const rect = el.getBoundingClientRect();
        visible.push({ id, top: rect.top, left: rect.left });
      }
      visible.sort((a, b) => a.top - b.top || a.left - b.left);
      const ids = visible.map((v) => v.id).slice(0, MAX_VISIBLE_IDS);
      const viewport = ids.length
        ? { ...(state.viewport || {}), visibleSemanticIds: ids, topVisibleElement: ids[0], bottomVisibleElement: ids[ids.length - 1] }
        : undefined;
      commit({ viewport: minimize(viewport) });
    }

    function schedule() {
      if (scheduled) return;
      scheduled = true;
      Promise.resolve().then(() => {
        scheduled = false;
        if (dom === handle) refreshVisibility();
      });
    }

    root.addEventListener("focusin", onInteraction, true);
    root.addEventListener("click", onInteraction, true);
    root.addEventListener("keydown", onKeydown, true);

    if (typeof IO === "function") {
      observer = new IO((entries) => {
        for (const entry of entries) {
          const id = entry.target.getAttribute("data-agent-id");
          if (!id) continue;
          if (entry.isIntersecting) intersecting.set(id, entry.target);
          else if (intersecting.get(id) === entry.target) intersecting.delete(id);
        }
        updateViewport();
      });
    }
    if (typeof view.MutationObserver === "function") {
      mutations = new view.MutationObserver(schedule);
      mutations.observe(root, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeFilter: ["hidden", "aria-hidden", "aria-expanded", "aria-disabled", "open", "disabled", "inert", "style", "class", "data-agent-id", "data-agent-tab"],
      });
    }

    const handle = {
      refresh: refreshVisibility,
      /** The opt-in data-agent-value of a declared element (what the page shows), or undefined. */
      valueOf(semanticId) {
        const el = root.querySelector(`[data-agent-id="${cssEscape(semanticId)}"][data-agent-value]`);
        return el ? el.getAttribute("data-agent-value") : undefined;
      },
      detach() {
        root.removeEventListener("focusin", onInteraction, true);
        root.removeEventListener("click", onInteraction, true);
        root.removeEventListener("keydown", onKeydown, true);
        if (observer) observer.disconnect();
        if (mutations) mutations.disconnect();
      },
    };
    dom = handle;
    refreshVisibility();
    return handle;
  }

  return api;
}
