// The demo page: a work permit screen whose assistant is driven by contexto.js
// against the live API (session auth + CSRF). The page only declares its
// semantic elements (data-agent-*) and tells the store about tabs and records;
// contexto.js does the rest and sends nothing until the user asks something.
import { createAgentContext } from "../contexto/contexto.js";

const config = JSON.parse(document.getElementById("demo-config").textContent);
const $ = (selector, root = document) => root.querySelector(selector);
const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

const TABS = [
  { id: "general", title: "Geral" },
  { id: "components", title: "Componentes" },
  { id: "documents", title: "Documentos" },
];

let lastRequest = null;
const agent = createAgentContext({
  endpoint: config.endpoint,
  csrfToken: config.csrfToken,
  application: config.application,
  user: { locale: "pt-BR", timezone: Intl.DateTimeFormat().resolvedOptions().timeZone },
  // Wraps fetch only to show the visitor what left the page.
  fetch: (url, init) => {
    lastRequest = { url, body: init && init.body ? JSON.parse(init.body) : null };
    return window.fetch(url, init);
  },
});
window.contextoDemo = { agent };

const permit = config.permit;
agent.setRoute({ route: `/work-permits/${permit.id}`, routeName: "workPermit.details", params: { id: permit.id } });
agent.setPage({ id: "workPermit.details", type: "details", title: `Permissão de Trabalho ${permit.number}`, semanticId: "workPermit" });
agent.setTabs(TABS, "general");
agent.setSelection({ entityType: "workPermit", entityId: permit.id, displayName: permit.number });
agent.attach($("#workspace"));

// ------------------------------------------------------------------ tabs

function showTab(tabId, { focus = false } = {}) {
  for (const tab of $$('[role="tab"]')) {
    const active = tab.dataset.tab === tabId;
    tab.setAttribute("aria-selected", String(active));
    tab.tabIndex = active ? 0 : -1;
    if (active && focus) tab.focus();
  }
  for (const panel of $$('[role="tabpanel"]')) panel.hidden = panel.dataset.agentTab !== tabId;
  agent.setActiveTab(tabId);
}

for (const tab of $$('[role="tab"]')) {
  tab.addEventListener("click", () => showTab(tab.dataset.tab));
  tab.addEventListener("keydown", (event) => {
    const tabs = $$('[role="tab"]');
    const index = tabs.indexOf(tab);
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    const next = tabs[(moves[event.key] + tabs.length) % tabs.length];
    showTab(next.dataset.tab, { focus: true });
  });
}

// ------------------------------------------------------------- components

const validityInput = $("#field-validity");
const startInput = $("#field-start");

// Dates read dd/mm/aaaa everywhere on the page (the table, the field, the context sent): a
// native date input would follow the browser's locale and could show mm/dd/yyyy beside the table.
function isoToBr(iso) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(iso || ""));
  return match ? `${match[3]}/${match[2]}/${match[1]}` : "";
}
function toIso(value) {
  const text = String(value || "").trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return text;
  const match = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text);
  if (!match) return null;
  const [day, month, year] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

function selectComponent(row) {
  for (const other of $$("#components-table tbody tr")) other.setAttribute("aria-selected", String(other === row));
  $("#selected-name").textContent = `${row.dataset.name} ${row.dataset.tag}`;
  // The detail fields belong to the selected row: Validade's parents become … › Andaime › Detalhes.
  $("#component-details").setAttribute("data-agent-parent", row.getAttribute("data-agent-id"));
  validityInput.disabled = false;
  startInput.disabled = false;
  validityInput.value = row.dataset.validity;
  startInput.value = isoToBr(row.dataset.start);
  syncFieldValues();
  agent.setSelection({ entityType: "equipment", entityId: row.dataset.component, displayName: `${row.dataset.name} ${row.dataset.tag}` });
}

