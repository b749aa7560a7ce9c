// The live page: forward and backward passes over the program's instructions, as the engine
// runs them, and the drawing's labels, fills and highlights kept in step with them.
"use strict";

const STARTED = performance.now();
const D = JSON.parse(document.getElementById("nanograd-data").textContent);
const fromJson = (v) => (typeof v === "number" ? v : v === "nan" ? NaN : v === "inf" ? Infinity : -Infinity);

// Numbers written as Python writes them, so the page reads like the command line.
function repr(x) {
  if (x !== x) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa, exponent] = x.toExponential().split("e"); // the shortest round trip
  const e = Number(exponent);
  const sign = x < 0 ? "-" : "";
  const digits = mantissa.replace("-", "").replace(".", "");
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    return sign + m + "e" + (e < 0 ? "-" : "+") + String(Math.abs(e)).padStart(2, "0");
  }
  if (e < 0) return sign + "0." + "0".repeat(-e - 1) + digits;
  if (digits.length <= e + 1) return sign + digits + "0".repeat(e + 1 - digits.length) + ".0";
  return sign + digits.slice(0, e + 1) + "." + digits.slice(e + 1);
}

// Python's f"{x:.{d}f}" and f"{x:.{d}e}": JavaScript rounds exact ties up, Python to even.
function pyFormat(x, d, kind) {
  const a = Math.abs(x);
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const write = kind === "f" ? (n) => a.toFixed(n) : (n) => a.toExponential(n);
  let s = write(d);
  if (write(d + 1).split("e")[0].endsWith("5") && Number(s.split("e")[0].slice(-1)) % 2 === 1) {
    const long = write(Math.min(100, d + 90));
    const [m, e] = long.split("e");
    const point = m.indexOf(".");
    if (/^50*$/.test(m.slice(point + d + 1))) {
      s = m.slice(0, point + d + 1) + (e === undefined ? "" : "e" + e); // the even neighbour
    }
  }
  if (kind === "e") s = s.replace(/e([+-])(\d)$/, "e$10$2");
  return sign + s;
}

// What the drawing shows (render/graph.py's `human`): 4 decimals, or exponent form.
function human(x) {
  if (!Number.isFinite(x)) return repr(x);
  if (x === 0) return "0.0000"; // -0 too: a picture shows no signed zero
  const a = Math.abs(x);
  return 1e-3 <= a && a < 1e6 ? pyFormat(x, 4, "f") : pyFormat(x, 4, "e");
}

// The fill colours, as render/graph.py's `gradient_scale` and `gradient_colour`.
const COLOURS = D.colours;
function gradientScale(grads) {
  const sizes = grads.filter((g) => g !== 0 && Number.isFinite(g)).map(Math.abs);
  if (sizes.length === 0) return [];
  const high = Math.max(...sizes);
  const low = Math.max(Math.min(...sizes), high / 10 ** COLOURS.orders);
  const steps = COLOURS.scale.length;
  return Array.from({ length: steps + 1 }, (_, k) => low * (high / low) ** (k / steps));
}
function gradientColour(grad, scale) {
  if (!Number.isFinite(grad)) return COLOURS.nonFinite;
  if (grad === 0 || scale.length === 0) return COLOURS.zero;
  const low = scale[0], high = scale[scale.length - 1], n = COLOURS.scale.length;
  if (high === low) return COLOURS.scale[n - 1];
  const step = Math.floor((n * Math.log(Math.abs(grad) / low)) / Math.log(high / low));
  return COLOURS.scale[Math.min(Math.max(step, 0), n - 1)];
}

// --- the program -----------------------------------------------------------------------------

const N = D.code.length;
const data = new Float64Array(N);
const grad = new Float64Array(N);
const locals = new Array(N);
const point = D.point.map(fromJson);
const ops = D.code.map((c) => (c[0] === "apply" ? OPS[c[1]] : null));
const argsOf = D.code.map((c) => (c[0] === "apply" ? c[2] : []));
const slotOf = new Map(D.slots.map((slot, k) => [slot, k]));
// A where passes its gradient on to the argument it takes only, and a node below a branch not
// taken passes nothing on (live[i] is 0), as Value.backward has it.
const selects = D.code.map((c) => c[0] === "apply" && c[1] === "where");
const live = new Uint8Array(N);
const passes = (p, k) => live[p] === 1 && (!selects[p] || locals[p][k] === 1);

