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
  const connected = () => document.body.dataset.live === "connected";

  // A decision key acts only on a call selected, pending and in sight for this long: a key meant for
  // something else (a word typed as a field went away, a press too many) lands on nothing.
  const DWELL_MS = 400;
  let chosenAt = 0;
  // The calls this page sent a decision for and has no answer yet: their end is this person's own doing.
  const deciding = new Set();

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

  // A call that left the queue while selected stays, read-only, until the person moves; then it goes.
  const removeRow = (row) => {
    const detail = detailOf(row.dataset.callRow);
    if (detail && !row.contains(detail)) detail.remove();
    const group = row.closest("[data-group]");
    row.remove();
    if (group && !group.querySelector("[data-call-row]")) group.remove();
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
    document.querySelectorAll("[data-queue] [data-call-row].left").forEach((el) => { if (el !== row) removeRow(el); });
    syncEmpty();
    chosenAt = Date.now();
    holder.querySelector("[data-pane-empty]").hidden = Boolean(row);
    document.body.classList.toggle("call-open", Boolean(row));
    if (!row) return;
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    const detail = row.querySelector("[data-call-detail]");
    if (detail) holder.querySelector("[data-pane-body]").append(detail);
    if (scroll) row.scrollIntoView({ block: "nearest" });
  };

  const inSight = (el) => {
    const box = el?.getBoundingClientRect();
    return Boolean(box) && box.height > 0 && box.bottom > 0 && box.top < window.innerHeight;
  };

  const stamp = (text, at) => {
    const line = document.createElement("span");
    line.textContent = text;
    if (!at) return line;
    const time = document.createElement("time");
    time.dateTime = at;
    time.dataset.age = "";
    time.textContent = "0s";
    line.append(", ", time, " ago");
    return line;
  };

  // The selected call ended under the person's eyes: it stays where it is, says how it ended, and takes no decision.
  const leaveInPlace = (row, { status, outcome, at }) => {
    const id = row.dataset.callRow;
    row.dataset.status = status || "ended";
    row.classList.add("left");
    row.querySelector("[data-select-call]")?.remove();
    row.querySelector(".row-left")?.remove();
    const detail = detailOf(id);
    disarm();
    if (!detail) return;
    detail.classList.add("left");
    detail.querySelectorAll(".expires").forEach((el) => el.remove());
    detail.querySelectorAll("[data-call-actions] button").forEach((button) => {
      button.disabled = true;
      delete button.dataset.offline;
    });
    // Read-only rather than disabled: a field being typed into keeps the focus, so no key falls through to the page.
    detail.querySelectorAll("[data-call-actions] input, [data-call-actions] textarea").forEach((field) => { field.readOnly = true; });
    detail.querySelectorAll("[data-call-actions] a[data-key]").forEach((link) => {
      link.removeAttribute("href");
      link.setAttribute("aria-disabled", "true");
    });
    detail.querySelectorAll("[data-key]").forEach((el) => el.removeAttribute("data-key"));
    detail.querySelector("[data-left]")?.remove();
    const note = document.createElement("div");
    note.className = "message warning left-note";
    note.dataset.left = "";
    note.setAttribute("role", "status");
    note.append(stamp(outcome || "It left the queue", at), ". Nothing here decides it now; move on with j/k or a click.");
    detail.querySelector(".call-head").after(note);
  };

  // The call after this one, or before it when it is the last: where the selection goes once it is decided.
  const neighbour = (row) => {
    const rows = pendingRows();
    const at = rows.indexOf(row);
    return rows[at + 1] || rows[at - 1] || null;
  };

  // Beside the panel: what this person's decisions came to, and which calls others ended meanwhile.
  const logLeft = (text, link) => {
    const log = document.querySelector("[data-queue-log]");
    if (!log) return;
    const item = document.createElement("li");
    item.textContent = text;
    if (link) {
      const view = document.createElement("a");
      view.href = link;
      view.textContent = "view";
      item.append(" · ", view);
    }
    log.querySelector("li.muted")?.remove();
    log.prepend(item);
    while (log.children.length > 3) log.lastElementChild.remove();
    log.closest("[data-queue-log-box]").hidden = false;
  };

  const PAST = { approved: "approved", denied: "denied", expired: "expired", cancelled: "cancelled" };
  const decidedText = (id, answer) => {
    const done = PAST[answer.status];
    return done && answer.level === "success" ? `Call ${id} ${done}` : `Call ${id}: ${answer.message}`;
  };

  // A call that ended leaves the queue at once, but the selected one only when this person ended it: another's
  // decision, an expiry or a client gone leaves it in place, read-only, until the person moves.
  const dropRow = (id, text, ended = null) => {
    const row = queueRow(id);
    if (!row) return;
    const selected = row.classList.contains("selected");
    if (selected && ended && !deciding.has(id)) {
      leaveInPlace(row, ended);
      if (text) logLeft(text);
      return;
    }
    const next = selected ? neighbour(row) : undefined;
    removeRow(row);
    if (next !== undefined) choose(next);
    // This person's own decision is confirmed by its answer, whichever of the two comes first.
    if (text && !deciding.has(id)) logLeft(text);
    syncEmpty();
  };

  // A pushed row must not eat a reason the operator is typing, nor the selection and the ticks.
  const replaceRow = (old, html) => {
    const row = fragment(html);
    const id = old.dataset.callRow;
    const inQueue = old.closest("[data-queue]") !== null;
    if (inQueue && row.dataset.status !== "pending") {
      dropRow(id, "", { status: row.dataset.status, outcome: "It left the queue" });
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
      const ended = { status: message.status, outcome: message.outcome, at: message.ended_at };
      dropRow(String(id), `Call ${id} (${message.tool}): ${message.outcome}`, ended);
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

  // An input request is a row of the list, selected and answered like a call; it leaves as a call does.
  const placeInput = (message) => {
    const rows = document.querySelector("[data-input-rows]");
    if (!rows) return;
    const id = `input-${message.input_id}`;
    const existing = queueRow(id);
    const row = message.input_html ? fragment(message.input_html) : null;
    if (!row || row.dataset.status !== "pending") {
      const said = row?.querySelector("[data-input-outcome]")?.textContent.trim() || "It was answered or ended";
      if (existing) dropRow(id, `Input request ${message.input_id}: ${said}`, { status: row?.dataset.status, outcome: said });
      return;
    }
    // A row whose state did not change keeps what the operator is typing into it.
    if (existing && existing.dataset.status === row.dataset.status) return;
    if (existing) replaceRow(existing, message.input_html);
    else rows.append(row);
    showDecidable(connected());
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

  // What the socket brings while the page reads itself waits for that read, then applies to what was read: applied
  // at once, it would be swapped away by a read made before it.
  let held = null;
  const receive = (message) => {
    if (held) {
      held.push(message);
      return;
    }
    if (message.event === "stale") {
      resync();
      return;
    }
    if (typeof message.pending_count === "number") showCount(message.pending_count);
    if (typeof message.review_count === "number") showReviewCount(message.review_count);
    // The list of tools to review is read afresh whenever a catalog changes.
    if (message.event === "catalog.review" && document.querySelector("[data-review-list]")) resync();
    if (message.input_id !== undefined && typeof message.input_html === "string") placeInput(message);
    else if (message.event === "server.status") showServer(message);
    else if (message.event === "call.progress") showProgress(message);
    else placeCall(message);
    if (message.event === "call.pending") announce(message);
  };

  // Back from an outage, or told it missed something: the page reads itself again, keeping the selection and what
  // was typed.
  const resync = async () => {
    // Asked again meanwhile (back from an outage during it): the read in hand may predate what was missed.
    if (held) {
      held.push({ event: "stale" });
      return;
    }
    held = [];
    try {
      await readAgain();
    } finally {
      const waiting = held;
      held = null;
      waiting.forEach(receive);
    }
  };

  const readAgain = async () => {
    const regions = ["[data-queue]", "[data-recent]", "[data-call-body]", "[data-review-list]"];
    const response = await fetch(location.href, { credentials: "same-origin" });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const chosen = selectedRow()?.dataset.callRow;
    const endedAlready = selectedRow()?.classList.contains("left");
    const typing = chosen ? detailOf(chosen)?.querySelector('input[name="reason"]') : null;
    const reason = typing?.value || "";
    const focused = typing !== null && typing === document.activeElement;
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
      if (field && focused) field.focus();
      // A call that ended while the page was away is gone from the list: the panel says so, and it is not decided.
      if (chosen && !again && !endedAlready) {
        logLeft(`Call ${chosen} left the queue while the page was not connected`);
      }
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
      // In the header's flow, where it covers nothing.
      (document.querySelector(".topbar") || document.body).append(badge);
    }
    badge.dataset.state = state;
    badge.textContent = LIVE_WORDS[state];
    showDecidable(state === "connected");
  };

  // Without the socket the page cannot know the call is still as shown: no decision goes out until it is back.
  const showDecidable = (live) => {
    const controls = "[data-call-actions] button, .call-page .decide button, [data-input-form] button, [data-bulk] button";
    document.querySelectorAll(controls).forEach((button) => {
      if (!live && !button.disabled) {
        button.disabled = true;
        button.dataset.offline = "";
      } else if (live && "offline" in button.dataset) {
        button.disabled = false;
        delete button.dataset.offline;
      }
    });
    document.querySelectorAll(".decide, [data-input-form]").forEach((box) => {
      let note = box.querySelector("[data-offline-note]");
      if (live || box.closest(".left")) {
        note?.remove();
        return;
      }
      if (note) return;
      note = document.createElement("p");
      note.className = "offline-note";
      note.dataset.offlineNote = "";
      note.setAttribute("role", "status");
      note.textContent = "Not connected, retrying…";
      box.append(note);
    });
  };

  let socket = null;
  let retry = null;
  let attempts = 0;
  // `since`, on the first connection only: what the page was rendered from, for the console to say whether anything
  // happened before the socket listened. Connecting again, the page reads itself anyway.
  const connect = (path, since = "") => {
    clearTimeout(retry);
    retry = null;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const marked = since ? `${path.includes("?") ? "&" : "?"}since=${encodeURIComponent(since)}` : "";
    const opened = new WebSocket(scheme + location.host + path + marked);
    socket = opened;
    opened.addEventListener("open", () => {
      if (socket !== opened) return;
      showLive("connected");
      if (attempts > 0) resync();
      attempts = 0;
    });
    opened.addEventListener("message", (event) => receive(JSON.parse(event.data)));
    opened.addEventListener("close", (event) => {
      if (socket !== opened) return;
      // The console closed it because this user may no longer watch calls (signed out, role removed).
      if (event.code === 4403) {
        location.reload();
        return;
      }
      showLive("reconnecting");
      attempts += 1;
      retry = setTimeout(() => connect(path), Math.min(2000, 250 * 2 ** Math.min(attempts, 6)));
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
  // An input request's own page holds its card, whose element id is the row's.
  const holderOf = (id) => detailOf(id) || document.querySelector(`[data-call-row="${id}"]`) || document.getElementById(id);

  // A request that did not get through stays on the page, to be sent again; the page never leaves for an error page.
  const showUnsent = (form, id, submitter) => {
    const holder = holderOf(id);
    if (!holder) return;
    holder.querySelector(".notice")?.remove();
    notices.delete(id);
    const note = document.createElement("div");
    note.className = "message error notice";
    note.dataset.unsent = "";
    note.setAttribute("role", "alert");
    const retry = document.createElement("button");
    retry.type = "button";
    retry.className = "link";
    retry.textContent = "retry";
    retry.addEventListener("click", () => {
      note.remove();
      if (form.isConnected) form.requestSubmit(submitter?.isConnected ? submitter : null);
    });
    note.append(connected() ? "Not sent: " : "Not sent (not connected): ", retry);
    const head = holder.querySelector(".call-head, .pagehead");
    if (head) head.after(note);
    else holder.prepend(note);
  };

  // An input request's answer: a form to correct comes back in place; one that went, on its own page, returns to
  // where the form was opened from, as without a script.
  const settleInput = (form, id, response, answer, inQueue) => {
    if (response.ok && inQueue) {
      // The socket may have brought the answer's new state first, and taken the row already.
      dropRow(id, "", { status: answer.status });
      deciding.delete(id);
      logLeft(`Input request ${id.replace("input-", "")}: ${answer.message}`, `/inputs/${id.replace("input-", "")}/`);
      return;
    }
    deciding.delete(id);
    if (answer.form_html) {
      const corrected = fragment(answer.form_html);
      form.replaceWith(corrected);
      corrected.querySelector('[aria-invalid="true"], .invalid input, .invalid select, .invalid textarea')?.focus();
      return;
    }
    if (response.ok) {
      location.assign(form.querySelector('input[name="next"]')?.value || "/queue/");
      return;
    }
    notices.set(id, answer);
    showNotice(holderOf(id), id);
  };

  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form[data-decide], form[data-claim], form[data-input-form]");
    if (!form) return;
    event.preventDefault();
    const card = form.closest("[data-input-card]");
    const id = form.closest("[data-call-detail]")?.dataset.callDetail || form.closest("[data-call-row]")?.dataset.callRow
      || (card && `input-${card.dataset.inputCard}`);
    if (form.closest(".left")) return;
    // An input form's buttons name the answer (accept, decline, cancel): the one pressed goes with the form.
    const submitter = form.matches("[data-input-form]") ? event.submitter : null;
    const inQueue = Boolean(document.querySelector("[data-queue]"));
    if (!connected()) {
      showUnsent(form, id, submitter);
      return;
    }
    const decides = form.matches("[data-decide], [data-input-form]");
    // Read before the buttons are disabled: a disabled submitter sends no value. (An input form's buttons are named
    // "action", which shadows form.action: the attribute is read below.)
    const body = new FormData(form, submitter);
    const buttons = [...(form.closest(".decide") || form).querySelectorAll("button")].filter((button) => !button.disabled);
    buttons.forEach((button) => { button.disabled = true; });
    if (decides) deciding.add(id);
    let response;
    let answer;
    try {
      response = await fetch(form.getAttribute("action"), {
        method: "POST", body, credentials: "same-origin", headers: { Accept: "application/json" },
      });
      answer = await response.json();
    } catch (error) {
      deciding.delete(id);
      buttons.forEach((button) => { button.disabled = !connected(); });
      showUnsent(form, id, submitter);
      return;
    }
    if (card) {
      settleInput(form, id, response, answer, inQueue);
      buttons.forEach((button) => { button.disabled = !connected(); });
      return;
    }
    const row = queueRow(id);
    if (response.status === 409 && answer.status !== "pending") {
      // Someone or something ended it first: the panel says so, in place, and nothing was recorded.
      deciding.delete(id);
      notices.set(id, answer);
      if (row?.classList.contains("selected")) leaveInPlace(row, { status: answer.status, outcome: answer.message.replace(/\.$/, "") });
      else if (row) dropRow(id, `Call ${id}: ${answer.message}`);
      showNotice(holderOf(id), id);
      return;
    }
    if (answer.status !== "pending") {
      if (row) dropRow(id, "", { status: answer.status });
      deciding.delete(id);
      logLeft(decidedText(id, answer), `/calls/${id}/`);
      return;
    }
    deciding.delete(id);
    if (answer.level !== "success") {
      notices.set(id, answer);
      showNotice(holderOf(id), id);
    } else if (row && decides) {
      // One approval of several: the call waits for others, and this operator moves on.
      logLeft(`Call ${id}: ${answer.message}`, `/calls/${id}/`);
      const next = neighbour(row);
      if (next) choose(next);
    }
    buttons.forEach((button) => { button.disabled = !connected(); });
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

  // From the selected row, a call that ended in place included, to the next pending one up or down.
  const step = (by) => {
    const current = selectedRow();
    const rows = [...document.querySelectorAll("[data-queue] [data-call-row]")]
      .filter((row) => row.dataset.status === "pending" || row === current);
    if (!rows.length) return;
    const at = rows.indexOf(current);
    let target = rows[at < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, at + by))];
    if (target === current && current?.classList.contains("left")) target = rows[at - by] || null;
    if (target && target !== current) choose(target);
  };

  const KEY_WORDS = { a: "approve", d: "give a reason and deny", e: "edit then approve" };
  // Whether a decision key may act on this row now: pending, its panel's head in sight, selected long enough to be seen.
  const mayDecide = (row) => {
    const detail = detailOf(row.dataset.callRow);
    return row.dataset.status === "pending" && connected() && Date.now() - chosenAt >= DWELL_MS && inSight(detail?.querySelector(".call-head") || detail);
  };
  const onKey = (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const field = event.target.closest("input, textarea, select, [contenteditable]");
    if (field) {
      // No shortcut while a field has the keys; Escape gives them back to the page.
      if (event.key === "Escape") {
        event.preventDefault();
        field.blur();
      }
      return;
    }
    if (event.key === "j") step(1);
    else if (event.key === "k") step(-1);
    else if (event.key === "Escape") choose(null);
    else if (KEY_WORDS[event.key]) {
      // Only ever the call the operator selected: nothing is decided by default.
      event.preventDefault();
      const row = selectedRow();
      if (!row) return;
      const id = row.dataset.callRow;
      const target = detailOf(id)?.querySelector(`[data-key="${event.key}"]`);
      if (!target || target.disabled || !mayDecide(row)) {
        disarm();
        return;
      }
      // Twice for a tool not known read-only, and twice always for the reason field, so that "dd" means one
      // thing on every tool and the second press never lands in the field as text.
      const again = armed && armed.id === id && armed.key === event.key;
      if ((row.dataset.readOnly !== "true" || target.matches("input")) && !again) {
        disarm();
        armed = { id, key: event.key };
        const hint = document.createElement("p");
        hint.className = "message info";
        hint.dataset.armed = "";
        hint.setAttribute("role", "status");
        const why = row.dataset.readOnly === "true" ? "" : ": its tool is not marked read-only by a trusted server";
        hint.textContent = `Press ${event.key} again to ${KEY_WORDS[event.key]} call ${id}${why}.`;
        detailOf(id).querySelector(".call-head").after(hint);
        return;
      }
      disarm();
      if (target.matches("input")) target.focus();
      else target.click();
    }
  };

  // Edit then approve is a link to a page: while the console is out of reach it would lead to the browser's error page.
  document.addEventListener("click", (event) => {
    if (!connected() && document.body.dataset.live && event.target.closest(".decide a.button")) event.preventDefault();
  });

  // On a phone the open call covers the list: this goes back to it, at the row it came from.
  document.addEventListener("click", (event) => {
    if (!event.target.closest("[data-pane-back]")) return;
    const row = selectedRow();
    choose(null);
    row?.scrollIntoView({ block: "center" });
  });

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
      connect(path, document.body.dataset.liveSince);
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

// Notifications on this device (the account page): the browser subscribes with the console's VAPID key through
// the service worker, and the form posts the subscription, which the console keeps as one of the person's devices.
document.addEventListener("DOMContentLoaded", () => {
  const holder = document.querySelector("[data-push-devices]");
  if (!holder) return;
  const form = holder.querySelector("[data-push-subscribe]");
  const problem = holder.querySelector("[data-push-problem]");
  const say = (text) => {
    problem.textContent = text;
    problem.hidden = false;
  };
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !window.isSecureContext) {
    say("This browser cannot take notifications from this page: it needs the Push API and a secure (https) address.");
    return;
  }
  // base64url, as the console gives it, to the bytes PushManager takes.
  const keyBytes = (text) => {
    const plain = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
    return Uint8Array.from(plain, (c) => c.charCodeAt(0));
  };
  const device = () => {
    const agent = navigator.userAgent;
    const kind = /iPhone|iPad/.test(agent) ? "iPhone or iPad" : /Android/.test(agent) ? "Android device"
      : /Mac OS X/.test(agent) ? "Mac" : /Windows/.test(agent) ? "Windows computer" : "computer";
    const browser = /Edg\//.test(agent) ? "Edge" : /Firefox\//.test(agent) ? "Firefox"
      : /Chrom(e|ium)\//.test(agent) ? "Chrome" : /Safari\//.test(agent) ? "Safari" : "a browser";
    return `${browser} on ${kind}`;
  };
  const label = form.elements.label;
  if (!label.value) label.value = device();
  form.hidden = false;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.hidden = true;
    try {
      if ((await Notification.requestPermission()) !== "granted") {
        say("Notifications are blocked for this site: allow them in the browser's site settings, then try again.");
        return;
      }
      await navigator.serviceWorker.register(holder.dataset.serviceWorker, { scope: "/" });
      const registration = await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: keyBytes(holder.dataset.vapidKey),
      });
      form.elements.subscription.value = JSON.stringify(subscription.toJSON());
      form.submit();
    } catch (error) {
      say(`The browser did not subscribe: ${error.message}`);
    }
  });
});
