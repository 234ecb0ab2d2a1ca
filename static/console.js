// Progressive enhancement only: every page works without it.
"use strict";

// Controls that only this script makes work show from here on (console.css hides them otherwise).
document.documentElement.classList.add("scripted");

document.addEventListener("DOMContentLoaded", () => {
  // The server form shows only the fields of the chosen transport.
  const radios = document.querySelectorAll('input[name="transport"]');
  const showTransport = () => {
    const chosen = document.querySelector('input[name="transport"]:checked');
    document.querySelectorAll("[data-transport]").forEach((el) => {
      el.hidden = chosen !== null && el.dataset.transport !== chosen.value;
    });
  };
  radios.forEach((radio) => radio.addEventListener("change", showTransport));
  if (radios.length) showTransport();

  // "No prefix" and a typed prefix exclude each other.
  const noPrefix = document.querySelector('input[name="no_prefix"]');
  const prefix = document.querySelector('input[name="tool_prefix"]');
  if (noPrefix && prefix) {
    const sync = () => {
      prefix.disabled = noPrefix.checked;
      if (noPrefix.checked) prefix.value = "";
    };
    noPrefix.addEventListener("change", sync);
    sync();
  }
});

// Copy buttons: each names the element whose text it copies. Hidden until this script runs.
document.addEventListener("DOMContentLoaded", () => {
  const copied = (button, label) => {
    const before = button.textContent;
    button.textContent = label;
    setTimeout(() => { button.textContent = before; }, 1500);
  };
  // navigator.clipboard exists only in secure contexts (https, localhost): elsewhere select the text instead.
  const selectText = (source) => {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  };
  document.querySelectorAll("button[data-copy]").forEach((button) => {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    button.hidden = false;
    button.addEventListener("click", () => {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(source.textContent).then(
          () => copied(button, "Copied"),
          () => { selectText(source); copied(button, "Selected: copy it"); },
        );
      } else {
        selectText(source);
        copied(button, "Selected: copy it");
      }
    });
  });
});

