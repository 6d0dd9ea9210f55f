// The A2A inspector's page. Plain JavaScript, no build step, no dependencies.
// It talks only to its own backend (same origin, the X-A2A-Inspector header); the backend
// speaks A2A to the agent. Everything the agent sends is shown as text (never as HTML), and
// nothing is kept in storage or cookies.
"use strict";

const $ = (id) => document.getElementById(id);
const HEADERS = { "X-A2A-Inspector": "1", "Content-Type": "application/json" };
const FINAL = ["completed", "failed", "canceled", "rejected"];
const state = { following: null, version: "", card: null, taskId: "", contextId: "", selected: "", nextToken: "", wireAfter: 0,
                wire: new Map(), streaming: false };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function shortState(s) {
  return (s || "").replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
}

function status(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "muted";
}

async function api(path, options) {
  const response = await fetch(path, { headers: HEADERS, credentials: "omit", ...(options || {}) });
  const data = await response.json();
  if (!response.ok) {
    const err = data.error || {};
    throw new Error(`${err.type || response.status}: ${err.message || "failed"}`);
  }
  return data;
}

// A timeline: newline-delimited JSON entries, one per event, read as they arrive. One timeline
// is followed at a time: a new one (send, resubscribe) stops following the previous one (the
// agent's task goes on; only our stream ends).
async function streamApi(path, body, onEntry) {
  if (state.following) state.following.abort();
  const following = state.following = new AbortController();
  const response = await fetch(path, { method: "POST", headers: HEADERS, credentials: "omit",
                                       body: JSON.stringify(body || {}), signal: following.signal });
  if (!response.ok) {
    const data = await response.json();
    throw new Error(`${(data.error || {}).type}: ${(data.error || {}).message}`);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.trim()) onEntry(JSON.parse(line));
    }
  }
}

function partText(part) {
  if (part.text !== undefined) return part.text;
  if (part.data !== undefined) return JSON.stringify(part.data);
  if (part.raw !== undefined || part.url !== undefined) {
    return `[file ${part.filename || part.url || ""} ${part.mediaType || ""}]`.replace(/ +\]/, "]");
  }
  return "";
}
// Text parts run on (a streamed answer arrives in pieces); a file or data part gets its own line.
const partsText = (parts) => (parts || []).map((part, i) =>
  (i && part.text === undefined ? "\n" : "") + partText(part)).join("");

// ---- the card -------------------------------------------------------------------------
function renderCard(info) {
  const card = info.card;
  state.card = card;
  state.version = info.protocolVersion || "";
  $("agent-name").textContent = `${card.name} ${card.version ? "v" + card.version : ""}`;
  const chosen = info.chosen || {};
  $("negotiated").textContent =
    `speaking A2A ${info.protocolVersion} over ${chosen.protocolBinding} at ${chosen.url}`;
  const caps = card.capabilities || {};
  $("card").replaceChildren(...[
    el("p", {}, card.description || ""),
    el("div", {}, ...["streaming", "pushNotifications", "extendedAgentCard"].map((name) =>
      el("span", { class: "tag" }, `${name}: ${caps[name] ? "yes" : "no"}`))),
    card.provider ? el("p", { class: "muted" }, `by ${card.provider.organization || ""} ${card.provider.url || ""}`) : null,
    el("div", {}, "input ", (card.defaultInputModes || []).map((m) => el("span", { class: "tag" }, m)),
       " output ", (card.defaultOutputModes || []).map((m) => el("span", { class: "tag" }, m))),
    el("h3", {}, `Skills (${(card.skills || []).length})`),
    (card.skills || []).map((skill) => el("div", { class: "skill" }, el("b", {}, skill.name),
      el("span", { class: "muted" }, skill.description || ""),
      el("div", {}, (skill.tags || []).map((t) => el("span", { class: "tag" }, t))))),
    card.securitySchemes ? el("p", { class: "muted" }, "security: " + Object.keys(card.securitySchemes).join(", ")) : null,
    el("p", { class: "muted mono" }, `card: ${info.cardUrl || ""}`),
  ].flat().filter((node) => node !== null));
  $("interfaces").tBodies[0].replaceChildren(...(card.supportedInterfaces || []).map((i) => el("tr",
    { class: i.url === chosen.url && i.protocolBinding === chosen.protocolBinding
        && i.protocolVersion === chosen.protocolVersion ? "chosen" : "" },
    el("td", {}, i.protocolBinding), el("td", {}, i.protocolVersion), el("td", { class: "mono" }, i.url))));
  let raw = info.raw || "";
  try { raw = JSON.stringify(JSON.parse(raw), null, 2); } catch (e) { /* shown as it came */ }
  $("card-raw").textContent = raw;
  $("streaming").checked = !!caps.streaming;
  $("streaming").disabled = !caps.streaming;
}