// The forward pass in instruction order, then the backward pass in the engine's order: each
// node's gradient times its local derivatives added to its operands', as Value.backward does.
function compute() {
  for (let i = 0; i < N; i++) {
    const c = D.code[i];
    if (c[0] === "input") data[i] = point[slotOf.get(i)];
    else if (c[0] === "const") data[i] = fromJson(c[1]);
    else data[i] = ops[i].f(...argsOf[i].map((a) => data[a]));
  }
  grad.fill(0);
  live.fill(0);
  grad[D.result] = 1;
  live[D.result] = 1;
  for (const i of D.order) {
    if (ops[i] === null) continue;
    const args = argsOf[i];
    const local = ops[i].d(...args.map((a) => data[a]), data[i]);
    locals[i] = local;
    const g = grad[i];
    for (let k = 0; k < args.length; k++) {
      if (!passes(i, k)) continue;
      grad[args[k]] += selects[i] ? g : local[k] * g;
      live[args[k]] = 1;
    }
  }
}

// --- the drawing -----------------------------------------------------------------------------
// The drawing comes in tiles (render/_live_svg.py): those in view are put in before the first
// picture, the others right after it, nearest first, a few at a time, so that the page shows
// at once and stays responsive. Until a node's tile is in, it is left out of every update: its
// tile's markup is drawn at the point given, and is brought up to date as it goes in.

const svg = document.querySelector("#graph svg");
const graph = document.getElementById("graph");
const tileGroups = svg.querySelectorAll("g.tile");
const tileIn = new Uint8Array(D.tiles.length);
let tilesLeft = D.tiles.length;
const nodes = new Array(N).fill(null); // per drawn instruction, once its tile is in
let version = 0; // redraws since the drawing was made; 0: the numbers are the drawing's own
let scale = [];

const [familyOfGraph, sizeOfGraph] = ["font-family", "font-size"].map((a) => svg.querySelector("g.graph").getAttribute(a));
const canvas = document.createElement("canvas").getContext("2d");
function width(text, content) {
  const font = `${text.getAttribute("font-size") || sizeOfGraph}px ${text.getAttribute("font-family") || familyOfGraph}`;
  if (canvas.font !== font) canvas.font = font;
  return canvas.measureText(content).width;
}
const field = (text) => ({ text, shown: text.textContent, room: null, squeezed: false });

function insertTile(k) {
  if (tileIn[k]) return;
  tileIn[k] = 1;
  tileGroups[k].innerHTML = D.tiles[k];
  D.tiles[k] = null; // its text is not needed again
  for (const g of tileGroups[k].querySelectorAll("g.value, g.operation")) {
    const i = Number(g.dataset.instruction);
    const node = nodes[i] || (nodes[i] = { value: null, op: null, data: null, grad: null, fill: null });
    if (g.classList.contains("operation")) node.op = g;
    else {
      // render/_live_svg.py puts a value's shape first and its data and grad texts last
      node.value = g;
      node.fill = g.firstElementChild;
      node.colour = node.fill.getAttribute("fill");
      node.label = g.getAttribute("aria-label");
      node.grad = field(g.lastElementChild);
      node.data = field(g.lastElementChild.previousElementSibling);
    }
    if (version > 0 && node.value) {
      if (g === node.value) drawNode(i);
      else g.setAttribute("aria-label", node.label); // its value is up to date already
    }
  }
  if (--tilesLeft === 0) finished();
}

// The part of the drawing in view (and `margin` pixels around it), in the SVG's units: its
// centre, and a test for a tile's box.
function view(margin) {
  const ctm = svg.getScreenCTM();
  if (!ctm) return { centre: { x: 0, y: 0 }, sees: () => true };
  const r = graph.getBoundingClientRect();
  const inverse = ctm.inverse();
  const [a, b] = [
    [Math.max(r.left, 0) - margin, Math.max(r.top, 0) - margin],
    [Math.min(r.right, innerWidth) + margin, Math.min(r.bottom, innerHeight) + margin],
  ].map(([x, y]) => new DOMPoint(x, y).matrixTransform(inverse));
  const [x0, x1, y0, y1] = [Math.min(a.x, b.x), Math.max(a.x, b.x), Math.min(a.y, b.y), Math.max(a.y, b.y)];
  return {
    centre: { x: (x0 + x1) / 2, y: (y0 + y1) / 2 },
    sees: (box) => box[0] <= x1 && box[2] >= x0 && box[1] <= y1 && box[3] >= y0,
  };
}
function insertInView(margin = 100) {
  if (tilesLeft === 0) return null;
  const seen = view(margin);
  D.boxes.forEach((box, k) => { if (!tileIn[k] && seen.sees(box)) insertTile(k); });
  return seen;
}