// The operators' live pages: one websocket per page; the server pushes rendered
// fragments and this swaps them in. A reload shows the same state without it.
(() => {
  const STORE = { notify: "console.notify", sound: "console.sound" };
  const titleBase = document.title.replace(/^\(\d+\) /, "");

  const fragment = (html) => {
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    return template.content.firstElementChild;
  };

  const showCount = (count) => {
    document.title = count > 0 ? `(${count}) ${titleBase}` : titleBase;
    document.querySelectorAll("[data-pending-count]").forEach((badge) => {
      badge.textContent = String(count);
      badge.classList.toggle("warn", count > 0);
    });
  };

  const showReviewCount = (count) => {
    document.querySelectorAll("[data-review-count]").forEach((badge) => {
      badge.textContent = String(count);
      badge.classList.toggle("warn", count > 0);
    });
  };

  // Typed notes survive a region swapped in from a fresh copy of the page.
  const swapKeepingInput = (here, there) => {
    const typed = [...here.querySelectorAll("input[type=text], textarea")].filter((el) => el.value);
    here.innerHTML = there.innerHTML;
    typed.forEach((el) => {
      const form = el.form?.getAttribute("action");
      const twin = [...here.querySelectorAll(`[name="${el.name}"]`)].find((t) => t.form?.getAttribute("action") === form);
      if (twin) twin.value = el.value;
    });
  };

  const syncEmpty = () => {
    const pairs = [["[data-queue]", "[data-queue-empty]"], ["[data-recent]", "[data-recent-empty]"]];
    pairs.forEach(([list, note]) => {
      const container = document.querySelector(list);
      const empty = document.querySelector(note);
      if (container && empty) empty.hidden = container.querySelector("[data-call-row]") !== null;
    });
  };

  // The queue: compact rows, and a pane that holds the selected call's detail, moved out of its row
  // (and back when another is selected), so that a pushed row and a reloaded one stay one template.
  const pane = () => document.querySelector("[data-queue-pane]");
  const queueRow = (id) => document.querySelector(`[data-queue] [data-call-row="${id}"]`);
  const detailOf = (id) => document.querySelector(`[data-call-detail="${id}"]`);
  const pendingRows = () => [...document.querySelectorAll('[data-queue] [data-call-row][data-status="pending"]')];
  const selectedRow = () => document.querySelector("[data-queue] [data-call-row].selected");

  // A key that acts on a call not marked read-only by a trusted server is pressed twice: the first arms it.
  let armed = null;
  const disarm = () => {
    armed = null;
    document.querySelectorAll("[data-armed]").forEach((el) => el.remove());
  };

  const park = () => {
    const shown = pane()?.querySelector("[data-pane-body] [data-call-detail]");
    if (!shown) return;
    const owner = queueRow(shown.dataset.callDetail);
    if (owner) owner.append(shown);
    else shown.remove();
  };

  const choose = (row, { scroll = true } = {}) => {
    const holder = pane();
    if (!holder) return;
    disarm();
    document.querySelectorAll("[data-queue] [data-call-row].selected").forEach((el) => {
      el.classList.remove("selected");
      el.removeAttribute("aria-current");
    });
    park();
    holder.querySelector("[data-pane-empty]").hidden = Boolean(row);
    if (!row) return;
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    const detail = row.querySelector("[data-call-detail]");
    if (detail) holder.querySelector("[data-pane-body]").append(detail);
    if (scroll) row.scrollIntoView({ block: "nearest" });
  };

  // The call after this one, or before it when it is the last: where the selection goes once it is decided.
  const neighbour = (row) => {
    const rows = pendingRows();
    const at = rows.indexOf(row);
    return rows[at + 1] || rows[at - 1] || null;
  };

  const logLeft = (text) => {
    const log = document.querySelector("[data-queue-log]");
    if (!log) return;
    const item = document.createElement("li");
    item.textContent = text;
    log.prepend(item);
    while (log.children.length > 5) log.lastElementChild.remove();
    log.closest("[data-queue-log-box]").hidden = false;
  };

  // A decided or ended call leaves the queue at once; the log says how it ended.
  const dropRow = (id, text) => {
    const row = queueRow(id);
    if (!row) return;
    const next = row.classList.contains("selected") ? neighbour(row) : undefined;
    const detail = detailOf(id);
    if (detail && !row.contains(detail)) detail.remove();
    const group = row.closest("[data-group]");
    row.remove();
    if (group && !group.querySelector("[data-call-row]")) group.remove();
    if (next !== undefined) choose(next);
    if (text) logLeft(text);
    syncEmpty();
  };

  // A pushed row must not eat a reason the operator is typing, nor the selection and the ticks.
  const replaceRow = (old, html) => {
    const row = fragment(html);
    const id = old.dataset.callRow;
    const inQueue = old.closest("[data-queue]") !== null;
    if (inQueue && row.dataset.status !== "pending") {
      dropRow(id, "");
      return null;
    }
    const before = detailOf(id) || old;
    const typing = before.querySelector('input[name="reason"]');
    const kept = row.querySelector('input[name="reason"]');
    if (typing && kept && typing.value) kept.value = typing.value;
    const focused = before.contains(document.activeElement) && document.activeElement.name;
    const selected = old.classList.contains("selected");
    const ticked = old.querySelector("[data-select-call]")?.checked;
    if (before !== old && !old.contains(before)) before.remove();
    old.replaceWith(row);
    if (ticked) row.querySelector("[data-select-call]").checked = true;
    if (selected) choose(row, { scroll: false });
    if (focused) (detailOf(id) || row).querySelector(`[name="${focused}"]`)?.focus();
    showNotice(holderOf(id), id);
    return row;
  };

  const groupOf = (key) => document.querySelector(`[data-queue] [data-group="${CSS.escape(key)}"]`);

  const showGroupCount = ({ group, group_count: count }) => {
    const section = typeof group === "string" ? groupOf(group) : null;
    section?.querySelectorAll("[data-group-count]").forEach((el) => { el.textContent = String(count); });
  };

  // Sorted by time left, a new call takes its place among its group's; by arrival, it is the newest.
  const insertRow = (rows, row) => {
    const queue = document.querySelector("[data-queue]");
    const key = (el) => Date.parse(el.dataset.expires) || 0;
    const later = queue.dataset.sort === "expiry" ? [...rows.children].find((el) => key(el) > key(row)) : null;
    rows.insertBefore(row, later || null);
  };

  // A page shows some groups and some of their calls: a new call joins its group where the group's
  // newest calls are on this page, opens a new group on the last page, and is only counted elsewhere.
  let elsewhere = 0;
  const placePending = (message) => {
    const queue = document.querySelector("[data-queue]");
    if (!queue || queue.querySelector(`[data-call-row="${message.call_id}"]`)) return;
    const arriving = fragment(message.html);
    const section = groupOf(message.group);
    if (section && section.dataset.groupEnds === "true") {
      insertRow(section.querySelector("[data-group-rows]"), arriving.querySelector("[data-call-row]"));
    } else if (!section && queue.dataset.lastPage === "true") {
      queue.append(arriving);
    } else {
      elsewhere += 1;
      const note = document.querySelector("[data-queue-elsewhere]");
      if (note) {
        note.hidden = false;
        note.textContent = `${elsewhere} new call${elsewhere === 1 ? "" : "s"} arrived for other pages.`;
      }
    }
    showGroupCount(message);
    syncEmpty();
  };

  const placeCall = (message) => {
    const { call_id: id, html, event } = message;
    if (typeof message.group_count === "number") showGroupCount(message);
    if (typeof message.outcome === "string") {
      dropRow(id, `Call ${id} (${message.tool}): ${message.outcome}`);
      return;
    }
    if (html === undefined || html === null) return;
    if (event === "call.pending" && typeof message.group === "string") {
      placePending(message);
      return;
    }
    const recent = document.querySelector("[data-recent]");
    const body = document.querySelector(`[data-call-body="${id}"]`);
    const existing = document.querySelector(`[data-call-row="${id}"]`);
    if (body) {
      body.innerHTML = html;
      showNotice(holderOf(id), String(id));
    } else if (existing && html === "") {
      existing.remove();
    } else if (existing) {
      replaceRow(existing, html);
    } else if (recent && html) {
      recent.prepend(fragment(html));
    }
    syncEmpty();
  };

  const showServer = (message) => {
    document.querySelectorAll(`[data-server-health="${message.server_id}"]`).forEach((el) => {
      el.replaceWith(fragment(message.html));
    });
  };

  // The call page shows the upstream's progress as it comes; nothing keeps it, so a reload waits for the next.
  const showProgress = ({ call_id: id, progress, total, message }) => {
    const box = document.querySelector(`[data-call-body="${id}"] [data-progress]`);
    if (!box) return;
    box.hidden = false;
    const bar = box.querySelector("progress");
    if (typeof total === "number" && total > 0) {
      bar.max = total;
      bar.value = Math.min(progress, total);
    } else {
      bar.removeAttribute("value");
    }
    const words = box.querySelector("[data-progress-text]");
    // An upstream task's status comes as a message alone.
    const count = typeof progress !== "number" ? "" : typeof total === "number" ? `${progress} of ${total}` : `${progress}`;
    words.textContent = [message, count].filter(Boolean).join(" · ");
  };

  let audio = null;
  const beep = () => {
    if (!audio || localStorage.getItem(STORE.sound) !== "1") return;
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 880;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.35);
  };

  const announce = (message) => {
    beep();
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    if (localStorage.getItem(STORE.notify) !== "1" || document.hasFocus()) return;
    const row = message.html ? fragment(message.html) : null;
    const tool = row?.querySelector(".call-tool")?.textContent.trim() || "A tool call";
    const note = new Notification("A call waits for approval", { body: tool, tag: `call-${message.call_id}` });
    note.onclick = () => { window.focus(); location.assign(`/calls/${message.call_id}/`); };
  };

  // Back from an outage: the page reads itself again for what it missed, keeping the selection and what was typed.
  const resync = async () => {
    const regions = ["[data-queue]", "[data-inputs]", "[data-recent]", "[data-call-body]", "[data-review-list]"];
    const response = await fetch(location.href, { credentials: "same-origin" });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const chosen = selectedRow()?.dataset.callRow;
    const reason = chosen ? detailOf(chosen)?.querySelector('input[name="reason"]')?.value : "";
    pane()?.querySelector("[data-pane-body]")?.replaceChildren();
    regions.forEach((selector) => {
      const here = document.querySelector(selector);
      const there = page.querySelector(selector);
      if (here && there) swapKeepingInput(here, there);
      if (here && there && here.dataset.lastPage) here.dataset.lastPage = there.dataset.lastPage;
    });
    if (pane()) {
      const again = chosen ? queueRow(chosen) : null;
      choose(again, { scroll: false });
      const field = again ? detailOf(chosen)?.querySelector('input[name="reason"]') : null;
      if (field && reason) field.value = reason;
    }
    const count = page.querySelector("[data-pending-count]");
    if (count) showCount(Number(count.textContent));
    const reviewing = page.querySelector("[data-review-count]");
    if (reviewing) showReviewCount(Number(reviewing.textContent));
    syncEmpty();
  };

  // Always in sight: whether what the page shows is live, or stale while the socket is away.
  const LIVE_WORDS = {
    connecting: "Connecting…",
    connected: "Live",
    reconnecting: "Connection lost: reconnecting… What you see may be out of date.",
  };
  const showLive = (state) => {
    document.body.dataset.live = state;
    let badge = document.querySelector("[data-live-status]");
    if (!badge) {
      badge = document.createElement("div");
      badge.className = "live-status";
      badge.dataset.liveStatus = "";
      badge.setAttribute("role", "status");
      document.body.append(badge);
    }
    badge.dataset.state = state;
    badge.textContent = LIVE_WORDS[state];
  };

  let socket = null;
  let retry = null;
  let attempts = 0;
  const connect = (path) => {
    clearTimeout(retry);
    retry = null;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const opened = new WebSocket(scheme + location.host + path);
    socket = opened;
    opened.addEventListener("open", () => {
      if (socket !== opened) return;
      showLive("connected");
      if (attempts > 0) resync();
      attempts = 0;
    });
    opened.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (typeof message.pending_count === "number") showCount(message.pending_count);
      if (typeof message.review_count === "number") showReviewCount(message.review_count);
      // The list of tools to review is read afresh whenever a catalog changes.
      if (message.event === "catalog.review" && document.querySelector("[data-review-list]")) resync();
      if (message.event === "server.status") showServer(message);
      else if (message.event === "call.progress") showProgress(message);
      else placeCall(message);
      if (message.event === "call.pending") announce(message);
      // Other scripts (inputs.js) take what is theirs from here.
      document.dispatchEvent(new CustomEvent("console:message", { detail: message }));
    });
    opened.addEventListener("close", (event) => {
      if (socket !== opened) return;
      // The console closed it because this user may no longer watch calls (signed out, role removed).
      if (event.code === 4403) {
        location.reload();
        return;
      }
      showLive("reconnecting");
      attempts += 1;
      retry = setTimeout(() => connect(path), Math.min(4000, 250 * 2 ** Math.min(attempts, 6)));
    });
  };

  // Decisions go by fetch; the websocket brings the row's new state. What went wrong (someone
  // decided first, a reason is missing) stays shown in the row. Without this they are ordinary posts.
  const notices = new Map();
  const showNotice = (holder, id) => {
    const notice = notices.get(id);
    if (!holder || !notice) return;
    holder.querySelector(".notice")?.remove();
    const note = document.createElement("div");
    note.className = `message notice ${notice.level}`;
    note.setAttribute("role", "status");
    note.textContent = notice.message;
    const head = holder.querySelector(".call-head, .pagehead");
    if (head) head.after(note);
    else holder.prepend(note);
  };
  const holderOf = (id) => detailOf(id) || document.querySelector(`[data-call-row="${id}"]`);

  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form[data-decide], form[data-claim]");
    if (!form) return;
    event.preventDefault();
    const buttons = (form.closest(".decide") || form).querySelectorAll("button");
    buttons.forEach((button) => { button.disabled = true; });
    let answer;
    try {
      const response = await fetch(form.action, {
        method: "POST", body: new FormData(form), credentials: "same-origin", headers: { Accept: "application/json" },
      });
      answer = await response.json();
    } catch (error) {
      form.submit();
      return;
    }
    const id = String(answer.call_id);
    const row = queueRow(id);
    if (row && answer.status !== "pending") {
      dropRow(id, `Call ${id}: ${answer.message}`);
      return;
    }
    if (answer.level !== "success") {
      notices.set(id, answer);
      showNotice(holderOf(id), id);
    } else if (row && form.matches("[data-decide]")) {
      // One approval of several: the call waits for others, and this operator moves on.
      const next = neighbour(row);
      if (next) choose(next);
    }
    buttons.forEach((button) => { button.disabled = false; });
  });

  const clock = (seconds) => {
    const s = Math.max(0, Math.round(seconds));
    const minutes = Math.floor(s / 60);
    const hours = Math.floor(minutes / 60);
    const pad = (n) => String(n).padStart(2, "0");
    if (!minutes) return `${s}s`;
    return hours ? `${hours}h ${pad(minutes % 60)}m` : `${minutes}m ${pad(s % 60)}s`;
  };

  const tick = () => {
    const now = Date.now();
    document.querySelectorAll("time[data-age]").forEach((el) => {
      el.textContent = clock((now - Date.parse(el.getAttribute("datetime"))) / 1000);
    });
    document.querySelectorAll("time[data-countdown]").forEach((el) => {
      const left = (Date.parse(el.getAttribute("datetime")) - now) / 1000;
      el.textContent = clock(left);
      el.closest(".expires")?.classList.toggle("soon", left < 60);
    });
  };

  const step = (by) => {
    const rows = pendingRows();
    if (!rows.length) return;
    const current = rows.indexOf(selectedRow());
    choose(rows[current < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, current + by))]);
  };

  const KEY_WORDS = { a: "approve", d: "deny", e: "edit then approve" };
  const onKey = (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest("input, textarea, select, [contenteditable]")) return;
    if (event.key === "j") step(1);
    else if (event.key === "k") step(-1);
    else if (event.key === "Escape") choose(null);
    else if (KEY_WORDS[event.key]) {
      // Only ever the call the operator selected: nothing is decided by default.
      const row = selectedRow();
      if (!row) return;
      const id = row.dataset.callRow;
      const target = detailOf(id)?.querySelector(`[data-key="${event.key}"]`);
      if (!target || target.disabled) return;
      event.preventDefault();
      const again = armed && armed.id === id && armed.key === event.key;
      if (row.dataset.readOnly !== "true" && !again) {
        disarm();
        armed = { id, key: event.key };
        const hint = document.createElement("p");
        hint.className = "message info";
        hint.dataset.armed = "";
        hint.setAttribute("role", "status");
        hint.textContent = `Press ${event.key} again to ${KEY_WORDS[event.key]} call ${id}: its tool is not marked read-only by a trusted server.`;
        detailOf(id).querySelector(".call-head").after(hint);
        return;
      }
      disarm();
      if (target.matches("input")) target.focus();
      else target.click();
    }
  };

  // A click on a row selects it; with a modifier the link opens the call's page as links do.
  document.addEventListener("click", (event) => {
    const line = event.target.closest("[data-queue] .row-line");
    if (!line || event.target.closest("input, button") || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    choose(line.closest("[data-call-row]"));
  });

  const alertControls = () => {
    const controls = document.querySelector("[data-alert-controls]");
    if (!controls) return;
    controls.hidden = false;
    const notify = controls.querySelector("[data-notify-toggle]");
    const sound = controls.querySelector("[data-sound-toggle]");
    const showNotify = () => {
      const supported = "Notification" in window;
      const on = supported && Notification.permission === "granted" && localStorage.getItem(STORE.notify) === "1";
      notify.hidden = !supported;
      notify.textContent = !supported ? "" : Notification.permission === "denied" ? "Notifications blocked" : on ? "Notifications: on" : "Notify me of new calls";
      notify.setAttribute("aria-pressed", String(on));
    };
    notify.addEventListener("click", async () => {
      if (localStorage.getItem(STORE.notify) === "1" && Notification.permission === "granted") {
        localStorage.removeItem(STORE.notify);
      } else if ((await Notification.requestPermission()) === "granted") {
        localStorage.setItem(STORE.notify, "1");
      }
      showNotify();
    });
    const showSound = () => {
      const on = localStorage.getItem(STORE.sound) === "1";
      sound.textContent = on ? "Sound: on" : "Sound: off";
      sound.setAttribute("aria-pressed", String(on));
    };
    // Browsers start audio only after a gesture: the toggle is one.
    sound.addEventListener("click", () => {
      localStorage.setItem(STORE.sound, localStorage.getItem(STORE.sound) === "1" ? "0" : "1");
      audio = audio || new AudioContext();
      audio.resume();
      showSound();
      beep();
    });
    if (localStorage.getItem(STORE.sound) === "1") {
      audio = new AudioContext();
      document.addEventListener("pointerdown", () => audio.resume(), { once: true });
    }
    showNotify();
    showSound();
  };

  // The JSON editor refuses to submit what does not parse as an object.
  const jsonEditors = () => {
    document.querySelectorAll("textarea[data-json-editor]").forEach((area) => {
      const status = area.closest(".field")?.querySelector("[data-json-status]");
      const check = () => {
        let problem = "";
        try {
          const value = JSON.parse(area.value);
          if (value === null || typeof value !== "object" || Array.isArray(value)) problem = "The arguments must be a JSON object.";
        } catch (error) {
          problem = `Not valid JSON: ${error.message}`;
        }
        area.setCustomValidity(problem);
        if (status) status.textContent = problem;
      };
      area.addEventListener("input", check);
      check();
    });
  };

  // Selecting for the bulk form: a group's button ticks every pending call it shows.
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-select-group]");
    if (!button) return;
    const boxes = [...button.closest("[data-group]").querySelectorAll("input[data-select-call]")];
    const tick = boxes.some((box) => !box.checked);
    boxes.forEach((box) => { box.checked = tick; });
  });

  document.addEventListener("DOMContentLoaded", () => {
    const path = document.body.dataset.livePath;
    if (path) {
      showLive("connecting");
      connect(path);
      // The browser knows first when the network goes or comes back.
      window.addEventListener("offline", () => { if (socket) socket.close(); });
      window.addEventListener("online", () => { if (retry !== null) connect(path); });
    }
    if (document.querySelector("[data-queue]")) document.addEventListener("keydown", onKey);
    if (document.querySelector("time[data-age], time[data-countdown]") || path) setInterval(tick, 1000);
    alertControls();
    jsonEditors();
  });
})();