// ---- chat -----------------------------------------------------------------------------
function addMessage(role, text, meta) {
  const node = el("div", { class: `msg ${role}` }, el("span", { class: "meta" }, meta || role), text);
  $("messages").append(node);
  $("messages").scrollTop = $("messages").scrollHeight;
  return node;
}

function setConversation(task) {
  if (task) {
    state.contextId = task.contextId || state.contextId;
    const s = shortState(task.status && task.status.state);
    // A task in a final state takes no more messages (spec §3.1.1): continue the context only.
    state.taskId = FINAL.includes(s) ? "" : task.id;
  }
  $("conversation").textContent = state.contextId
    ? `context ${state.contextId}` + (state.taskId ? ` · continuing task ${state.taskId}` : "")
    : "new conversation";
}

async function readParts() {
  const parts = [];
  const text = $("text").value;
  if (text) parts.push({ text });
  for (const file of $("files").files) {
    const raw = await new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
    parts.push({ raw, filename: file.name, mediaType: file.type || "application/octet-stream" });
  }
  const data = $("data").value.trim();
  if (data) parts.push({ data: JSON.parse(data) });
  return parts;
}

async function send(event) {
  event.preventDefault();
  let parts;
  try { parts = await readParts(); } catch (e) { status(`data part: ${e.message}`, true); return; }
  if (!parts.length) return;
  addMessage("user", partsText(parts), "you");
  $("text").value = ""; $("files").value = ""; $("data").value = "";
  const body = { parts, taskId: state.taskId, contextId: state.contextId, stream: $("streaming").checked };
  $("send").disabled = true;
  try {
    if (body.stream) {
      const reply = addMessage("agent", "", "agent (streaming)");
      clearTimeline();
      await streamApi("api/send", body, (entry) => onTimeline(entry, reply));
    } else {
      const result = await api("api/send", { method: "POST", body: JSON.stringify(body) });
      if (result.message) {
        addMessage("agent", partsText(result.message.parts), "agent (message)");
      } else {
        const task = result.task;
        showTask(task);
        addMessage("agent", taskText(task), `agent · task ${shortState(task.status.state)}`);
        setConversation(task);
      }
    }
    status("");
  } catch (e) {
    if (e.name !== "AbortError") addMessage("error", e.message, "error");
  } finally {
    $("send").disabled = false;
    refreshTasks();
  }
}

function taskText(task) {
  const artifacts = (task.artifacts || []).map((a) => partsText(a.parts)).join("\n");
  const message = task.status && task.status.message ? partsText(task.status.message.parts) : "";
  return [artifacts, message].filter(Boolean).join("\n") || "(no text)";
}

// ---- the task and its timeline ----------------------------------------------------------
function clearTimeline() { $("timeline").replaceChildren(); }

function selectTask(id) {
  state.selected = id;
  $("task-id").textContent = id;
  for (const b of ["resubscribe", "cancel", "refresh-task"]) $(b).disabled = !id;
  loadPush(id);
}

function showTask(task) {
  if (task.id !== state.selected) { selectTask(task.id); }
  const s = shortState(task.status && task.status.state);
  $("task-state").textContent = s;
  $("task-state").className = `state ${s}`;
}

function summary(entry) {
  const e = entry.event;
  switch (entry.kind) {
    case "task": return `${shortState(e.status.state)} ${taskText(e) === "(no text)" ? "" : taskText(e)}`;
    case "message": return partsText(e.parts);
    case "status": return `${shortState(e.status.state)}${e.status.message ? " " + partsText(e.status.message.parts) : ""}`;
    case "artifact": return `${e.artifact.name || e.artifact.artifactId}${e.append ? " +" : ""}${e.lastChunk ? " (last)" : ""}: ${partsText(e.artifact.parts)}`;
    default: return "";
  }
}

