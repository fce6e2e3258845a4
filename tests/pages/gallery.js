// Shared by the gallery pages: records which element really received each event, so a test can
// check that an id acted on the element the observation named (data-g holds that element's name).
// The record is kept in the tab's session storage, so the page an action leads to (a link followed,
// a new tab followed in the same page) still has it; each frame keeps its own.
const hitsKey = `gallery-hits:${window === window.top ? "top" : window.frameElement?.id || "frame"}`;
const memory = [];
const loadHits = () => {
  try { return JSON.parse(sessionStorage.getItem(hitsKey) || "[]"); } catch { return memory.slice(); }
};
const saveHits = (hits) => {
  try { sessionStorage.setItem(hitsKey, JSON.stringify(hits)); } catch { memory.splice(0, memory.length, ...hits); }
};
window.__takeHits = () => { const hits = loadHits(); saveHits([]); return hits; };
for (const type of ["click", "input", "change", "mouseover"]) {
  document.addEventListener(type, (event) => {
    // The nearest named element on the event's path, which crosses shadow roots (closest() stops at them).
    const named = event.composedPath().find((node) => node instanceof Element && node.hasAttribute("data-g"));
    saveHits([...loadHits(), { type, g: named ? named.dataset.g : null }]);
  }, true);
}
