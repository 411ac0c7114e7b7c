// reviewloop's one script. Every page works without it; it only makes
// pages live (server-sent events), adds copy buttons, a character counter
// and keyboard shortcuts for triage.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  live();
  copyButtons();
  counters();
  shortcuts();
});

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
