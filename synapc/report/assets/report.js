// synapc report: draws the embedded report document (#report-data) as SVG.
// No external resources; every text from the package is escaped before it is drawn.
"use strict";
(function () {
  const R = JSON.parse(document.getElementById("report-data").textContent);
  const layers = R.layers;
  const ENGINE = { NN: "#4c7bd9", TP: "#2aa198", PPU: "#8e5cc4", CPU: "#e08a2e", GPU: "#3c9a4b" };
  const DELEGATE = { npu: "#1b3f8f", gpu: "#1f6b2c", cpu: "#9a5410" };
  const SVGNS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const esc = (v) => String(v).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const engineColor = (e) => ENGINE[e] || "#8a94a6";
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + "\u2026" : s);
  const shape = (t) => (t.shape.length ? t.shape.join("x") : "scalar") + " " + t.type;
  function bytes(n) {
    if (n < 1024) return n + " B";
    if (n < 1048576) return (n / 1024).toFixed(1) + " KiB";
    return (n / 1048576).toFixed(2) + " MiB";
  }
  const us = (t) => (t >= 1000 ? (t / 1000).toFixed(2) + " ms" : t.toFixed(1) + " \u00b5s");
  const sqnrText = (s) => (s === null ? "not measured" : s === "inf" ? "\u221e (lossless)" : s.toFixed(1) + " dB");

  // ---- consumers, worst layers ------------------------------------------------------
  const consumers = layers.map(() => []);
  R.edges.forEach((e, i) => { if (e.from[0] >= 0) consumers[e.from[0]].push(i); });
  const incoming = layers.map(() => []);
  R.edges.forEach((e, i) => { if (typeof e.to === "number") incoming[e.to].push(i); });
  const measured = layers.map((l, k) => [l.sqnr_db, k]).filter(([s]) => typeof s === "number");
  measured.sort((a, b) => a[0] - b[0]);
  const worst = new Set(measured.slice(0, Math.min(5, measured.length)).map(([, k]) => k));

  // ---- summary ---------------------------------------------------------------------
  function summary() {
    const S = R.summary;
    const total = layers.reduce((a, l) => a + l.time_us, 0);
    const weights = S.subgraphs.reduce((a, s) => a + s.weight_bytes, 0);
    const arena = R.plans.reduce((a, p) => a + p.figures.arena, 0);
    const sram = R.plans.reduce((a, p) => Math.max(a, p.figures.sram), 0);
    const cards = [
      ["target", S.target], ["layers", layers.length], ["subgraphs", S.subgraphs.map((s) => s.delegate).join(" \u2192 ")],
      ["estimated time", us(total)], ["weights", bytes(weights)], ["arena (DDR)", bytes(arena)], ["SRAM used", bytes(sram)],
    ];
    if (S.quantized && measured.length) {
      const mean = measured.reduce((a, [s]) => a + s, 0) / measured.length;
      cards.push(["worst layer SQNR", measured[0][0].toFixed(1) + " dB"], ["mean layer SQNR", mean.toFixed(1) + " dB"]);
    }
    let h = '<div class="cards">' + cards.map(([k, v]) => `<div class="card"><span class="muted">${esc(k)}</span><b>${esc(v)}</b></div>`).join("") + "</div>";
    h += `<p class="muted">Source: ${esc(S.source.model || "?")} (sha256 ${esc((S.source.sha256 || "").slice(0, 16))}\u2026), converted by synapc ${esc(S.source.synapc || "?")}; package ${esc(S.package)}, ${bytes(S.package_bytes)}.</p>`;
    const port = (p) => `<tr><td>${esc(p.name)}</td><td>${esc(p.shape.join("x") || "scalar")}</td><td>${esc(p.type)}</td><td>${esc(p.layout)}</td><td>${esc(p.format || "-")}</td><td>${p.means ? esc(p.means.join(", ")) : "-"}</td><td>${p.scale === null ? "-" : esc(p.scale)}</td></tr>`;
    const head = "<tr><th>name</th><th>shape</th><th>type</th><th>layout</th><th>format</th><th>means</th><th>scale</th></tr>";
    h += `<h3>Inputs</h3><table>${head}${S.inputs.map(port).join("")}</table>`;
    h += `<h3>Outputs</h3><table>${head}${S.outputs.map(port).join("")}</table>`;
    if (S.preprocessing.length) {
      h += "<h3>Preprocessing</h3><table><tr><th>input</th><th>settings</th></tr>";
      for (const p of S.preprocessing) {
        const rest = Object.entries(p).filter(([k]) => k !== "inputs").map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
        h += `<tr><td>${esc((p.inputs || []).join(", "))}</td><td>${esc(rest)}</td></tr>`;
      }
      h += "</table>";
    }
    h += "<h3>Subgraphs</h3><table><tr><th>#</th><th>delegate</th><th class=num>layers</th><th class=num>weights</th><th class=num>est. time</th><th class=num>arena</th><th class=num>lower bound</th></tr>";
    S.subgraphs.forEach((s, k) => {
      const t = layers.filter((l) => l.subgraph === k).reduce((a, l) => a + l.time_us, 0);
      const p = R.plans.find((q) => q.subgraph === k);
      h += `<tr><td>${k}</td><td>${esc(s.delegate)}</td><td class=num>${s.layers}</td><td class=num>${bytes(s.weight_bytes)}</td><td class=num>${us(t)}</td><td class=num>${p ? bytes(p.figures.arena) : "-"}</td><td class=num>${p ? bytes(p.figures.lower_bound) : "-"}</td></tr>`;
    });
    $("summary-body").innerHTML = h + "</table>";
  }

  // ---- graph -----------------------------------------------------------------------
  const svg = $("graph"), view = $("viewport");
  const NW = 180, NH = 44, PW = 150, PH = 30;
  function drawGraph() {
    const parts = [];
    for (const c of R.clusters) {
      const [x, y, w, h] = c.box, col = DELEGATE[c.delegate] || "#666";
      parts.push(`<rect class="cluster" x="${x}" y="${y}" width="${w}" height="${h}" stroke="${col}"/><text class="cluster-label" x="${x + 8}" y="${y + 16}" fill="${col}">subgraph ${c.subgraph} \u00b7 ${esc(c.delegate.toUpperCase())}</text>`);
    }
    R.edges.forEach((e, i) => {
      parts.push(`<path class="edge" id="e${i}" d="${e.path}" marker-end="url(#arrow)"/><text class="elabel" x="${e.mid[0] + 4}" y="${e.mid[1]}">${esc(e.label)}</text>`);
    });
    const ports = (list, kind) => list.forEach((p, k) => {
      parts.push(`<g class="port" transform="translate(${p.x - PW / 2},${p.y - PH / 2})"><rect width="${PW}" height="${PH}"/><text x="${PW / 2}" y="19" text-anchor="middle">${esc(kind + ": " + cut(p.name, 18))}</text></g>`);
    });
    ports(R.summary.inputs, "input");
    ports(R.summary.outputs, "output");
    layers.forEach((l, k) => {
      const sub = `${l.type} \u00b7 ${l.engine} \u00b7 ${us(l.time_us)}` + (typeof l.sqnr_db === "number" ? ` \u00b7 ${l.sqnr_db.toFixed(1)} dB` : "");
      parts.push(`<g class="node${worst.has(k) ? " worst" : ""}" data-layer="${k}" transform="translate(${l.x - NW / 2},${l.y - NH / 2})"><rect width="${NW}" height="${NH}" fill="${engineColor(l.engine)}" stroke="${DELEGATE[l.delegate] || "#333"}"/><text x="8" y="18">${esc(cut(l.name, 27))}</text><text class="sub" x="8" y="34">${esc(cut(sub, 34))}</text><title>${esc(l.name)}</title></g>`);
    });
    view.innerHTML = parts.join("");
  }
  let S = 1, TX = 0, TY = 0;
  function apply() {
    view.setAttribute("transform", `translate(${TX},${TY}) scale(${S})`);
    svg.classList.toggle("far", S < 0.5);
  }
  function fit() {
    const W = svg.clientWidth, H = svg.clientHeight, [w, h] = R.size;
    S = Math.min(W / (w + 40), H / (h + 40), 1.5);
    if (S < 0.35) S = Math.min(0.8, W / (w + 40));
    TX = (W - w * S) / 2; TY = Math.max(20, (H - h * S) / 2);
    if (h * S > H) TY = 20;
    apply();
  }
  function zoomAt(f, cx, cy) {
    const s2 = Math.min(4, Math.max(0.02, S * f));
    TX = cx - (cx - TX) * (s2 / S); TY = cy - (cy - TY) * (s2 / S); S = s2; apply();
  }
  function center(k) {
    const l = layers[k], W = svg.clientWidth, H = svg.clientHeight;
    if (S < 0.6) S = 0.9;
    TX = W / 2 - l.x * S; TY = H / 2 - l.y * S; apply();
  }
  let drag = null, moved = false;
  svg.addEventListener("pointerdown", (e) => { drag = [e.clientX, e.clientY, TX, TY]; moved = false; });
  svg.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag[0], dy = e.clientY - drag[1];
    if (!moved && Math.abs(dx) + Math.abs(dy) > 4) { moved = true; svg.setPointerCapture(e.pointerId); svg.classList.add("dragging"); }
    if (moved) { TX = drag[2] + dx; TY = drag[3] + dy; apply(); }
  });
  const stop = () => { drag = null; svg.classList.remove("dragging"); };
  svg.addEventListener("pointerup", stop);
  svg.addEventListener("pointercancel", stop);
  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  svg.addEventListener("click", (e) => {
    if (moved) return;
    const g = e.target.closest(".node");
    if (g) select(+g.dataset.layer, false);
  });
  $("zoom-in").onclick = () => zoomAt(1.25, svg.clientWidth / 2, svg.clientHeight / 2);
  $("zoom-out").onclick = () => zoomAt(0.8, svg.clientWidth / 2, svg.clientHeight / 2);
  $("zoom-fit").onclick = fit;
  $("find").addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    const q = e.target.value.toLowerCase();
    const k = layers.findIndex((l) => l.name.toLowerCase().includes(q) || l.sources.some((s) => s.toLowerCase().includes(q)));
    if (k >= 0) select(k, true);
  });

  let selected = -1;
  function nodeOf(k) { return view.querySelector(`.node[data-layer="${k}"]`); }
  function select(k, centre) {
    if (selected >= 0) {
      nodeOf(selected).classList.remove("selected");
      view.querySelectorAll(".edge.hot").forEach((p) => p.classList.remove("hot"));
    }
    selected = k;
    nodeOf(k).classList.add("selected");
    for (const i of incoming[k].concat(consumers[k])) $("e" + i).classList.add("hot");
    if (centre) center(k);
    const l = layers[k];
    const from = (ref) => (ref[0] < 0 ? `model input ${esc(R.summary.inputs[ref[1]].name)}` : `<a href="#" data-go="${ref[0]}">${esc(layers[ref[0]].name)}</a>` + (layers[ref[0]].outputs.length > 1 ? ` #${ref[1]}` : ""));
    const list = (items) => (items.length ? items.join("<br>") : "-");
    const users = [...new Set(consumers[k].map((i) => R.edges[i].to).filter((t) => typeof t === "number"))].map((t) => `<a href="#" data-go="${t}">${esc(layers[t].name)}</a>`);
    const outs = R.edges.filter((e) => e.from[0] === k && typeof e.to === "string").map((e) => "model output " + esc(R.summary.outputs[+e.to.slice(1)].name));
    $("details").innerHTML = `<h3>${esc(l.name)}</h3><dl>
      <dt>layer</dt><dd>#${k} \u00b7 ${esc(l.type)}</dd>
      <dt>runs on</dt><dd>subgraph ${l.subgraph} \u00b7 ${esc(l.delegate.toUpperCase())} \u00b7 engine ${esc(l.engine)}</dd>
      <dt>why</dt><dd>${esc(l.support)}</dd>
      <dt>estimated time</dt><dd>${us(l.time_us)}</dd>
      <dt>SQNR vs float</dt><dd>${sqnrText(l.sqnr_db)}${worst.has(k) ? " \u2014 among the worst layers" : ""}</dd>
      <dt>source layers (${l.sources.length})</dt><dd>${list(l.sources.map(esc))}</dd>
      <dt>inputs</dt><dd>${list(l.operands.map((r, j) => from(r) + ": " + esc(R.edges[incoming[k][j]].label)))}</dd>
      <dt>outputs</dt><dd>${list(l.outputs.map((t) => esc(shape(t))))}</dd>
      <dt>weights</dt><dd>${list(l.weights.map((t) => esc(shape(t))))}</dd>
      <dt>used by</dt><dd>${list(users.concat(outs))}</dd></dl>`;
    $("details").dataset.layer = k;
  }
  document.addEventListener("click", (e) => {
    const a = e.target.closest("[data-go]");
    if (!a) return;
    e.preventDefault();
    select(+a.dataset.go, true);
    $("graph-section").scrollIntoView();
  });

  // ---- charts ----------------------------------------------------------------------
  const tip = $("tip");
  const tips = { t: (p, i) => tensorTip(p, i), l: (k) => layerTip(k) };
  document.addEventListener("mousemove", (e) => {
    const el = e.target.closest && e.target.closest("[data-tip]");
    if (!el) { tip.style.display = "none"; return; }
    const [kind, a, b] = el.dataset.tip.split(":");
    tip.textContent = tips[kind](+a, +b);
    tip.style.display = "block";
    tip.style.left = Math.min(e.clientX + 14, innerWidth - 430) + "px";
    tip.style.top = e.clientY + 14 + "px";
  });
  document.addEventListener("click", (e) => {
    const el = e.target.closest && e.target.closest("[data-tip]");
    if (!el) return;
    const [kind, a, b] = el.dataset.tip.split(":");
    const k = kind === "l" ? +a : R.plans[+a].tensors[+b][0];
    select(k, true);
    $("graph-section").scrollIntoView();
  });
  function layerTip(k) {
    const l = layers[k];
    return `${l.name}\n${l.type} on ${l.engine} (${l.delegate}): ${us(l.time_us)}` + (l.sqnr_db !== null ? `\nSQNR ${sqnrText(l.sqnr_db)}` : "");
  }
  function tensorTip(p, i) {
    const [k, j, memory, offset, size, first, last] = R.plans[p].tensors[i];
    const t = layers[k].outputs[j];
    return `${layers[k].name}${layers[k].outputs.length > 1 ? " #" + j : ""}\n${shape(t)}, ${bytes(size)}\n${memory.toUpperCase()} @ ${offset} (0x${offset.toString(16)}), steps ${first}\u2013${last}`;
  }
  function axisY(h, top, max, marks) {
    return marks.map(([v, label]) => `<line class="grid" x1="60" x2="100%" y1="${top + h - (v / max) * h}" y2="${top + h - (v / max) * h}"/><text class="axis" x="56" y="${top + h - (v / max) * h + 3}" text-anchor="end">${esc(label)}</text>`).join("");
  }
  function memoryCharts() {
    const box = $("memory-body");
    if (!R.plans.length) { box.innerHTML = '<p class="muted">The package has no memory plan.</p>'; return; }
    let html = "";
    R.plans.forEach((p, pi) => {
      const f = p.figures, T = p.tensors;
      const steps = Math.max(1, ...T.map((t) => t[6] + 1), layers.filter((l) => l.subgraph === p.subgraph).length);
      const top = Math.max(f.arena + f.sram, f.lower_bound, 1);
      if (!T.length) {
        html += `<h3>Subgraph ${p.subgraph} (${esc(p.delegate.toUpperCase())})</h3><p class="muted">No intermediate tensors: every value is an input, output or weight of the subgraph.</p>`;
        return;
      }
      const H = 230, M = 18, W = Math.max(box.clientWidth - 4, Math.min(6000, steps * 6)), plotW = W - 80;
      const x = (s) => 64 + (s / steps) * plotW, y = (b) => M + H - (b / top) * H * 0.95;
      const max = top / 0.95;
      let g = axisY(H, M, max, f.arena ? [[0, "0"], [f.arena, "arena " + bytes(f.arena)]] : [[0, "0"]]);
      if (f.sram) g += `<rect class="sram-band" x="64" width="${plotW}" y="${y(f.arena + f.sram)}" height="${y(f.arena) - y(f.arena + f.sram)}"/><text class="axis" x="${64 + plotW - 4}" y="${y(f.arena + f.sram) + 12}" text-anchor="end">SRAM (on chip) ${bytes(f.sram)}</text>`;
      T.forEach((t, i) => {
        const [k, , memory, offset, size, first, last] = t;
        const base = memory === "sram" ? f.arena + offset : offset;
        const hgt = Math.max(1, y(base) - y(base + size));
        g += `<rect class="tensor" data-tip="t:${pi}:${i}" x="${x(first)}" y="${y(base + size)}" width="${Math.max(1.5, x(last + 1) - x(first) - 0.5)}" height="${hgt}" fill="${engineColor(layers[k].engine)}" fill-opacity="0.8" stroke="#fff" stroke-width="0.4"/>`;
      });
      g += `<line class="bound" x1="64" x2="${64 + plotW}" y1="${y(f.lower_bound)}" y2="${y(f.lower_bound)}"/><text class="axis" x="70" y="${y(f.lower_bound) - 4}" fill="#d2393c">lower bound ${bytes(f.lower_bound)}</text>`;
      g += `<text class="axis" x="64" y="${M + H + 16}">step 0</text><text class="axis" x="${64 + plotW}" y="${M + H + 16}" text-anchor="end">step ${steps}</text>`;
      html += `<h3>Subgraph ${p.subgraph} (${esc(p.delegate.toUpperCase())}): arena ${bytes(f.arena)}, lower bound ${bytes(f.lower_bound)}, SRAM ${bytes(f.sram)} (${bytes(f.sram_resident)} resident), without reuse ${bytes(f.no_reuse)}</h3>`;
      html += `<div class="chart"><svg class="memory" width="${W}" height="${H + M + 26}" xmlns="${SVGNS}">${g}</svg></div>`;
    });
    box.innerHTML = html;
  }
  function bars(values, colorOf, label, unit) {
    const n = values.length, bw = Math.max(2, Math.min(16, 880 / Math.max(n, 1))), H = 200, M = 14;
    const W = Math.max($("time-body").clientWidth - 4, 70 + n * bw);
    const finite = values.filter((v) => typeof v === "number");
    const max = Math.max(1e-9, ...finite.map((v) => Math.abs(v))) * 1.05;
    let g = axisY(H, M, max, [[0, "0"], [max / 2, (max / 2).toFixed(1) + unit], [max / 1.05, (max / 1.05).toFixed(1) + unit]]);
    values.forEach((v, k) => {
      if (v === null) return;
      const val = v === "inf" ? max : Math.max(0, v), h = Math.max(1, (val / max) * H);
      g += `<rect class="bar" data-tip="l:${k}" x="${64 + k * bw}" y="${M + H - h}" width="${Math.max(1, bw - 1)}" height="${h}" fill="${colorOf(k, v)}"/>`;
    });
    g += `<text class="axis" x="64" y="${M + H + 14}">layer 0</text><text class="axis" x="${64 + n * bw}" y="${M + H + 14}" text-anchor="end">layer ${n - 1}</text>`;
    return `<div class="chart"><svg class="${label}" width="${W}" height="${H + M + 22}" xmlns="${SVGNS}">${g}</svg></div>`;
  }
  function timeChart() {
    const engines = {};
    layers.forEach((l) => { const e = (engines[l.engine] = engines[l.engine] || [0, 0]); e[0]++; e[1] += l.time_us; });
    const total = layers.reduce((a, l) => a + l.time_us, 0) || 1;
    let h = '<div class="legend">' + Object.keys(engines).map((e) => `<span><span class="swatch" style="background:${engineColor(e)}"></span>${esc(e)}</span>`).join("") + "</div>";
    h += bars(layers.map((l) => l.time_us), (k) => engineColor(layers[k].engine), "times", " \u00b5s");
    h += "<table><tr><th>engine</th><th class=num>layers</th><th class=num>estimated time</th><th class=num>share</th></tr>";
    for (const [e, [n, t]] of Object.entries(engines).sort((a, b) => b[1][1] - a[1][1])) h += `<tr><td><span class="swatch" style="background:${engineColor(e)}"></span>${esc(e)}</td><td class=num>${n}</td><td class=num>${us(t)}</td><td class=num>${((100 * t) / total).toFixed(1)} %</td></tr>`;
    const slow = layers.map((l, k) => [l.time_us, k]).sort((a, b) => b[0] - a[0]).slice(0, 5);
    h += "</table><p>Slowest layers: " + slow.map(([t, k]) => `<a href="#" data-go="${k}">${esc(layers[k].name)}</a> (${us(t)})`).join(", ") + "</p>";
    $("time-body").innerHTML = h;
  }
  function sqnrChart() {
    if (!R.summary.quantized) { $("sqnr-section").hidden = true; return; }
    if (!measured.length) { $("sqnr-body").innerHTML = '<p class="muted">No layer output could be compared with the float model.</p>'; return; }
    let h = `<p>SQNR of each layer's output against the float model on the calibration data (higher is better); the ${worst.size} worst layers are red and outlined in the graph.</p>`;
    h += bars(layers.map((l) => l.sqnr_db), (k) => (worst.has(k) ? "#d2393c" : layers[k].sqnr_db === "inf" ? "#b8c2d6" : "#5b7fc7"), "sqnr", " dB");
    h += '<p class="worst-list">Worst layers: ' + measured.slice(0, worst.size).map(([s, k]) => `<a href="#" data-go="${k}">${esc(layers[k].name)}</a> (${s.toFixed(1)} dB)`).join(", ") + "</p>";
    $("sqnr-body").innerHTML = h;
  }
  function legend() {
    const used = [...new Set(layers.map((l) => l.engine))];
    const dels = [...new Set(layers.map((l) => l.delegate))];
    $("graph-legend").innerHTML = used.map((e) => `<span><span class="swatch" style="background:${engineColor(e)}"></span>engine ${esc(e)}</span>`).join("") +
      dels.map((d) => `<span><span class="swatch" style="background:#fff;border:2.5px solid ${DELEGATE[d] || "#333"}"></span>delegate ${esc(d.toUpperCase())} (border)</span>`).join("") +
      (worst.size ? '<span><span class="swatch" style="border:2px dashed #d2393c"></span>worst SQNR</span>' : "");
  }

  summary();
  drawGraph();
  legend();
  fit();
  memoryCharts();
  timeChart();
  sqnrChart();
  // interactive once the first frame with everything drawn is painted
  window.synapcReport = { ready: false, readyAt: null, layers: layers.length, select, center };
  requestAnimationFrame(() => setTimeout(() => {
    Object.assign(window.synapcReport, { ready: true, readyAt: performance.now() });
  }, 0));
})();