function onTimeline(entry, reply) {
  let item;
  if (entry.kind === "reconnect") {
    item = el("li", { class: "reconnect" }, el("span", { class: "seq" }, "↻"),
      `reconnected: SubscribeToTask ${entry.taskId} with Last-Event-ID ${entry.lastEventId || "(none)"}`);
  } else if (entry.kind === "error") {
    item = el("li", { class: "error" }, el("span", { class: "kind" }, "error"), `${entry.error.type}: ${entry.error.message}`);
  } else if (entry.kind === "end") {
    item = el("li", { class: "muted" }, "— stream ended —");
  } else {
    const e = entry.event;
    item = el("li", { class: entry.kind }, el("span", { class: "seq", title: entry.seq ? "SSE id: the task's sequence number" : "the agent sent no SSE id" }, entry.seq ? `#${entry.seq}` : "·"),
      el("span", { class: "kind" }, entry.kind), summary(entry));
    if (entry.kind === "task") { showTask(e); setConversation(e); }
    if (entry.kind === "status") {
      showTask({ id: e.taskId, status: e.status });
      setConversation({ id: e.taskId, contextId: e.contextId, status: e.status });
    }
    if (reply) {
      if (entry.kind === "message") reply.lastChild.textContent = partsText(e.parts);
      if (entry.kind === "artifact") {
        const text = partsText(e.artifact.parts);
        reply.lastChild.textContent = e.append ? reply.lastChild.textContent + text : text;
      }
      if (entry.kind === "status" && e.status.message && !reply.lastChild.textContent) {
        reply.lastChild.textContent = partsText(e.status.message.parts);
      }
      reply.firstChild.textContent = `agent · ${$("task-state").textContent || entry.kind}`;
    }
  }
  $("timeline").append(item);
  $("timeline").scrollTop = $("timeline").scrollHeight;
}

async function resubscribe() {
  clearTimeline();
  try { await streamApi(`api/tasks/${encodeURIComponent(state.selected)}/subscribe`, {}, (entry) => onTimeline(entry, null)); }
  catch (e) { if (e.name !== "AbortError") status(e.message, true); }
}

async function cancel() {
  try { showTask(await api(`api/tasks/${encodeURIComponent(state.selected)}/cancel`, { method: "POST" })); status("canceled"); }
  catch (e) { status(e.message, true); }
  refreshTasks();
}

async function refreshTask() {
  try {
    const task = await api(`api/tasks/${encodeURIComponent(state.selected)}`);
    showTask(task);
    clearTimeline();
    onTimeline({ kind: "task", seq: "", event: task }, null);
  } catch (e) { status(e.message, true); }
}

async function loadPush(id) {
  const list = $("push-configs");
  if (!id || !(state.card && (state.card.capabilities || {}).pushNotifications)) {
    list.replaceChildren(el("li", {}, "push notifications not supported"));
    return;
  }
  try {
    const { configs } = await api(`api/tasks/${encodeURIComponent(id)}/push`);
    list.replaceChildren(...(configs.length ? configs.map((c) => el("li", { class: "mono" }, `${c.id}: ${c.url}`))
      : [el("li", {}, "none")]));
  } catch (e) { list.replaceChildren(el("li", { class: "error" }, e.message)); }
}

