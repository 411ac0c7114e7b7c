// reviewloop's service worker: it shows the notifications pushed to this
// device (a new request, or a test) and opens the request's page when one
// is clicked. It caches nothing: pages are always fetched fresh.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let push = {};
  try {
    push = event.data ? event.data.json() : {};
  } catch (e) {
    push = { body: event.data ? event.data.text() : "" };
  }
  const title = push.title || "reviewloop";
  const options = {
    body: push.body || "",
    // One notification per request: a repeated push replaces it.
    tag: push.request_id ? "request-" + push.request_id : "reviewloop",
    renotify: Boolean(push.request_id),
    requireInteraction: push.priority === "critical",
    data: { url: push.url || "/app" },
  };
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL(event.notification.data && event.notification.data.url || "/app", self.location.origin);
  event.waitUntil((async () => {
    // A tab this worker controls is reused.
    const open = await self.clients.matchAll({ type: "window" });
    for (const client of open) {
      if (new URL(client.url).origin === target.origin) {
        await client.focus();
        return client.navigate(target.href);
      }
    }
    return self.clients.openWindow(target.href);
  })());
});