function syncFieldValues() {
  // The focused field's value is opt-in (data-agent-value); the server decides whether the prompt needs it.
  $("#wrap-validity").setAttribute("data-agent-value", validityInput.value ? `${validityInput.value} dias` : "");
  $("#wrap-start").setAttribute("data-agent-value", startInput.value || "");
  const focus = agent.getState().focus;
  const wrapper = focus && $(`[data-agent-id="${focus.semanticId}"][data-agent-value]`);
  if (wrapper && wrapper.contains(document.activeElement)) {
    agent.setFocus({ ...focus, value: wrapper.getAttribute("data-agent-value") || undefined });
  }
}

for (const row of $$("#components-table tbody tr")) {
  row.addEventListener("click", () => selectComponent(row));
  row.addEventListener("keydown", (event) => {
    const rows = $$("#components-table tbody tr");
    const index = rows.indexOf(row);
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      selectComponent(row);
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = rows[Math.min(rows.length - 1, Math.max(0, index + (event.key === "ArrowDown" ? 1 : -1)))];
      next.focus();
    }
  });
}

function applyToRow(row, field, value) {
  if (!row) return;
  if (field === "validity") {
    row.dataset.validity = String(value);
    $(".cell-validity", row).textContent = `${value} dias`;
  } else if (field === "startDate") {
    const iso = toIso(value);
    if (row.getAttribute("aria-selected") === "true") startInput.setCustomValidity(iso ? "" : "Use dd/mm/aaaa");
    if (!iso) return;
    row.dataset.start = iso;
    $(".cell-start", row).textContent = isoToBr(iso);
  }
  if (row.getAttribute("aria-selected") === "true") {
    validityInput.value = row.dataset.validity;
    startInput.value = isoToBr(row.dataset.start); // the field shows dd/mm/aaaa, as the table
    syncFieldValues();
  }
}

function applyToSelected(field, value) {
  applyToRow($('#components-table tbody tr[aria-selected="true"]'), field, value);
}

// The capabilities this page applies itself (client mode, actions/demo/capabilities.yaml):
// after the user confirms, Contexto calls the handler, which changes the record the action
// names and returns the value the page now holds; the server verifies it before the agent
// says it was changed.
function rowOf(entity) {
  return entity && document.getElementById(`row-${entity.entityId}`);
}
agent.onAction("workPermit.equipment.updateValidity", ({ value, entity }) => {
  const row = rowOf(entity);
  applyToRow(row, "validity", value);
  return row ? Number(row.dataset.validity) : undefined;
});
agent.onAction("workPermit.equipment.updateStartDate", ({ value, entity }) => {
  const row = rowOf(entity);
  applyToRow(row, "startDate", value);
  return row ? row.dataset.start : undefined;
});
agent.onRefresh((action) => {
  // Verified: mark the changed row so the user sees where the change landed.
  const row = rowOf(action.entity);
  if (row) row.classList.add("changed");
});

validityInput.addEventListener("change", () => applyToSelected("validity", validityInput.value));
startInput.addEventListener("change", () => applyToSelected("startDate", startInput.value));

// ------------------------------------------------------------------ badge

const badge = $("#context-badge");
function renderBadge(state) {
  const tab = TABS.find((t) => t.id === state.activeTabId);
  const parts = [
    `Aba: ${tab ? tab.title : "—"}`,
    `Foco: ${state.focus ? state.focus.label || state.focus.semanticId : "—"}`,
    `Registro: ${state.selection ? state.selection.displayName || state.selection.entityId : "—"}`,
    `v${state.contextVersion}`,
  ];
  badge.textContent = parts.join(" · ");
}
agent.subscribe(renderBadge);
renderBadge(agent.getState());

// ------------------------------------------------------------------- chat

const log = $("#chat-log");
const form = $("#chat-form");
const input = $("#chat-input");
const sendButton = $("#chat-send");
const errorBox = $("#chat-error");

// A tiny Markdown subset for replies (headings, paragraphs, "- " lists, "|" tables, **bold**,
// [[PACKAGE]]), built as DOM nodes: reply text never becomes HTML.
function appendInline(parent, text) {
  for (const part of text.split(/(\*\*[^*]+\*\*|\[\[[A-Z0-9_:]+\]\])/)) {
    if (!part) continue;
    if (part.startsWith("**") && part.endsWith("**")) {
      const strong = document.createElement("strong");
      strong.textContent = part.slice(2, -2);
      parent.appendChild(strong);
    } else if (part.startsWith("[[")) {
      const code = document.createElement("code");
      code.textContent = part.slice(2, -2);
      parent.appendChild(code);
    } else {
      parent.appendChild(document.createTextNode(part));
    }
  }
}