// ---- the task list -------------------------------------------------------------------------
async function refreshTasks(token) {
  const query = new URLSearchParams();
  if ($("filter-state").value) query.set("status", $("filter-state").value);
  if ($("filter-context").value) query.set("contextId", $("filter-context").value);
  query.set("pageSize", $("page-size").value || "10");
  if (token) query.set("pageToken", token);
  try {
    const page = await api(`api/tasks?${query}`);
    state.nextToken = page.nextPageToken || "";
    $("next-page").disabled = !state.nextToken;
    $("tasks-total").textContent = `${page.totalSize ?? (page.tasks || []).length} task(s)` + (token ? " · later page" : "");
    $("tasks").tBodies[0].replaceChildren(...(page.tasks || []).map((task) => el("tr",
      { onclick: () => { selectTask(task.id); showTask(task); refreshTask(); } },
      el("td", { class: "id" }, task.id),
      el("td", { class: `state ${shortState(task.status.state)}` }, shortState(task.status.state)),
      el("td", {}, (task.status.timestamp || "").replace("T", " ").slice(0, 19)),
      el("td", {}, taskText(task).slice(0, 120)))));
  } catch (e) {
    // A2A 0.3 has no ListTasks (tasks/list came in 1.0): say so beside the agent's answer.
    const v03 = state.version.startsWith("0.") ? "A2A 0.3 has no ListTasks. " : "";
    $("tasks-total").textContent = v03 + e.message;
  }
}

// ---- the wire --------------------------------------------------------------------------
function pretty(text, headers) {
  const type = (headers.find(([k]) => k.toLowerCase() === "content-type") || [, ""])[1];
  if (type.includes("json")) { try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* as is */ } }
  return text;
}

// The operation of a JSON-RPC request (its method); HTTP+JSON names it in the URL already.
function rpcMethod(x) {
  try { return JSON.parse(x.requestBody).method || ""; } catch (e) { return ""; }
}

function renderExchange(x) {
  const ok = x.status && x.status < 400;
  const open = state.wire.get(x.id);
  const node = el("li", { id: `x${x.id}` }, el("details", open && open.open ? { open: "" } : {},
    el("summary", {}, `#${x.id} ${x.method} ${x.url} `, el("b", {}, rpcMethod(x)), " ",
      el("span", { class: ok ? "status-ok" : "status-bad" }, x.status ?? (x.error ? "error" : "…")),
      x.done ? ` ${Math.round(x.elapsedMs || 0)} ms` : " (open)"),
    el("pre", {}, [`${x.method} ${x.url}`, ...x.requestHeaders.map(([k, v]) => `${k}: ${v}`)].join("\n")
      + (x.requestBody ? "\n\n" + pretty(x.requestBody, x.requestHeaders) : "")),
    el("pre", {}, [`HTTP ${x.status ?? ""}`, ...x.responseHeaders.map(([k, v]) => `${k}: ${v}`)].join("\n")
      + (x.responseBody ? "\n\n" + pretty(x.responseBody, x.responseHeaders) : "")
      + (x.truncated ? "\n[truncated]" : "") + (x.error ? `\n[${x.error}]` : ""))));
  const old = $(`x${x.id}`);
  if (old) old.replaceWith(node); else $("wire").append(node);
  state.wire.set(x.id, node.firstChild);
}

async function pollWire() {
  setTimeout(pollWire, 1000);
  let exchanges;
  try { ({ exchanges } = await api(`api/wire?after=${state.wireAfter}`)); }
  catch (e) { return; /* the backend is gone: the next action says so */ }
  for (const x of exchanges) {
    renderExchange(x);
    if (x.done) state.wireAfter = Math.max(state.wireAfter, x.id);
  }
}

// ---- start -----------------------------------------------------------------------------
async function start() {
  $("chat-form").addEventListener("submit", send);
  $("new-conversation").addEventListener("click", () => { state.taskId = ""; state.contextId = ""; setConversation(null); $("messages").replaceChildren(); });
  $("resubscribe").addEventListener("click", resubscribe);
  $("cancel").addEventListener("click", cancel);
  $("refresh-task").addEventListener("click", refreshTask);
  $("tasks-form").addEventListener("submit", (e) => { e.preventDefault(); refreshTasks(); });
  $("next-page").addEventListener("click", () => refreshTasks(state.nextToken));
  $("clear-wire").addEventListener("click", async () => { await api("api/wire/clear", { method: "POST" }); $("wire").replaceChildren(); state.wire.clear(); });
  $("text").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("chat-form").requestSubmit(); } });
  pollWire();
  try {
    renderCard(await api("api/card"));
    status("ready");
  } catch (e) {
    $("agent-name").textContent = "not connected";
    status(e.message, true);
    return;
  }
  refreshTasks();
}

start();