// `drawn` resolves, with the time, once every tile is in
let finished;
const drawn = new Promise((resolve) => {
  finished = () => {
    graph.removeEventListener("scroll", onScroll);
    resolve(performance.now());
  };
});
const onScroll = () => insertInView();
// The rest, nearest to `centre` first, in slices of a few milliseconds, each a task of its own
// so that input and frames come between them (a message: a timer's is held back 4 ms).
function fillIn(centre) {
  const distance = (box) => Math.hypot(Math.max(box[0] - centre.x, 0, centre.x - box[2]), Math.max(box[1] - centre.y, 0, centre.y - box[3]));
  const queue = D.boxes.map((box, k) => k).filter((k) => !tileIn[k]).sort((j, k) => distance(D.boxes[j]) - distance(D.boxes[k]));
  const channel = new MessageChannel();
  let next = 0;
  channel.port1.onmessage = () => {
    const start = performance.now();
    while (next < queue.length && performance.now() - start < 8) insertTile(queue[next++]);
    if (next < queue.length) channel.port2.postMessage(null);
    else channel.port1.close();
  };
  channel.port2.postMessage(null);
}
function insertAll() {
  for (let k = 0; k < D.tiles.length; k++) insertTile(k);
}

let full = false;
function setField(f, label, x) {
  const text = label + (full ? repr(x) : human(x));
  if (f.shown === text) return;
  if (f.room === null) f.room = width(f.text, f.shown) + 6; // the text Graphviz made room for, and padding
  f.shown = text;
  f.text.textContent = text;
  const squeeze = width(f.text, text) > f.room;
  if (squeeze) {
    f.text.setAttribute("textLength", String(f.room));
    f.text.setAttribute("lengthAdjust", "spacingAndGlyphs");
  } else if (f.squeezed) f.text.removeAttribute("textLength");
  f.squeezed = squeeze;
}
function drawNode(i) {
  const node = nodes[i];
  setField(node.data, "data ", data[i]);
  setField(node.grad, "grad ", grad[i]);
  const colour = gradientColour(grad[i], scale);
  if (colour !== node.colour) node.fill.setAttribute("fill", (node.colour = colour));
  const label = `${D.term[i]}: data ${repr(data[i])}, grad ${repr(grad[i])}`;
  if (label !== node.label) {
    node.label = label;
    for (const g of [node.value, node.op]) if (g) g.setAttribute("aria-label", label);
  }
}

const legend = document.getElementById("legend");
const legendShown = !document.getElementById("key").hidden; // not with --no-legend
// The bounds of the fill steps with the fewest significant digits, 3 or more, that tell them
// apart (render/graph.py's legend does the same): not "1 to 1" for gradients near 1.
function legendBounds(bounds) {
  let p = 3;
  while (p < 17 && new Set(bounds.map((b) => b.toPrecision(p))).size < bounds.length) p++;
  return bounds.map((b) => String(Number(b.toPrecision(p))));
}
function showLegend(grads) {
  const swatch = (style, text) => `<div><span class="swatch" style="${style}"></span>${text}</div>`;
  const rows = [
    swatch(`border:2px solid ${COLOURS.input}`, "input (green border)"),
    swatch(`border:3px solid ${COLOURS.result}`, "result (blue border)"),
  ];
  const n = COLOURS.scale.length;
  if (scale.length && scale[0] === scale[n]) {
    // every finite nonzero |grad| is the same: one step, the darkest, as the fills have it
    rows.push(`<div>fill: |grad|, the same at every node where it is finite and nonzero</div>`,
      swatch(`background:${COLOURS.scale[n - 1]}`, `|grad| = ${legendBounds([scale[0]])[0]}`));
  } else if (scale.length) {
    rows.push(`<div>fill: |grad| on a log scale, light to dark, from the smallest nonzero |grad| to the largest</div>`);
    const shown = legendBounds(scale.slice(0, n + 1)); // the top step runs to the largest |grad|
    for (let k = n - 1; k >= 0; k--) {
      const text = `${shown[k]} to ${shown[k + 1]}`;
      rows.push(swatch(`background:${COLOURS.scale[k]}`, text));
    }
  }
  if (grads.some((g) => g === 0)) rows.push(swatch(`background:${COLOURS.zero}`, "0"));
  if (grads.some((g) => !Number.isFinite(g))) rows.push(swatch(`background:${COLOURS.nonFinite}`, "nan or inf"));
  legend.innerHTML = rows.join("");
}

