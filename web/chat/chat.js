// poot serve's chat page: a conversation over /v1/chat/completions with
// streamed replies (server-sent events read from fetch), a stop button,
// sampling settings and a JSON schema. Plain JavaScript, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const conversation = []; // {role, content} sent with each request
let controller = null;   // the running request's AbortController

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

function setStatus(text) { $("status").textContent = text; }

function addMessage(role, text) {
  const div = document.createElement("div");
  div.className = "msg " + role;
  const body = document.createElement("div");
  body.className = "content";
  body.textContent = text;
  div.appendChild(body);
  $("messages").appendChild(div);
  $("messages").scrollTop = $("messages").scrollHeight;
  return div;
}

function part(div, cls) {
  let el = div.querySelector("." + cls);
  if (!el) {
    el = document.createElement("div");
    el.className = cls;
    div.insertBefore(el, cls === "reasoning" ? div.firstChild : null);
  }
  return el;
}

// The request body from the settings.
function requestBody() {
  const body = { messages: [], stream: true };
  const system = $("system").value.trim();
  if (system) body.messages.push({ role: "system", content: system });
  body.messages.push(...conversation);
  const num = (id) => $(id).value.trim() === "" ? null : Number($(id).value);
  if (num("temperature") !== null) body.temperature = num("temperature");
  if (num("top-p") !== null) body.top_p = num("top-p");
  if (num("max-tokens") !== null) body.max_tokens = num("max-tokens");
  if (num("seed") !== null) body.seed = num("seed");
  const schema = $("schema").value.trim();
  if (schema) {
    body.response_format = { type: "json_schema",
                             json_schema: { name: "reply", schema: JSON.parse(schema), strict: true } };
  }
  return body;
}

// Reads server-sent events from the response, calling onEvent with each JSON payload.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data === "[DONE]") return;
        onEvent(JSON.parse(data));
      }
    }
  }
}

async function send(text) {
  conversation.push({ role: "user", content: text });
  addMessage("user", text);
  const div = addMessage("assistant", "");
  const content = div.querySelector(".content");
  let reply = "";
  let body;
  try {
    body = requestBody();
  } catch (e) {
    div.className = "msg error";
    content.textContent = "the JSON schema is not JSON: " + e.message;
    conversation.pop();
    return;
  }
  controller = new AbortController();
  $("send").disabled = true;
  $("stop").disabled = false;
  setStatus("generating…");
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST", headers: headers(), body: JSON.stringify(body), signal: controller.signal });
    if (!response.ok) {
      const err = await response.json().catch(() => ({}));
      throw new Error((err.error && err.error.message) || response.statusText);
    }
    await readEvents(response, (chunk) => {
      if (chunk.error) throw new Error(chunk.error.message);
      const choice = chunk.choices && chunk.choices[0];
      if (!choice) return;
      const d = choice.delta || {};
      if (d.reasoning_content) part(div, "reasoning").textContent += d.reasoning_content;
      if (d.content) {
        reply += d.content;
        content.textContent = reply;
      }
      for (const call of d.tool_calls || [])
        part(div, "tool").textContent += call.function.name + "(" + call.function.arguments + ")\n";
      if (choice.finish_reason) setStatus("finished: " + choice.finish_reason);
      $("messages").scrollTop = $("messages").scrollHeight;
    });
    conversation.push({ role: "assistant", content: reply });
  } catch (e) {
    if (e.name === "AbortError") {
      div.classList.add("stopped");
      conversation.push({ role: "assistant", content: reply });
      setStatus("stopped");
    } else {
      div.className = "msg error";
      content.textContent = reply + (reply ? "\n" : "") + "error: " + e.message;
      conversation.pop();
      setStatus("error");
    }
  } finally {
    controller = null;
    $("send").disabled = false;
    $("stop").disabled = true;
  }
}

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("input").value.trim();
  if (!text || controller) return;
  $("input").value = "";
  send(text);
});
$("input").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    $("composer").requestSubmit();
  }
});
$("stop").addEventListener("click", () => { if (controller) controller.abort(); });
$("clear").addEventListener("click", () => {
  if (controller) controller.abort();
  conversation.length = 0;
  $("messages").textContent = "";
  setStatus("");
});
$("api-key").value = localStorage.getItem("poot-api-key") || "";
$("api-key").addEventListener("change", () => {
  localStorage.setItem("poot-api-key", $("api-key").value);
  loadModel();
});

async function loadModel() {
  try {
    const r = await fetch("/v1/models", { headers: headers() });
    const j = await r.json();
    $("model-name").textContent = r.ok ? j.data[0].id : "(" + j.error.message + ")";
    if (r.ok) $("max-tokens").max = j.data[0].max_model_len;
  } catch (e) {
    $("model-name").textContent = "(the server does not answer)";
  }
}
loadModel();
