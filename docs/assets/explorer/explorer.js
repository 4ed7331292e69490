// The protocol explorer: walks the model's own reachable state graph, exported by
// `groupspec.checker.export` (make docs-figures). No protocol logic lives here: every state, every
// enabled step, every invariant verdict, every deadlock and every counterexample comes from the graph file
// (the last two from the checker itself, run on the same bounds when the graph was exported).
// Plain JS and SVG, no framework, no build step.
(function () {
  "use strict";
  const base = document.currentScript.src.replace(/[^/]*$/, "");
  const root = document.getElementById("gs-explorer");
  if (!root) return;
  const SVG = "http://www.w3.org/2000/svg";
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const kid of kids) e.append(kid);
    return e;
  };
  const sv = (tag, attrs, ...kids) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    for (const kid of kids) e.append(kid);
    return e;
  };
  // one colour per partition (a double owner is drawn red whatever its colour)
  const COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#393b79", "#637939", "#843c39"];
  let manifest = null, graph = null, instance = null, path = [], walking = null;
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
  const isCoord = who => who === "coordinator" || who === "zookeeper";

  // The checker's first failed verdict that has a path in this graph: what "show me how it breaks" walks.
  function breakage() {
    const v = (graph.check || {}).verdicts || {};
    const failed = Object.entries(v).filter(([, x]) => x.held === false && x.path);
    failed.sort((a, b) => (a[0] === "convergence") - (b[0] === "convergence") || a[1].path.length - b[1].path.length);
    return failed.length ? { name: failed[0][0], ...failed[0][1] } : null;
  }
  // States on the loop of the checker's livelock (a lasso: the path, then back to its loop_start).
  function livelockStates() {
    const c = ((graph.check || {}).verdicts || {}).convergence;
    if (!c || c.held !== false || !c.path || c.loop_start === null || c.loop_start === undefined) return new Set();
    let s = graph.initial[0];
    const seen = [s];
    for (const k of c.path) { s = graph.edges[s][k][0]; seen.push(s); }
    return new Set(seen.slice(c.loop_start));
  }

  function owners(pic) {
    const n = graph.config.partitions, out = [];
    for (let p = 0; p < n; p++) out.push(pic.own.map((m, i) => (m >> p) & 1 ? i : -1).filter(i => i >= 0));
    return out;
  }

  // The group as a picture: the coordinator's box on top, one box per member below, each partition a token
  // at each member that owns it (red at both when two do), answers on their way as arrows.
  function picture(st, prev, changedParties) {
    const pic = st.picture, n = pic.own.length, np = graph.config.partitions;
    // drawn at the page's width (at most 640 units), so that text stays legible on a phone
    const W = Math.round(Math.max(320, Math.min(640, root.clientWidth || 640)));
    const bw = Math.min(180, (W - 20) / n - 12), bh = 92, top = 10, ch = 56, my = 150;
    const perRow = Math.max(1, Math.floor((bw - 6) / 26));
    const svg = sv("svg", { id: "gs-picture", class: "gs-picture", viewBox: `0 0 ${W} ${my + bh + 10}`, role: "img",
      "aria-label": "the group: coordinator, members, partitions and answers in flight" });
    svg.append(sv("defs", {}, sv("marker", { id: "gs-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
      markerHeight: 7, orient: "auto-start-reverse" }, sv("path", { d: "M0,0 L10,5 L0,10 z", fill: "#555" }))));
    const cx = W / 2, cw = Math.min(300, W - 20);
    const own = owners(pic);
    const prevOwn = prev ? owners(prev.picture) : null;
    const coordName = S(st.parties[0][0]);
    const coord = sv("g", { class: "gs-box gs-coordbox" + (changedParties.has(coordName) ? " gs-changed" : ""), "data-who": coordName });
    coord.append(sv("rect", { x: cx - cw / 2, y: top, width: cw, height: ch, rx: 6 }),
      sv("text", { x: cx, y: top + 18, "text-anchor": "middle", class: "gs-boxname" }, coordName +
        (st.status ? " · " + st.status + ", generation " + st.generation
          : st.generation !== null && st.generation !== undefined ? " · group epoch " + st.generation : "")));
    const free = [];
    for (let p = 0; p < np; p++) if (!own[p].length) free.push(p);
    coord.append(sv("text", { x: cx - cw / 2 + 8, y: top + 42, class: "gs-small" }, free.length ? "unowned:" : "every partition owned"));
    free.forEach((p, j) => coord.append(token(p, cx - cw / 2 + 68 + j * 26, top + 38, false, true, prevOwn && prevOwn[p].length)));
    svg.append(coord);
    const xs = [];
    for (let i = 0; i < n; i++) {
      const x = 10 + i * ((W - 20) / n) + ((W - 20) / n - bw) / 2;
      xs.push(x);
      const name = graph.members[i];
      const g = sv("g", { class: "gs-box gs-member" + (pic.up[i] ? "" : " gs-down") + (changedParties.has(name) ? " gs-changed" : ""),
        "data-who": name });
      g.append(sv("rect", { x, y: my, width: bw, height: bh, rx: 6 }),
        sv("text", { x: x + bw / 2, y: my + 18, "text-anchor": "middle", class: "gs-boxname" }, name),
        sv("text", { x: x + bw / 2, y: my + 34, "text-anchor": "middle", class: "gs-small" }, pic.up[i] ? "running" : "not running"));
      let j = 0;
      for (let p = 0; p < np; p++) {
        if (!own[p].includes(i)) continue;
        const isNew = prevOwn && !prevOwn[p].includes(i);
        g.append(token(p, x + 18 + (j % perRow) * 26, my + 56 + Math.floor(j / perRow) * 24, own[p].length > 1, false, isNew));
        j++;
      }
      svg.append(g);
    }
    const prevMsgs = prev ? new Set(prev.picture.msg.map(m => m[0] + ":" + m[1])) : new Set();
    for (const [i, label] of pic.msg) {
      const x2 = xs[i] + bw / 2, y2 = my - 2, x1 = cx + (x2 - cx) * 0.35, y1 = top + ch + 2;
      const fresh = !prevMsgs.has(i + ":" + label);
      svg.append(sv("g", { class: "gs-msg" + (fresh ? " gs-changed" : ""), "data-to": graph.members[i] },
        sv("line", { x1, y1, x2, y2, "marker-end": "url(#gs-arrow)" }),
        // the label on the side of the centre line, where there is room; one line lower per member
        sv("text", { x: (x1 + x2) / 2 + (x2 >= cx ? -8 : 8), y: (y1 + y2) / 2 - 8 + 14 * i, "text-anchor": x2 >= cx ? "end" : "start",
          class: "gs-small gs-msglabel" }, S(label))));
    }
    return svg;
  }
  function token(p, x, y, double, free, isNew) {
    const name = graph.partitions ? graph.partitions[p] : "p" + p;
    const g = sv("g", { class: "gs-token" + (double ? " gs-double" : "") + (free ? " gs-free" : "") + (isNew ? " gs-new" : ""),
      "data-partition": name });
    g.append(sv("circle", { cx: x, cy: y, r: 11, fill: free ? "#fff" : double ? "#c62828" : COLOURS[p % COLOURS.length],
      stroke: double ? "#8e0000" : COLOURS[p % COLOURS.length] }),
      sv("text", { x, y: y + 4, "text-anchor": "middle", class: "gs-tokenname" + (free ? " gs-freename" : "") }, name));
    return g;
  }

  function render(w) {
    const st = graph.states[w.state];
    const last = w.steps.length ? w.steps[w.steps.length - 1] : null;
    const prev = last ? graph.states[last.from] : null;
    const broken = Object.entries(st.violations).concat(last ? Object.entries(last.edge[4]) : []);
    const frontier = new Set(graph.frontier || []).has(w.state);
    const loop = livelockStates().has(w.state);
    const conv = ((graph.check || {}).verdicts || {}).convergence;
    const brk = breakage();
    const picker = el("div", { class: "gs-picker" });
    picker.append(selector(), el("button", { id: "gs-back", title: "step back (←)", onclick: () => show(instance, path.slice(0, -1), true),
      ...(path.length ? {} : { disabled: "" }) }, "◀ step back"),
      el("button", { id: "gs-reset", title: "empty group (Home)", onclick: () => show(instance, [], true) }, "⟲ empty group"));
    if (brk) picker.append(el("button", { id: "gs-break", class: "gs-breakbtn", title: "show me how it breaks (b)",
      onclick: () => walkTo(brk.path) }, "⚡ show me how it breaks"));
    let banner;
    if (broken.length) {
      banner = el("div", { id: "gs-banner", class: "gs-banner gs-bad", "data-kind": "invariant" }, "Invariant violated — " +
        broken.map(([k, v]) => k + ": " + v).join("; "));
    } else if (frontier) {
      banner = el("div", { id: "gs-banner", class: "gs-banner gs-unexplored", "data-kind": "unexplored" },
        "Unexplored: the graph was cut off at " + graph.states.length.toLocaleString("en") +
        " states before every step from here was followed. Nothing is known about what comes next.");
    } else if (st.deadlock) {
      banner = el("div", { id: "gs-banner", class: "gs-banner gs-bad gs-deadlock", "data-kind": "deadlock" },
        "Convergence fails — deadlock: the group has not converged, and no protocol step is enabled" +
        (graph.edges[w.state].length ? " (only faults are)" : "") + ". The run stutters here for ever.");
    } else if (loop) {
      banner = el("div", { id: "gs-banner", class: "gs-banner gs-bad gs-livelock", "data-kind": "livelock" },
        "Convergence fails — this state is on a livelock: " + conv.explanation + ".");
    } else {
      banner = el("div", { id: "gs-banner", class: "gs-banner gs-ok", "data-kind": "ok" }, "Every invariant holds in this state" +
        (st.converged ? " — the group has converged." : "."));
    }
    const changed = new Set();
    if (prev) {
      const before = new Map(prev.parties.map(([who, b]) => [S(who), b]));
      for (const [who, b] of st.parties) if (before.get(S(who)) !== b) changed.add(S(who));
    }
    const parties = el("div", { class: "gs-parties" });
    for (const [who, belief] of st.parties) {
      parties.append(el("div", { class: "gs-party" + (isCoord(S(who)) ? " gs-coord" : "") + (changed.has(S(who)) ? " gs-changed" : "") },
        el("div", { class: "gs-who" }, S(who)), el("div", { class: "gs-belief" }, S(belief))));
    }
    const steps = el("ol", { id: "gs-steps", class: "gs-steps", start: "1" });
    graph.edges[w.state].forEach((e, k) => {
      const b = el("button", { class: "gs-step" + (e[3] ? "" : " gs-fault"), "data-action": e[2], "data-index": String(k),
        title: k < 9 ? "key " + (k + 1) : "", onclick: () => show(instance, path.concat([k]), true) }, S(e[1]) + (e[3] ? "" : "  (fault)"));
      steps.append(el("li", {}, b));
    });
    if (frontier) steps.append(el("li", { class: "gs-unexplored-note" },
      "Unexplored: more steps lead on from here to states the cut-off graph does not hold."));
    else if (!graph.edges[w.state].length) steps.append(el("li", {}, "No step is enabled: the run stutters here."));
    const hist = el("ol", { id: "gs-history", class: "gs-history", start: "0" });
    hist.append(el("li", {}, "empty group (initial state)"));
    for (const x of w.steps) hist.append(el("li", {}, S(x.edge[1])));
    const lastStep = last ? el("p", { id: "gs-last", class: "gs-last" }, "Last step: " + S(last.edge[1]) +
      (changed.size ? " — changed: " + [...changed].join(", ") + " (highlighted)." : " — no party's view changed.")) : "";
    root.replaceChildren(picker, banner, picture(st, prev, changed), lastStep,
      el("h3", {}, "State " + w.state + (st.status ? " — group " + st.status + ", generation " + st.generation
        : st.generation !== null && st.generation !== undefined ? " — group epoch " + st.generation : "")),
      parties, el("h3", {}, "Enabled steps (click one, or press its number)"), steps, el("h3", {}, "The path so far"), hist,
      counts(), el("p", { class: "gs-note" }, "Keys: 1–9 take a step, ← steps back, → forward again, Home empties the group" +
        (brk ? ", b shows how it breaks." : ".")));
  }

  function counts() {
    const c = graph.check, n = graph.states.length.toLocaleString("en");
    const p = el("p", { id: "gs-counts", class: "gs-note" });
    if (c) {
      p.append("States: ", el("strong", { id: "gs-check-states" }, c.states.toLocaleString("en")),
        ", as ", el("code", {}, c.command), " counts them" + (c.symmetric ? " (members and partitions up to renaming)" : "") +
        (c.complete ? "" : ", search stopped early") + ". This graph keeps members apart: " + n + " states" +
        (graph.truncated ? ", cut off (" + (graph.frontier || []).length + " unexplored)" : "") + ". ");
      const v = c.verdicts.convergence;
      if (v) p.append("Convergence: " + (v.held === true ? "holds" : v.held === false ? "fails" : "not decided") +
        (v.explanation ? " — " + v.explanation : "") + ". ");
    } else {
      p.append(n + " reachable states on this instance" + (graph.truncated ? " (search stopped early)" : "") + ". ");
    }
    p.append("Generations count up to a shift, as the checker counts them. Faults: " + (graph.config.faults.join(", ") || "none") +
      ", budget " + graph.config.budget + ", assignor " + graph.config.assignor + ".");
    return p;
  }

  function selector() {
    const sel = el("select", { id: "gs-instance", "aria-label": "protocol variant and group size",
      onchange: e => show(e.target.value, [], true) });
    if (!instance) sel.append(el("option", { value: "", selected: "" }, "— choose a variant —"));
    for (const m of manifest.instances) {
      const o = el("option", { value: m.id }, m.label);
      if (m.id === instance) o.selected = true;
      sel.append(o);
    }
    return el("label", {}, "Variant and group: ", sel);
  }

  // Walk a path one step at a time (each one in the browser's history), so the reader sees it unfold.
  function walkTo(p) {
    if (walking) clearTimeout(walking);
    let n = 0;
    const next = () => {
      walking = null;
      if (n > p.length) return;
      show(instance, p.slice(0, n), n > 0).then(() => { n++; if (n <= p.length) walking = setTimeout(next, 250); });
    };
    next();
  }

  document.addEventListener("keydown", e => {
    if (!graph || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    if (t && (t.tagName === "SELECT" || t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
    const { state } = walk(path);
    if (/^[1-9]$/.test(e.key) && graph.edges[state][Number(e.key) - 1]) show(instance, path.concat([Number(e.key) - 1]), true);
    else if (e.key === "ArrowLeft" && path.length) show(instance, path.slice(0, -1), true);
    else if (e.key === "ArrowRight") history.forward();
    else if (e.key === "Home") show(instance, [], true);
    else if (e.key === "b" && breakage()) walkTo(breakage().path);
    else return;
    e.preventDefault();
  });

  async function start() {
    const r = await fetch(base + "graphs/manifest.json");
    manifest = await r.json();
    await fromHash();
  }
  async function fromHash() {
    const h = parseHash();
    if (h.instance && !manifest.instances.some(m => m.id === h.instance)) {
      // a shared link naming a variant this site does not have: say so, open nothing else
      graph = null; instance = null;
      root.replaceChildren(el("div", { class: "gs-picker" }, selector()),
        el("div", { id: "gs-banner", class: "gs-banner gs-bad gs-error", "data-kind": "error" },
          "This link names a variant the explorer does not have: “" + h.instance + "”. Choose one above."));
      return;
    }
    await show(h.instance || manifest.instances[0].id, h.path, false);
  }
  let resizing = null, drawnWidth = window.innerWidth;
  window.addEventListener("resize", () => {  // redraw the picture at a new width (a new height changes nothing)
    if (window.innerWidth === drawnWidth) return;
    clearTimeout(resizing);
    resizing = setTimeout(() => { drawnWidth = window.innerWidth; if (graph) render(walk(path)); }, 150);
  });
  window.addEventListener("popstate", () => {
    if (!manifest) return;
    if (walking) { clearTimeout(walking); walking = null; }
    fromHash().catch(err => { root.replaceChildren(el("div", { class: "gs-banner gs-bad" }, String(err))); });
  });
  start().catch(err => { root.replaceChildren(el("div", { class: "gs-banner gs-bad" }, String(err))); });
})();