const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
// Text for the tip and the panel, which may break a line between numbers but not inside one,
// and in an expression after a product or quotient too, so that a long formula folds
const num = (x) => `<span class="num">${repr(x)}</span>`;
const NUMBERS = /(?<![\w.])\d+(?:\.\d*)?(?:e[+-]?\d+)?/gi;
const words = (s) => escapeHtml(s).replace(/\*\*|[*/]/g, "$&<wbr>").replace(NUMBERS, '<span class="num">$&</span>');
const summary = document.getElementById("summary");
function showSummary() {
  const rows = [["value", data[D.result]]];
  D.inputs.forEach((name, k) => rows.push([`∂/∂${name}`, grad[D.slots[k]]]));
  summary.innerHTML = rows
    .map(([label, x]) => `<tr><th scope="row" class="mono">${escapeHtml(label)}</th><td class="num">${repr(x)}</td></tr>`)
    .join("");
}

// Everything the numbers change; `graphToo` false leaves the drawing as it was made.
function draw(graphToo = true) {
  const grads = D.drawn.map((i) => grad[i]);
  scale = gradientScale(grads);
  if (graphToo) {
    version++;
    for (const i of D.drawn) if (nodes[i] && nodes[i].value) drawNode(i);
  }
  if (legendShown) showLegend(grads);
  showSummary();
  showPanel();
}

function update() {
  compute();
  draw();
}

// --- the words: what each node is and what happens there, as `nanograd explain` writes it -----

function contributions(a) {
  const terms = [];
  for (const p of D.order) {
    argsOf[p].forEach((arg, k) => {
      if (arg === a && D.varying[a] && passes(p, k)) terms.push(selects[p] ? grad[p] : locals[p][k] * grad[p]);
    });
  }
  return terms;
}
function writtenSum(terms) {
  // a sign stays with its number (a no-break space)
  return terms.map((t, k) => (k === 0 ? num(t) : t < 0 || Object.is(t, -0) ? `-\u00a0${num(-t)}` : `+\u00a0${num(t)}`)).join(" ");
}
// Per argument: the local derivative's formula, its value, and the product with the node's
// gradient. In the tip, a row each; in the side panel, too narrow for two numbers of 17
// digits side by side, a block of four labelled lines each.
function derivativeRows(i, stacked = false) {
  const formulas = D.formulas[i] || [];
  const cells = [];
  argsOf[i].forEach((a, k) => {
    if (!D.varying[a] || formulas.length === 0) return;
    const local = locals[i][k];
    cells.push([
      `<td class="mono">${D.term[a] == null ? num(data[a]) : words(D.term[a])}</td>`,
      `<td class="mono">${words(formulas[cells.length] ?? "")}</td>`,
      `<td class="num">${repr(local)}</td>`,
      `<td class="num">${repr(passes(i, k) ? local * grad[i] : 0)}</td>`,
    ]);
  });
  if (cells.length === 0) return "";
  const names = ["argument", "local", "value", "product"];
  if (stacked) {
    const blocks = cells.map((row) => `<tbody>${row.map((cell, c) => `<tr><th scope="row">${names[c]}</th>${cell}</tr>`).join("")}</tbody>`);
    return `<table class="derivatives stacked">${blocks.join("")}</table>`;
  }
  const head = `<tr>${names.map((name) => `<th>${name}</th>`).join("")}</tr>`;
  return `<table class="derivatives">${head}${cells.map((row) => `<tr>${row.join("")}</tr>`).join("")}</table>`;
}
function gradientText(i) {
  const terms = contributions(i);
  if (i === D.result) return num(grad[i]) + " (the result)";
  return terms.length < 2 ? num(grad[i]) : `${writtenSum(terms)} = ${num(grad[i])}`;
}

