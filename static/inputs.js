// Input-request cards on the queue, swapped in as the operators' websocket pushes them.
// console.js owns the socket and passes every message on as a "console:message" event.
"use strict";

document.addEventListener("console:message", (event) => {
  const message = event.detail;
  if (message.input_id === undefined || typeof message.input_html !== "string") return;
  const list = document.querySelector("[data-inputs]");
  const existing = document.querySelector(`[data-input-card="${message.input_id}"]`);
  if (!message.input_html) {
    existing?.remove();
    return;
  }
  const template = document.createElement("template");
  template.innerHTML = message.input_html.trim();
  const card = template.content.firstElementChild;
  // A card whose state did not change keeps what the operator is typing into it.
  if (existing && existing.dataset.status === card.dataset.status) return;
  if (existing) existing.replaceWith(card);
  else if (list) list.append(card);
});
