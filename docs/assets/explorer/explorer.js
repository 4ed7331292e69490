// The protocol explorer: walks the model's own reachable state graph, exported by
// `groupspec.checker.export` (make docs-figures). No protocol logic lives here: every state, every
// enabled step and every invariant verdict comes from the graph file.
(function () {
  "use strict";
  const base = document.currentScript.src.replace(/[^/]*$/, "");
  const root = document.getElementById("gs-explorer");
  if (!root) return;
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const kid of kids) e.append(kid);
    return e;
  };
  let manifest = null, graph = null, instance = null, path = [];
  const cache = {};

  function parseHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const p = h.get("path");
    return { instance: h.get("v"), path: p ? p.split(".").filter(x => x !== "").map(Number) : [] };
  }
  function hashFor(inst, p) { return "#v=" + encodeURIComponent(inst) + "&path=" + p.join("."); }

  async function load(id) {
    if (!cache[id]) {
      const r = await fetch(base + "graphs/" + id + ".json");
      if (!r.ok) throw new Error("cannot load graph " + id);
      cache[id] = await r.json();
    }
    return cache[id];
  }

  // Follow a path of edge indices from the initial state; stop at the first invalid index.
  function walk(p) {
    let s = graph.initial[0];
    const steps = [];
    for (const k of p) {
      const e = graph.edges[s][k];
      if (!e) break;
      steps.push({ from: s, edge: e, index: k });
      s = e[0];
    }
    return { state: s, steps };
  }

  async function show(inst, p, push) {
    if (inst !== instance) { graph = await load(inst); instance = inst; }
    const w = walk(p);
    path = w.steps.map(x => x.index);
    const h = hashFor(instance, path);
    if (push) history.pushState(null, "", h); else if (location.hash !== h) history.replaceState(null, "", h);
    render(w);
  }

  function S(i) { return graph.strings[i]; }

  function render(w) {
    const st = graph.states[w.state];
    const last = w.steps.length ? w.steps[w.steps.length - 1].edge : null;
    const broken = Object.entries(st.violations).concat(last ? Object.entries(last[4]) : []);
    const picker = el("div", { class: "gs-picker" });
    const sel = el("select", { id: "gs-instance", "aria-label": "protocol variant and group size",
      onchange: e => show(e.target.value, [], true) });
    for (const m of manifest.instances) {
      const o = el("option", { value: m.id }, m.label);
      if (m.id === instance) o.selected = true;
      sel.append(o);
    }
    picker.append(el("label", {}, "Variant and group: "), sel,
      el("button", { id: "gs-back", onclick: () => show(instance, path.slice(0, -1), true), ...(path.length ? {} : { disabled: "" }) }, "◀ step back"),
      el("button", { id: "gs-reset", onclick: () => show(instance, [], true) }, "⟲ empty group"));
    const banner = broken.length
      ? el("div", { id: "gs-banner", class: "gs-banner gs-bad" }, "Invariant violated — " +
          broken.map(([k, v]) => k + ": " + v).join("; "))
      : el("div", { id: "gs-banner", class: "gs-banner gs-ok" }, "Every invariant holds in this state" +
          (st.converged ? " — the group has converged." : "."));
    const parties = el("div", { class: "gs-parties" });
    for (const [who, belief] of st.parties) {
      parties.append(el("div", { class: "gs-party" + (S(who) === "coordinator" || S(who) === "zookeeper" ? " gs-coord" : "") },
        el("div", { class: "gs-who" }, S(who)), el("div", { class: "gs-belief" }, S(belief))));
    }
    const steps = el("ol", { id: "gs-steps", class: "gs-steps", start: "0" });
    graph.edges[w.state].forEach((e, k) => {
      const b = el("button", { class: "gs-step" + (e[3] ? "" : " gs-fault"), "data-action": e[2], "data-index": String(k),
        onclick: () => show(instance, path.concat([k]), true) }, S(e[1]) + (e[3] ? "" : "  (fault)"));
      steps.append(el("li", {}, b));
    });
    if (!graph.edges[w.state].length) steps.append(el("li", {}, "No step is enabled: the run stutters here."));
    const hist = el("ol", { id: "gs-history", class: "gs-history", start: "0" });
    hist.append(el("li", {}, "empty group (initial state)"));
    for (const x of w.steps) hist.append(el("li", {}, S(x.edge[1])));
    root.replaceChildren(picker, banner,
      el("h3", {}, "State " + w.state + (st.status ? " — group " + st.status + ", generation " + st.generation
        : st.generation !== null && st.generation !== undefined ? " — group epoch " + st.generation : "")),
      parties, el("h3", {}, "Enabled steps (click one)"), steps, el("h3", {}, "The path so far"), hist,
      el("p", { class: "gs-note" }, graph.states.length + " reachable states on this instance" +
        (graph.truncated ? " (search stopped early)" : "") + ". Faults: " + (graph.config.faults.join(", ") || "none") +
        ", budget " + graph.config.budget + ", assignor " + graph.config.assignor + "."));
  }

  async function start() {
    const r = await fetch(base + "graphs/manifest.json");
    manifest = await r.json();
    const h = parseHash();
    const inst = manifest.instances.some(m => m.id === h.instance) ? h.instance : manifest.instances[0].id;
    await show(inst, h.path, false);
  }
  window.addEventListener("popstate", () => { const h = parseHash(); if (h.instance) show(h.instance, h.path, false); });
  start().catch(err => { root.replaceChildren(el("div", { class: "gs-banner gs-bad" }, String(err))); });
})();