const steps = [...D.forward.map((i) => ["forward", i]), ...D.backward.map((i) => ["backward", i])];
let at = -1;
const panel = document.getElementById("panel");

function showPanel() {
  if (at < 0) {
    const s = steps.length === 1 ? "" : "s";
    panel.innerHTML = `<p class="hint">${steps.length} step${s}: ${D.forward.length} forward, ${D.backward.length} backward.</p>`;
    return;
  }
  const [pass, i] = steps[at];
  const k = pass === "forward" ? at + 1 : at + 1 - D.forward.length;
  const total = pass === "forward" ? D.forward.length : D.backward.length;
  const heading = `<p><strong>${pass} pass</strong>, step ${k} of ${total}</p>`;
  if (pass === "forward") {
    panel.innerHTML = heading + `<p class="mono step-node">${words(D.text[i])}</p>` +
      `<p>value <span class="mono num step-value">${repr(data[i])}</span></p>`;
  } else {
    panel.innerHTML = heading + `<p class="mono step-node">${words(D.term[i])}</p>` +
      `<p>gradient <span class="mono step-gradient">${gradientText(i)}</span></p>` + derivativeRows(i, true);
  }
}

// The current node's edges, drawn over the drawing's one path of edges (render/_live_svg.py
// puts each edge's line and arrowhead in it as one subpath each, in the order of D.edges).
const currentEdges = svg.querySelector("g.current-edges");
let edgeShapes = null;
function edgesOf(i) {
  if (edgeShapes === null) {
    edgeShapes = ["path.edges", "path.arrowheads"].map((s) => {
      const path = svg.querySelector(s);
      return path ? path.getAttribute("d").split(/(?=M)/) : [];
    });
  }
  const [lines, heads] = edgeShapes;
  return (D.edges[i] || []).map((k) => `<path class="line" d="${lines[k]}"/><path class="head" d="${heads[k]}"/>`).join("");
}
let marked = [];
function mark(i, cls) {
  const node = nodes[i];
  if (!node) return;
  for (const g of [node.value, node.op]) {
    if (g) { g.classList.add(cls); marked.push([g, cls]); }
  }
}
function go(to) {
  insertAll(); // stepping shows the whole graph's order: every node must be there
  at = Math.max(-1, Math.min(steps.length - 1, to));
  for (const [g, cls] of marked) g.classList.remove(cls);
  marked = [];
  currentEdges.innerHTML = "";
  graph.classList.toggle("stepping", at >= 0);
  if (at >= 0) {
    const [pass, i] = steps[at];
    if (pass === "forward") for (const j of D.forward.slice(at + 1)) mark(j, "future");
    mark(i, "current");
    currentEdges.innerHTML = edgesOf(i);
    const g = nodes[i] && nodes[i].value;
    if (g && g.scrollIntoView) g.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
  showPanel();
}
document.getElementById("next").addEventListener("click", () => go(at + 1));
document.getElementById("back").addEventListener("click", () => go(at - 1));
document.getElementById("reset").addEventListener("click", () => go(-1));
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return; // the browser's (Alt+← is back)
  const t = event.target;
  // the number boxes keep the keys that move in their text, the sliders those that move them
  const own = t instanceof HTMLTextAreaElement || (t instanceof HTMLInputElement && t.type !== "checkbox");
  const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
  if (event.key === "Escape") go(-1);
  else if (own) return;
  else if (event.key in moves) go(at + moves[event.key]);
  else if (event.key === "Home") go(-1);
  else if (event.key === "End") go(steps.length - 1);
  else return;
  event.preventDefault();
});

// --- hover and focus: a node's expression, numbers and local derivatives ----------------------

