// Browser notifications for the console's attention inbox (ui/views/inbox.py).
//
// Streamlit calls this with the inbox as data, never markup: {items: [{id, title, body}]}, on mount and
// whenever the data changes. An item whose id this tab has not seen in the inbox before is new and is
// notified once; the ids seen last are kept in sessionStorage, so a reload or a redraw of the same
// inbox notifies nothing, and a session that leaves the inbox and comes back is new again. The tab's
// first inbox is on screen as the page opens, so it is only recorded. Permission is asked once a tab.

const SEEN = "andor-inbox-seen";
const ASKED = "andor-inbox-asked";

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

export default function ({ data }) {
  const items = data && Array.isArray(data.items) ? data.items : [];
  const seen = seenBefore();
  sessionStorage.setItem(SEEN, JSON.stringify(items.map((item) => String(item.id))));
  if (!("Notification" in window)) return;
  if (Notification.permission === "default" && !sessionStorage.getItem(ASKED)) {
    sessionStorage.setItem(ASKED, "1");
    Notification.requestPermission();
  }
  const fresh = seen === null ? [] : items.filter((item) => !seen.has(String(item.id)));
  if (fresh.length && Notification.permission === "granted") notify(fresh);
}
