// Tells the console when its page rules are in force in this tab (ui/layout.py).
//
// The rules come as this component's stylesheet, and one of them hides the rules' own container. A
// stylesheet applies whole, so once the container's computed display is "none" every rule is in force:
// the component then sets its state value `in_force`, which runs the page again, and the console draws
// what the rules must hide until it is whole (the approval box). Streamlit passes `known` once the
// server has the report, so a later run reports nothing again.

export default function ({ data, parentElement, setStateValue }) {
  if (data && data.known) return;
  const host = parentElement.closest(`.st-key-${data.container}`);
  const check = () => {
    if (!host || !host.isConnected) return;
    if (getComputedStyle(host).display === "none") setStateValue("in_force", true);
    else requestAnimationFrame(check);
  };
  check();
}