const tip = document.getElementById("tip");
function showTip(g, x, y) {
  const i = Number(g.dataset.instruction);
  const expression = D.text[i] == null ? num(data[i]) : words(D.text[i]);
  tip.innerHTML = `<p class="mono tip-expression"><strong>${expression}</strong></p>` +
    `<p>data <span class="mono num tip-data">${repr(data[i])}</span></p>` +
    (D.varying[i] ? `<p>grad <span class="mono num tip-grad">${repr(grad[i])}</span></p>` : "") +
    (ops[i] ? derivativeRows(i) : "");
  tip.hidden = false;
  const room = tip.getBoundingClientRect();
  tip.style.left = `${Math.min(x + 12, innerWidth - room.width - 4)}px`;
  tip.style.top = `${Math.min(y + 12, innerHeight - room.height - 4)}px`;
}
// one listener for every node, those of tiles still to come too
const nodeAt = (target) => (target instanceof Element ? target.closest("g.node[data-instruction]") : null);
svg.addEventListener("mousemove", (e) => {
  const g = nodeAt(e.target);
  if (g) showTip(g, e.clientX, e.clientY);
  else tip.hidden = true;
});
svg.addEventListener("mouseleave", () => { tip.hidden = true; });
svg.addEventListener("focusin", (e) => {
  const g = nodeAt(e.target);
  if (g) { const r = g.getBoundingClientRect(); showTip(g, r.right, r.top); }
});
svg.addEventListener("focusout", () => { tip.hidden = true; });

// --- the inputs --------------------------------------------------------------------------------

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
function parse(text) {
  const s = text.trim().toLowerCase();
  if (s === "nan" || s === "+nan" || s === "-nan") return NaN;
  if (/^[+]?inf(inity)?$/.test(s)) return Infinity;
  if (/^-inf(inity)?$/.test(s)) return -Infinity;
  if (!NUMBER.test(s)) return null;
  const x = Number(s);
  return Number.isFinite(x) ? x : null; // 1e999 overflows: bad input, as on the command line
}
// The range a slider starts with for a value x: -3|x| to 3|x| (-3 to 3 about 0, nan or inf),
// out to a whole number of its steps, so that the slider's values are round ones (-7.04 to
// 7.04 by 0.01 for 2.3456, not -7.0368 + k*0.01), in 12 digits (0.9, not 0.8999999999999999),
// within the floats (3e308 is not one).
function startingRange(x) {
  const within = (y) => Math.min(Number(y.toPrecision(12)), Number.MAX_VALUE);
  const half = Number.isFinite(x) && x !== 0 ? within(3 * Math.abs(x)) : 3;
  const step = niceStep(-half, half);
  const whole = within(Math.ceil(half / step) * step);
  return [-whole, whole];
}
// A slider's step: a power of ten near a thousandth of its range, and a float (5e-324 at
// least, where that underflows). Halves first: the span of ends near the float limit overflows.
function niceStep(low, high) {
  return Math.max(10 ** Math.floor(Math.log10((high / 2 - low / 2) / 500)), Number.MIN_VALUE);
}

const inputsBox = document.getElementById("inputs");
if (D.inputs.length === 0) {
  inputsBox.innerHTML = `<p class="hint">none: the source reads no input, so there is nothing to vary, and no backward pass to step through</p>`;
}
// Each input's slider, value box and range agree at all times: a value outside the range, or
// too small for it (under a step, where the slider cannot tell it from 0), gives the slider
// the range it would start with; a range typed without the value moves the value into it.
D.inputs.forEach((name, k) => {
  const row = document.createElement("div");
  row.className = "input";
  row.innerHTML = `<label for="slider-${k}">${escapeHtml(name)}</label>` +
    `<input type="range" id="slider-${k}">` +
    `<span class="boxes"><input type="text" id="value-${k}" aria-label="${escapeHtml(name)}" spellcheck="false">` +
    `from <input type="text" id="low-${k}" aria-label="${escapeHtml(name)} slider from" spellcheck="false">` +
    `to <input type="text" id="high-${k}" aria-label="${escapeHtml(name)} slider to" spellcheck="false"></span>`;
  inputsBox.append(row);
  const [slider, box, lowBox, highBox] = ["slider", "value", "low", "high"].map((p) => document.getElementById(`${p}-${k}`));
  let low, high, step;
  function setRange(a, b) {
    [low, high, step] = [a, b, niceStep(a, b)];
    slider.min = String(low);
    slider.max = String(high);
    slider.step = String(step);
    lowBox.value = repr(low);
    highBox.value = repr(high);
    lowBox.removeAttribute("aria-invalid");
    highBox.removeAttribute("aria-invalid");
  }
  // the thumb at the value; nan in the middle and ±inf at an end, faded: not on the slider
  function showValue() {
    const x = point[k];
    slider.value = String(x === x ? Math.min(Math.max(x, low), high) : low / 2 + high / 2);
    slider.classList.toggle("off", !Number.isFinite(x));
    slider.setAttribute("aria-valuetext", repr(x));
  }
  function showBox() {
    box.value = repr(point[k]);
    box.removeAttribute("aria-invalid");
  }
  setRange(...startingRange(point[k]));
  showValue();
  showBox();
  slider.addEventListener("input", () => {
    point[k] = Number(slider.value);
    showBox();
    slider.classList.remove("off");
    slider.setAttribute("aria-valuetext", repr(point[k]));
    update();
  });
  box.addEventListener("input", () => {
    const x = parse(box.value);
    box.setAttribute("aria-invalid", String(x === null));
    if (x === null) return;
    point[k] = x;
    if (Number.isFinite(x) && (x < low || x > high || (x !== 0 && Math.abs(x) < step))) setRange(...startingRange(x));
    showValue();
    update();
  });
  box.addEventListener("change", showBox); // what was typed, as the page writes it; bad text goes
  for (const edge of [lowBox, highBox]) {
    edge.addEventListener("change", () => {
      const a = parse(lowBox.value), b = parse(highBox.value);
      const ok = a !== null && b !== null && Number.isFinite(a) && Number.isFinite(b) && a < b;
      if (!ok) {
        lowBox.setAttribute("aria-invalid", "true");
        highBox.setAttribute("aria-invalid", "true");
        return;
      }
      setRange(a, b);
      const x = point[k];
      if (Number.isFinite(x) && (x < a || x > b)) {
        point[k] = Math.min(Math.max(x, a), b);
        showBox();
        showValue();
        update();
      } else showValue();
    });
  }
});