function renderText(parent, text) {
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split("\n").map((l) => l.trim()).filter(Boolean);
    if (!lines.length) continue;
    if (lines.length === 1 && /^#{1,6} /.test(lines[0])) {
      const heading = document.createElement("h4");
      heading.className = "reply-heading";
      appendInline(heading, lines[0].replace(/^#+\s*/, ""));
      parent.appendChild(heading);
    } else if (lines.length > 1 && lines.every((l) => l.startsWith("|"))) {
      const table = document.createElement("table");
      table.className = "reply-table";
      lines.forEach((line, index) => {
        if (/^[\s|:-]+$/.test(line)) return; // the header separator row
        const row = document.createElement("tr");
        for (const cell of line.replace(/^\||\|$/g, "").split("|")) {
          const el = document.createElement(index === 0 ? "th" : "td");
          appendInline(el, cell.trim());
          row.appendChild(el);
        }
        table.appendChild(row);
      });
      parent.appendChild(table);
    } else if (lines.every((l) => /^[-*] /.test(l))) {
      const list = document.createElement("ul");
      for (const line of lines) {
        const li = document.createElement("li");
        appendInline(li, line.slice(2));
        list.appendChild(li);
      }
      parent.appendChild(list);
    } else {
      const paragraph = document.createElement("p");
      appendInline(paragraph, lines.join(" "));
      parent.appendChild(paragraph);
    }
  }
}

function addMessage(kind, text, meta) {
  const item = document.createElement("li");
  item.className = `msg ${kind}`;
  if (kind === "user") item.textContent = text;
  else renderText(item, text);
  if (meta) {
    const small = document.createElement("span");
    small.className = "meta";
    small.textContent = meta;
    item.appendChild(small);
  }
  log.appendChild(item);
  scrollLogToEnd();
  return item;
}

// Called again once a reply's notes and buttons are in: they are the part the user must see.
function scrollLogToEnd() {
  log.scrollTop = log.scrollHeight;
}

function renderReply(reply, question) {
  const status = reply.status || "answered";
  const kind = status === "handoff" ? "handoff" : status === "clarification" ? "clarification" : "agent";
  let text = reply.reply || "";
  if (status === "handoff" && !text) text = "Vou encaminhar você para uma pessoa da equipe.";
  const packages = (reply.packages || []).map((p) => p.id).join(", ");
  const meta = [status, packages && `conhecimento: ${packages}`, reply.contextSnapshotId && `snapshot ${reply.contextSnapshotId}`]
    .filter(Boolean)
    .join(" · ");
  const item = addMessage(kind, text, meta);
  if (reply.recordChange && reply.recordChange.notice) {
    // The server says the selected record changed: nothing from the old one is reused.
    const note = document.createElement("span");
    note.className = "meta record-change";
    note.textContent = reply.recordChange.notice;
    item.appendChild(note);
  }
  const clarification = reply.clarification;
  // Options naming an element (the resolver's); a capability choice is answered in words.
  const options = clarification && Array.isArray(clarification.options) ? clarification.options.filter((o) => o.semanticId) : [];
  if (options.length) {
    const line = document.createElement("span");
    line.className = "proposal options";
    for (const option of options) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = option.label;
      button.dataset.semanticId = option.semanticId;
      // Choosing an option focuses that element (so it becomes the context) and asks again.
      button.addEventListener("click", () => {
        const target = document.querySelector(`[data-agent-id="${option.semanticId}"]`);
        const control = target && (target.querySelector("input, select, textarea, button") || target);
        if (control) control.focus();
        ask(question);
      });
      line.appendChild(button);
    }
    item.appendChild(line);
  }
  const messageId = reply.message_id ?? reply.messageId;
  if (status === "answered" && messageId && agent.sessionId) addThumbs(item, agent.sessionId, messageId);
  const action = reply.action;
  if (action && action.status === "needs_confirmation" && action.preview) {
    const line = document.createElement("span");
    line.className = "proposal";
    const preview = action.preview;
    line.append(`Proposta: ${preview.label} = ${preview.after} `);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "apply";
    button.textContent = "Aplicar";
    // The server decides: confirming the preview is a request of its own; the page applies
    // the change through its onAction handler and the server verifies it.
    button.addEventListener("click", () => confirmAction(action, button));
    line.appendChild(button);
    item.appendChild(line);
  }
  scrollLogToEnd();
}