// The rule form's condition builder: rows of path, operator and value kept in step with the JSON
// textarea, which stays the field the server reads (and the whole editor without this script).
document.addEventListener("DOMContentLoaded", () => {
  const builder = document.querySelector("[data-builder-for]");
  if (!builder) return;
  const area = document.getElementById(builder.dataset.builderFor);
  let conditions;
  try {
    conditions = JSON.parse(area.value.trim() || "[]");
  } catch (error) {
    return;
  }
  if (!Array.isArray(conditions) || !conditions.every((c) => c && typeof c === "object" && !Array.isArray(c))) return;
  const operators = builder.dataset.operators.split(" ");
  const rows = builder.querySelector("[data-condition-rows]");
  const valueless = (op) => op === "exists" || op === "absent";
  const listed = (op) => op === "in" || op === "not_in";
  const readOne = (text) => {
    try {
      return JSON.parse(text);
    } catch (error) {
      return text;
    }
  };
  const readValue = (op, text) => (listed(op) ? text.split(",").map((part) => readOne(part.trim())) : readOne(text));
  const showOne = (value) => {
    if (typeof value !== "string") return JSON.stringify(value);
    return readOne(value) === value ? value : JSON.stringify(value);
  };
  const showValue = (op, value) => (listed(op) && Array.isArray(value) ? value.map(showOne).join(", ") : showOne(value));

  const write = () => {
    const built = [...rows.querySelectorAll(".condition-row")].map((row) => {
      const op = row.querySelector("select").value;
      const condition = { path: row.querySelector("input.path").value.trim(), op };
      if (!valueless(op)) condition.value = readValue(op, row.querySelector("input.value").value.trim());
      return condition;
    });
    area.value = JSON.stringify(built, null, 1);
  };

  let numbered = 0;
  const addRow = (condition) => {
    numbered += 1;
    const row = document.createElement("div");
    row.className = "condition-row";
    const labelled = (text, child) => {
      child.id = `condition-${numbered}-${text.toLowerCase()}`;
      const label = document.createElement("label");
      label.htmlFor = child.id;
      label.textContent = text;
      const field = document.createElement("div");
      field.className = `field condition-${text.toLowerCase()}`;
      field.append(label, child);
      row.append(field);
      return child;
    };
    const path = labelled("Path", document.createElement("input"));
    path.type = "text";
    path.className = "path";
    path.setAttribute("list", "argument-paths");
    path.value = condition.path || "";
    const op = labelled("Operator", document.createElement("select"));
    operators.forEach((name) => op.append(new Option(name, name)));
    op.value = operators.includes(condition.op) ? condition.op : "eq";
    const value = labelled("Value", document.createElement("input"));
    value.type = "text";
    value.className = "value";
    value.value = "value" in condition ? showValue(op.value, condition.value) : "";
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "button";
    remove.textContent = "Remove";
    remove.setAttribute("aria-label", `Remove condition ${numbered}`);
    row.append(remove);
    const showValueInput = () => { value.parentElement.hidden = valueless(op.value); };
    [path, value].forEach((input) => input.addEventListener("input", write));
    op.addEventListener("change", () => { showValueInput(); write(); });
    remove.addEventListener("click", () => { row.remove(); write(); });
    showValueInput();
    rows.append(row);
    return path;
  };

  // Suggestions: the paths of every tool of the rule's kind the pattern (and the server, when one is chosen) selects.
  const tools = JSON.parse(document.getElementById("tool-paths").textContent);
  const kinds = document.querySelectorAll('input[name="applies_to"]');
  const kind = () => ([...kinds].find((radio) => radio.checked) || { value: "tool" }).value;
  const glob = document.querySelector('input[name="tool_glob"]');
  const server = document.querySelector('select[name="server"]');
  const suggestions = builder.querySelector("datalist");
  const globRegExp = (pattern) =>
    new RegExp("^" + pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".") + "$");
  const suggest = () => {
    const matcher = globRegExp(glob.value.trim() || "*");
    const paths = new Set();
    tools
      .filter((tool) => tool.kind === kind() && matcher.test(tool.tool) && (!server.value || server.value === tool.server))
      .forEach((tool) => tool.paths.forEach((path) => paths.add(path)));
    suggestions.replaceChildren(...[...paths].sort().map((path) => new Option(path)));
  };
  glob.addEventListener("input", suggest);
  server.addEventListener("change", suggest);
  kinds.forEach((radio) => radio.addEventListener("change", suggest));
  suggest();

  conditions.forEach(addRow);
  builder.querySelector("[data-add-condition]").addEventListener("click", () => {
    addRow({ op: "eq" }).focus();
    write();
  });
  // The field's errors and help stay in sight; only the raw JSON gives way to the rows.
  area.hidden = true;
  document.querySelector(`label[for="${area.id}"]`).hidden = true;
  builder.hidden = false;
});