document.getElementById("full").addEventListener("change", (event) => {
  full = event.target.checked;
  draw();
});

// Small graphs fit the window; big ones are shown at full size, to scroll around. Fitting
// never shrinks the smallest text below READABLE_PX pixels: past that, the graph stays at the
// smallest size that can be read, and the window scrolls (or is dragged) around it.
const READABLE_PX = 10;
const box = svg.viewBox.baseVal;
const natural = { width: svg.width.baseVal.value, height: svg.height.baseVal.value }; // px
// (D.font: the smallest font in the drawing, in the SVG's units)
const readable = READABLE_PX / ((D.font * natural.width) / (box.width || natural.width));
function fit() {
  if (!fitBox.checked) {
    svg.style.width = svg.style.height = "";
    return;
  }
  const style = getComputedStyle(graph);
  const room = {
    width: graph.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
    height: graph.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom),
  };
  const scale = Math.max(Math.min(room.width / natural.width, room.height / natural.height), readable);
  svg.style.width = `${natural.width * scale}px`;
  svg.style.height = `${natural.height * scale}px`;
}
const fitBox = document.getElementById("fit");
fitBox.checked = D.drawn.length <= 60;
fit();
fitBox.addEventListener("change", () => {
  fit();
  insertInView();
});
addEventListener("resize", () => {
  fit();
  insertInView();
});
// Drag the graph to pan it, where it is larger than the window.
let dragged = null;
graph.addEventListener("pointerdown", (event) => {
  if (event.button !== 0 || event.pointerType !== "mouse") return;
  dragged = { x: event.clientX, y: event.clientY, left: graph.scrollLeft, top: graph.scrollTop };
});
addEventListener("pointermove", (event) => {
  if (!dragged) return;
  graph.scrollLeft = dragged.left - (event.clientX - dragged.x);
  graph.scrollTop = dragged.top - (event.clientY - dragged.y);
  graph.classList.add("panning");
});
addEventListener("pointerup", () => {
  dragged = null;
  graph.classList.remove("panning");
});

compute();
draw(false); // the drawing already shows these numbers: Graphviz drew it at this point
const firstView = insertInView(0);
if (tilesLeft > 0) {
  graph.addEventListener("scroll", onScroll, { passive: true });
  // after the first picture is painted
  requestAnimationFrame(() => setTimeout(() => fillIn(firstView.centre), 0));
} else if (D.tiles.length === 0) finished();
window.nanograd = {
  started: STARTED, data, grad, point, steps, go, repr, human, gradientScale, gradientColour, parse,
  drawn, ready: performance.now(), READABLE_PX,
};
