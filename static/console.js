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

  // A pushed row must not eat a reason the operator is typing.
  const replaceRow = (old, html) => {
    const row = fragment(html);
    const typing = old.querySelector('input[name="reason"]');
    const kept = row.querySelector('input[name="reason"]');
    if (typing && kept && typing.value) kept.value = typing.value;
    const focused = old.contains(document.activeElement) && document.activeElement.name;
    if (old.classList.contains("selected")) row.classList.add("selected");
    old.replaceWith(row);
    if (focused) row.querySelector(`[name="${focused}"]`)?.focus();
    showNotice(row, row.dataset.callRow);
    return row;
  };

  // A decided or ended call keeps its row on the queue; only its actions change.
  const showActions = ({ call_id: id, status, actions }) => {
    const row = document.querySelector(`[data-queue] [data-call-row="${id}"]`);
    if (!row) return;
    row.dataset.status = status;
    [...row.classList].filter((name) => name.startsWith("status-")).forEach((name) => row.classList.remove(name));
    row.classList.add(`status-${status}`);
    row.querySelectorAll("[data-while-pending]").forEach((el) => el.remove());
    row.querySelector("[data-call-actions]")?.replaceWith(fragment(actions));
    showNotice(row, String(id));
  };

  const groupOf = (key) => document.querySelector(`[data-queue] [data-group="${CSS.escape(key)}"]`);

  const showGroupCount = ({ group, group_count: count }) => {
    const section = typeof group === "string" ? groupOf(group) : null;
    section?.querySelectorAll("[data-group-count]").forEach((el) => { el.textContent = String(count); });
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
      section.querySelector("[data-group-rows]").append(arriving.querySelector("[data-call-row]"));
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
    if (typeof message.actions === "string") showActions(message);
    if (typeof message.group_count === "number") showGroupCount(message);
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

  const resync = async () => {
    const regions = ["[data-queue]", "[data-inputs]", "[data-recent]", "[data-call-body]", "[data-review-list]"];
    const response = await fetch(location.href, { credentials: "same-origin" });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    regions.forEach((selector) => {
      const here = document.querySelector(selector);
      const there = page.querySelector(selector);
      if (here && there) swapKeepingInput(here, there);
      if (here && there && here.dataset.lastPage) here.dataset.lastPage = there.dataset.lastPage;
    });
    const count = page.querySelector("[data-pending-count]");
    if (count) showCount(Number(count.textContent));
    const reviewing = page.querySelector("[data-review-count]");
    if (reviewing) showReviewCount(Number(reviewing.textContent));
    syncEmpty();
  };

  const connect = (path, attempt) => {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const socket = new WebSocket(scheme + location.host + path);
    socket.addEventListener("open", () => {
      document.body.dataset.liveState = "open";
      if (attempt > 0) resync();
      attempt = 0;
    });
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (typeof message.pending_count === "number") showCount(message.pending_count);
      if (typeof message.review_count === "number") showReviewCount(message.review_count);
      // The list of tools to review is read afresh whenever a catalog changes.
      if (message.event === "catalog.review" && document.querySelector("[data-review-list]")) resync();
      if (message.event === "server.status") showServer(message);
      else placeCall(message);
      if (message.event === "call.pending") announce(message);
      // Other scripts (inputs.js) take what is theirs from here.
      document.dispatchEvent(new CustomEvent("console:message", { detail: message }));
    });
    socket.addEventListener("close", (event) => {
      document.body.dataset.liveState = "closed";
      // The console closed it because this user may no longer watch calls (signed out, role removed).
      if (event.code === 4403) {
        location.reload();
        return;
      }
      const delay = Math.min(30000, 500 * 2 ** Math.min(attempt, 6));
      setTimeout(() => connect(path, attempt + 1), delay);
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
  const holderOf = (id) => document.querySelector(`[data-call-row="${id}"]`);

  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form[data-decide]");
    if (!form) return;
    event.preventDefault();
    const buttons = form.closest(".decide").querySelectorAll("button");
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
    if (answer.level !== "success") {
      notices.set(String(answer.call_id), answer);
      showNotice(holderOf(answer.call_id), String(answer.call_id));
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

  const pendingRows = () => Array.from(document.querySelectorAll('[data-queue] [data-call-row][data-status="pending"]'));

  const select = (step) => {
    const rows = pendingRows();
    if (!rows.length) return;
    const current = rows.findIndex((row) => row.classList.contains("selected"));
    const next = current < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, current + step));
    rows.forEach((row) => row.classList.remove("selected"));
    rows[next].classList.add("selected");
    rows[next].scrollIntoView({ block: "nearest" });
  };

  const onKey = (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest("input, textarea, select, [contenteditable]")) return;
    if (event.key === "j") select(1);
    else if (event.key === "k") select(-1);
    else {
      const row = document.querySelector("[data-queue] [data-call-row].selected") || pendingRows()[0];
      const target = row?.querySelector(`[data-key="${event.key}"]`);
      if (!target) return;
      event.preventDefault();
      if (target.matches("input")) target.focus();
      else target.click();
    }
  };

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
    const path = document.body.dataset.live;
    if (path) connect(path, 0);
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