// Try a call: choosing another tool shows that tool's fields at once; without this, the next Try does.
document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form[data-try-form]");
  if (!form) return;
  form.querySelector('select[name="tool"]').addEventListener("change", () => {
    const pick = document.createElement("input");
    pick.type = "hidden";
    pick.name = "input";
    pick.value = "pick";
    form.append(pick);
    form.submit();
  });
});

// The policy list: drag a rule onto another row to take its place. The drop posts the same audited
// move as the ↑ ↓ buttons, which stay for keyboards and for pages without this script.
document.addEventListener("DOMContentLoaded", () => {
  const table = document.querySelector("table.rules[data-reorder]");
  if (!table) return;
  let dragged = null;
  const moveTo = (row, position) => {
    const form = document.createElement("form");
    form.method = "post";
    form.action = row.dataset.move;
    form.hidden = true;
    const field = document.createElement("input");
    field.type = "hidden";
    field.name = "position";
    field.value = position;
    form.append(row.querySelector('input[name="csrfmiddlewaretoken"]').cloneNode(), field);
    document.body.append(form);
    form.submit();
  };
  table.querySelectorAll("tr[data-move]").forEach((row) => {
    row.draggable = true;
    row.addEventListener("dragstart", (event) => {
      dragged = row;
      row.classList.add("dragging");
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", row.dataset.rule);
    });
    row.addEventListener("dragend", () => {
      row.classList.remove("dragging");
      table.querySelectorAll(".drop-target").forEach((el) => el.classList.remove("drop-target"));
      dragged = null;
    });
    row.addEventListener("dragover", (event) => {
      if (!dragged || dragged === row) return;
      event.preventDefault();
      row.classList.add("drop-target");
    });
    row.addEventListener("dragleave", () => row.classList.remove("drop-target"));
    row.addEventListener("drop", (event) => {
      event.preventDefault();
      if (dragged && dragged !== row) moveTo(dragged, row.dataset.position);
    });
  });
  document.querySelector("[data-drag-hint]")?.removeAttribute("hidden");
});

// The navigation's menu is a <details>: this only closes it on a click elsewhere or on Escape.
document.addEventListener("DOMContentLoaded", () => {
  const menus = [...document.querySelectorAll("details[data-menu]")];
  if (!menus.length) return;
  document.addEventListener("click", (event) => {
    menus.filter((menu) => menu.open && !menu.contains(event.target)).forEach((menu) => { menu.open = false; });
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    menus.filter((menu) => menu.open).forEach((menu) => {
      menu.open = false;
      menu.querySelector("summary").focus();
    });
  });
});

// A list's "select all" box: it checks or clears every row's box in its form.
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("input[data-select-all]").forEach((all) => {
    all.addEventListener("change", () => {
      all.closest("form").querySelectorAll('tbody input[type="checkbox"]').forEach((box) => { box.checked = all.checked; });
    });
  });
});