// Thumbs up/down on an answer: POST .../messages/{id}/feedback. Rating again replaces the
// rating (the server keeps one per reply and user), so both buttons stay usable.
function addThumbs(item, sessionId, messageId) {
  const line = document.createElement("span");
  line.className = "feedback";
  const url = `${config.endpoint}/sessions/${sessionId}/messages/${messageId}/feedback`;
  for (const [rating, label, title] of [["up", "👍", "Resposta útil"], ["down", "👎", "Resposta não ajudou"]]) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `thumb thumb-${rating}`;
    button.textContent = label;
    button.title = title;
    button.setAttribute("aria-pressed", "false");
    button.addEventListener("click", async () => {
      const response = await window.fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": config.csrfToken },
        body: JSON.stringify({ rating }),
      });
      if (!response.ok) {
        showError("Não foi possível registrar a avaliação.");
        return;
      }
      for (const other of line.querySelectorAll("button")) other.setAttribute("aria-pressed", "false");
      button.setAttribute("aria-pressed", "true");
    });
    line.appendChild(button);
  }
  item.appendChild(line);
}

async function confirmAction(action, button) {
  showError("");
  button.disabled = true;
  button.textContent = "Aplicando…";
  try {
    const done = await agent.confirmAction(action);
    button.textContent = done.status === "verified" ? "Aplicado" : "Não aplicado";
    const text = done.message || (done.status === "verified" ? "Alteração concluída." : "A alteração não foi concluída.");
    addMessage(done.status === "verified" ? "agent action-result" : "handoff action-result", text, `ação ${done.status}`);
  } catch (error) {
    button.textContent = "Não aplicado";
    showError(`${error.code || "ERRO"}: ${error.message}`);
  } finally {
    $("#last-request").textContent = lastRequest ? `POST ${lastRequest.url}\n${JSON.stringify(lastRequest.body, null, 2)}` : "Nada enviado.";
  }
}

function showError(text) {
  errorBox.textContent = text;
  errorBox.hidden = !text;
}

async function ask(text) {
  showError("");
  addMessage("user", text);
  sendButton.disabled = true;
  try {
    let reply;
    try {
      reply = await agent.send(text);
    } catch (error) {
      // After a hand-off the session is no longer open: start a new conversation.
      if (error.code !== "SESSION_NOT_OPEN") throw error;
      agent.resetSession();
      addMessage("agent", "A conversa anterior foi encerrada; comecei uma nova.");
      reply = await agent.send(text);
    }
    renderReply(reply, text);
  } catch (error) {
    if (error.code === "CONTEXT_SIZE_LIMIT_EXCEEDED") {
      // No status: contexto.js refused it before any request; a status: the server (a lower limit) did.
      const where = error.status ? "O servidor recusou a mensagem." : "Nada foi enviado.";
      showError(`Contexto grande demais (${error.details.size} bytes; limite ${error.details.limit}). ${where}`);
    } else {
      showError(`${error.code || "ERRO"}: ${error.message}`);
    }
  } finally {
    sendButton.disabled = false;
    $("#last-request").textContent = lastRequest ? `POST ${lastRequest.url}\n${JSON.stringify(lastRequest.body, null, 2)}` : "Nada enviado.";
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  ask(text);
});

// Escape clears the semantic focus (nothing in particular is being looked at), wherever
// the DOM focus is (the body after a click on plain text), except while typing to the assistant.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || event.target.closest?.(".chat")) return;
  if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  agent.setFocus(null);
});

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});

document.documentElement.dataset.demoReady = "true";
