// reviewloop's one script. Every page works without it; it only makes
// pages live (server-sent events), adds copy buttons, a character counter,
// keyboard shortcuts for triage, and subscribes a device to Web Push.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  live();
  copyButtons();
  counters();
  shortcuts();
  pushSetup();
  unsubscribeOnSignOut();
  clocks();
});

// "times out in 24 s" counts down, and "2 min ago" ages, every second; the
// words are the server's (layout::relative), said again from the element's
// datetime. Elements the live list brings in are found at the next tick.
function clocks() {
  if (!document.querySelector("time[data-relative]")) return;
  setInterval(() => {
    const now = Date.now();
    for (const t of document.querySelectorAll("time[data-relative]")) {
      const at = Date.parse(t.dateTime);
      if (!Number.isNaN(at)) t.textContent = relative(at, now);
    }
  }, 1000);
}

function relative(at, now) {
  const secs = Math.trunc((at - now) / 1000);
  if (Math.abs(secs) < 5) return "just now";
  const span = shortSpan(Math.abs(secs));
  return secs >= 0 ? "in " + span : span + " ago";
}

function shortSpan(secs) {
  const d = Math.floor(secs / 86400), h = Math.floor(secs % 86400 / 3600), m = Math.floor(secs % 3600 / 60);
  if (d === 0 && h === 0 && m === 0) return secs + " s";
  if (d === 0 && h === 0) return m + " min";
  if (d === 0 && m === 0) return h + " h";
  if (d === 0) return h + " h " + m + " min";
  return h > 0 ? d + " d " + h + " h" : d + " d";
}

// The inbox list: when the stream says something changed, fetch the list
// again and put it in place. A review page: reload when its request changed.
function live() {
  const list = document.getElementById("live-list");
  const review = document.querySelector("article.review[data-request]");
  if (!window.EventSource || (!list && !review)) return;
  let url = "/app/stream";
  if (review) url += "?request=" + encodeURIComponent(review.dataset.request);
  const events = new EventSource(url);
  let busy = false;
  events.addEventListener("changed", async () => {
    if (review) {
      // Do not throw away an answer being typed.
      const typing = document.activeElement && /^(TEXTAREA|INPUT)$/.test(document.activeElement.tagName);
      if (!typing) location.reload();
      return;
    }
    if (busy) return;
    busy = true;
    try {
      const response = await fetch(list.dataset.source, { headers: { "X-Partial": "1" }, credentials: "same-origin" });
      if (response.ok) list.innerHTML = await response.text();
    } finally {
      busy = false;
    }
  });
}

function copyButtons() {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const source = document.getElementById(button.dataset.copy);
    if (!source || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      await navigator.clipboard.writeText(source.value);
      const label = button.textContent;
      button.textContent = "Copied";
      setTimeout(() => { button.textContent = label; }, 1500);
    });
  }
}

function counters() {
  for (const field of document.querySelectorAll("textarea[data-counter]")) {
    const counter = document.getElementById(field.dataset.counter);
    if (!counter) continue;
    // The count replaces the stated limit the page shows without the script.
    counter.parentElement.hidden = false;
    const stated = document.querySelector('[data-counter-static="' + CSS.escape(field.dataset.counter) + '"]');
    if (stated) stated.hidden = true;
    const update = () => { counter.textContent = String([...field.value].length); };
    field.addEventListener("input", update);
    update();
  }
}

// Number keys pick an option, a and r approve and reject, j and k go to the
// next and previous request. Never while typing.
function shortcuts() {
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.isContentEditable || /^(TEXTAREA|INPUT|SELECT)$/.test(t.tagName))) return;
    const target = document.querySelector('[data-key="' + CSS.escape(e.key) + '"]');
    if (!target) return;
    e.preventDefault();
    if (target.type === "checkbox") target.checked = !target.checked;
    else target.click();
  });
}

// The account page's "Notify me on this device": registers the service
// worker (/app/sw.js shows what is pushed), subscribes this browser with
// the server's VAPID key and hands the subscription to the API with the
// session's anti-forgery token.
async function pushSetup() {
  const box = document.getElementById("push-setup");
  if (!box) return;
  const button = document.getElementById("push-enable");
  const state = document.getElementById("push-state");
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    state.textContent = "This browser cannot receive push notifications.";
    return;
  }
  const headers = { "X-CSRF-Token": box.dataset.csrf, "Content-Type": "application/json" };
  let registration;
  try {
    registration = await navigator.serviceWorker.register("/app/sw.js");
  } catch (e) {
    state.textContent = "The notification worker could not start here: " + e.message;
    return;
  }
  const current = await registration.pushManager.getSubscription();
  state.textContent = current ? "This browser is subscribed; subscribe again if it is missing below." : "";
  button.hidden = false;
  button.addEventListener("click", async () => {
    button.disabled = true;
    state.textContent = "Asking for permission…";
    try {
      if (await Notification.requestPermission() !== "granted") {
        state.textContent = "Notifications are blocked for this site: allow them in the browser's site settings, then try again.";
        return;
      }
      const keyAnswer = await fetch("/v1/api/push/vapid-key", { headers, credentials: "same-origin" });
      const key = (await keyAnswer.json()).data.public_key;
      let subscription = await registration.pushManager.getSubscription();
      if (subscription && !sameKey(subscription, key)) {
        // Made with a key the server has since replaced.
        await subscription.unsubscribe();
        subscription = null;
      }
      if (!subscription) {
        // Subscribing needs an active worker; on a first visit it may
        // still be installing.
        await navigator.serviceWorker.ready;
        subscription = await registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: fromBase64Url(key),
        });
      }
      const saved = await fetch("/v1/api/push/subscriptions", {
        method: "POST",
        headers,
        credentials: "same-origin",
        body: JSON.stringify(subscription.toJSON()),
      });
      if (!saved.ok) {
        const answer = await saved.json().catch(() => ({}));
        state.textContent = "The server refused this device: " + (answer.msg || "HTTP " + saved.status);
        return;
      }
      location.assign("/app/account?done=subscribed#devices");
    } catch (e) {
      state.textContent = "This device could not be subscribed: " + e.message;
    } finally {
      button.disabled = false;
    }
  });
}

// Signing out of a browser stops its notifications: whoever signs in
// next on it must not see the last person's requests.
function unsubscribeOnSignOut() {
  const form = document.querySelector("form.signout");
  if (!form || !("serviceWorker" in navigator)) return;
  form.addEventListener("submit", async (event) => {
    if (form.dataset.unsubscribed) return;
    event.preventDefault();
    try {
      const registration = await navigator.serviceWorker.getRegistration("/app/");
      const subscription = registration && await registration.pushManager.getSubscription();
      if (subscription) await subscription.unsubscribe();
    } catch (e) {
      // Signing out matters more.
    }
    form.dataset.unsubscribed = "1";
    form.submit();
  });
}

function fromBase64Url(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - text.length % 4) % 4);
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

function sameKey(subscription, key) {
  const used = subscription.options && subscription.options.applicationServerKey;
  if (!used) return true;
  const bytes = new Uint8Array(used);
  const wanted = fromBase64Url(key);
  return bytes.length === wanted.length && bytes.every((b, i) => b === wanted[i]);
}
