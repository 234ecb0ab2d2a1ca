// The console's service worker: it shows the notifications the console pushes (approvals/actions/notify.py sends
// {title, body, url, tag}, encrypted for this browser) and opens the page one names when it is tapped.
"use strict";

const HOME = "/queue/";

// Only a page of this console opens, whatever a payload says.
const pageFor = (notification) => {
  const url = new URL(notification?.data?.url || HOME, self.location.origin);
  return url.origin === self.location.origin ? url.href : new URL(HOME, self.location.origin).href;
};

const shown = (data) => ({
  title: data.title || "MCP Approval Console",
  options: {
    body: data.body || "",
    tag: data.tag || undefined,
    // A later notice of the same call replaces the earlier one, and still rings.
    renotify: Boolean(data.tag),
    data: { url: data.url || HOME },
    icon: "/static/icons/icon-192.png",
    badge: "/static/icons/icon-192.png",
  },
});

const readPayload = (event) => {
  if (!event.data) return {};
  try {
    return event.data.json();
  } catch {
    return { body: event.data.text() };
  }
};

self.addEventListener("push", (event) => {
  const { title, options } = shown(readPayload(event));
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = pageFor(event.notification);
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const already = open.find((client) => client.url === url);
    return already ? already.focus() : self.clients.openWindow(url);
  })());
});

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
