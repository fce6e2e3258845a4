// Browser notifications for the console's attention inbox (ui/views/inbox.py).
//
// Streamlit calls this with the inbox as data, never markup: {items: [{id, title, body}]}, on mount and
// whenever the data changes. An item whose id this tab has not seen in the inbox before is new and is
// notified once; the ids seen last are kept in sessionStorage, so a reload or a redraw of the same
// inbox notifies nothing, and a session that leaves the inbox and comes back is new again. The tab's
// first inbox is on screen as the page opens, so it is only recorded.
//
// Permission is asked only from the "Notify me" button: browsers ignore (Firefox, Safari) or quietly
// block (Chrome) a request no click made. When the browser blocks notifications, one line says so.

const SEEN = "andor-inbox-seen";

function seenBefore() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(SEEN));
    return Array.isArray(stored) ? new Set(stored.map(String)) : null;
  } catch {
    return null;
  }
}

function notify(items) {
  for (const item of items) {
    const shown = new Notification(String(item.title), { body: String(item.body), tag: String(item.id) });
    shown.onclick = () => window.focus();
  }
}

// The button, or the line, that tells the operator where notifications stand; text only, never markup.
function offer(parent) {
  let box = parent.querySelector("[data-andor-notify]");
  if (!box) {
    box = document.createElement("div");
    box.dataset.andorNotify = "";
    parent.append(box);
  }
  box.replaceChildren();
  if (!("Notification" in window) || Notification.permission === "granted") return;
  if (Notification.permission === "denied") {
    const line = document.createElement("small");
    line.textContent = "Notifications are blocked for this page in the browser's settings.";
    box.append(line);
    return;
  }
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Notify me of new items";
  button.title = "Let the browser show a notification when a session starts to need you";
  button.onclick = () => Notification.requestPermission().then(() => offer(parent));
  box.append(button);
}

export default function ({ data, parentElement }) {
  const items = data && Array.isArray(data.items) ? data.items : [];
  const seen = seenBefore();
  sessionStorage.setItem(SEEN, JSON.stringify(items.map((item) => String(item.id))));
  offer(parentElement);
  if (!("Notification" in window)) return;
  const fresh = seen === null ? [] : items.filter((item) => !seen.has(String(item.id)));
  if (fresh.length && Notification.permission === "granted") notify(fresh);
}
