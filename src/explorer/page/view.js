/* The graph view: what is drawn (graph nodes, or the members of an
 * expanded cluster: the instructions of a fused node's program, the nodes
 * of a nested graph), its layout, and the SVG with pan, zoom and search.
 * Names from the data are only ever set as text (textContent), never as
 * markup. */

const SVGNS = 'http://www.w3.org/2000/svg';
const DTYPE_SHORT = {float32: 'f32', float64: 'f64', float16: 'f16', bfloat16: 'bf16', int64: 'i64',
  int32: 'i32', int16: 'i16', int8: 'i8', uint8: 'u8', bool: 'bool'};

function tgEl(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

function tgMeta(out) {
  if (!out) return '';
  return (DTYPE_SHORT[out[0]] || out[0]) + '[' + out[1].map(d => d < 0 ? '?' : d).join(',') + ']';
}

function tgAttr(node, name) {
  const a = (node.attrs || []).find(x => x[0] === name);
  return a ? a[1] : undefined;
}

/* a fused node's program "op[attrs](%0, $1); ..." as instructions
 * {op, attrs, args: [{input: k} | {instr: j}]}; null when it does not parse */
function tgProgram(node) {
  const text = tgAttr(node, 'program');
  if (typeof text !== 'string') return null;
  const instrs = [];
  for (const part of text.split(';')) {
    const s = part.trim();
    if (!s) continue;
    const name = /^[A-Za-z0-9_]+/.exec(s);
    if (!name) return null;
    let i = name[0].length, attrs = '';
    if (s[i] === '[') {
      let depth = 0, j = i;
      for (; j < s.length; j++) {
        if (s[j] === '[') depth++;
        else if (s[j] === ']' && --depth === 0) break;
      }
      attrs = s.slice(i + 1, j);
      i = j + 1;
    }
    if (s[i] !== '(' || s[s.length - 1] !== ')') return null;
    const args = s.slice(i + 1, -1).split(',').map(a => a.trim()).filter(Boolean).map(a =>
      a[0] === '%' ? {input: +a.slice(1)} : a[0] === '$' ? {instr: +a.slice(1)} : null);
    if (args.some(a => !a || isNaN(a.input !== undefined ? a.input : a.instr))) return null;
    instrs.push({op: name[0], attrs, args});
  }
  return instrs.length ? instrs : null;
}

function tgCollapsible(node) {
  return (node.sub && node.sub.length) || (/^fused_/.test(node.op) && tgProgram(node));
}

/* what to draw of graph g with the clusters in `expanded` (keys) open:
 * items (boxes), edges between items, clusters (groups of items) */
function tgDisplay(g, expanded, prefix, clusterOf, out) {
  prefix = prefix || '';
  out = out || {items: [], edges: [], clusters: [], byKey: new Map()};
  const outEnd = [], inEnds = []; /* per node: item producing output k; items reading input i */
  const add = item => { item.index = out.items.length; out.items.push(item); out.byKey.set(item.key, item.index); return item.index; };
  for (const node of g.nodes) {
    const key = prefix + 'n' + node.id;
    const prog = /^fused_/.test(node.op) ? tgProgram(node) : null;
    if (expanded.has(key) && prog) {
      out.clusters.push({key, node, label: node.name + ' \u00b7 ' + node.op, parent: clusterOf});
      const members = prog.map((ins, j) => add({key: key + '/i' + j, node, instr: ins, j, cluster: key, clusterOf: key}));
      for (const [j, ins] of prog.entries())
        ins.args.forEach(a => { if (a.instr !== undefined && members[a.instr] !== undefined) out.edges.push({from: members[a.instr], to: members[j], type: 'data'}); });
      outEnd[node.id] = node.out.map(() => members[members.length - 1]);
      inEnds[node.id] = node.in.map((_, i) => prog.map((ins, j) => ins.args.some(a => a.input === i) ? members[j] : -1).filter(m => m >= 0));
    } else if (expanded.has(key) && node.sub && node.sub.length) {
      const firsts = [], lasts = [];
      for (const [s, sub] of node.sub.entries()) {
        const ck = key + '/s' + s;
        out.clusters.push({key: ck, node, label: node.name + ' \u00b7 ' + sub.attr, parent: clusterOf, owner: key});
        const inner = tgDisplay(sub.graph, expanded, ck + '/', ck, out);
        firsts.push(...inner.sources); lasts.push(...inner.sinks);
      }
      const first = firsts.length ? firsts : [add({key, node, cluster: clusterOf})];
      const last = lasts.length ? lasts : first;
      outEnd[node.id] = node.out.map(() => last[last.length - 1]);
      inEnds[node.id] = node.in.map((_, i) => [first[Math.min(i, first.length - 1)]]);
    } else {
      const idx = add({key, node, cluster: clusterOf});
      outEnd[node.id] = node.out.map(() => idx);
      inEnds[node.id] = node.in.map(() => [idx]);
    }
  }
  const readBy = new Set();
  for (const node of g.nodes) {
    node.in.forEach(([p, k], i) => {
      const from = outEnd[p] && outEnd[p][k] !== undefined ? outEnd[p][k] : null;
      if (from === null) return;
      readBy.add(p);
      for (const to of inEnds[node.id][i]) out.edges.push({from, to, type: 'data', value: [p, k]});
    });
    const target = inEnds[node.id].length && inEnds[node.id][0].length ? inEnds[node.id][0][0] : (outEnd[node.id] || [])[0];
    for (const [type, list] of [['ctrl', node.ctrl], ['order', node.order]])
      for (const p of list || []) if (outEnd[p] && outEnd[p].length && target !== undefined) out.edges.push({from: outEnd[p][0], to: target, type});
  }
  out.sources = g.nodes.filter(n => n.kind === 'placeholder').map(n => outEnd[n.id][0]);
  out.sinks = g.nodes.filter(n => n.kind === 'op' && !readBy.has(n.id)).map(n => outEnd[n.id][0]);
  return out;
}

/* the lines of an item's box: [text, css class] */
function tgLabel(item) {
  const n = item.node;
  if (item.instr) return [[item.instr.op, 'op'], [item.instr.attrs ? item.instr.attrs.slice(0, 28) : 'in ' + n.name, 'nm']];
  if (n.kind === 'op') {
    const lines = [[n.op, 'op']];
    if (n.name !== n.op) lines.push([n.name, 'nm']);
    lines.push([tgMeta(n.out[0]), 'sh']);
    return lines;
  }
  return [[n.name, 'op'], [tgMeta(n.out[0]), 'sh']];
}

let tgMeasureCtx = null;
function tgTextWidth(text, bold) {
  if (!tgMeasureCtx) tgMeasureCtx = document.createElement('canvas').getContext('2d');
  tgMeasureCtx.font = (bold ? '600 ' : '') + '12px system-ui, sans-serif';
  return tgMeasureCtx.measureText(text).width;
}

class GraphView {
  constructor(svg, handlers) {
    this.svg = svg;
    this.on = handlers;
    this.view = {k: 1, x: 0, y: 0};
    this.expanded = new Set();
    this.root = tgEl('g', {class: 'viewport'}, svg);
    this.installPanZoom();
  }

  /* draws graph g; newNames: names not in level 0 (marked as new) */
  setGraph(g, newNames) {
    this.graph = g;
    this.newNames = newNames || new Set();
    this.render();
  }

  render() {
    const d = tgDisplay(this.graph, this.expanded);
    this.display = d;
    const nodes = d.items.map(item => {
      const lines = tgLabel(item);
      item.lines = lines;
      const w = Math.max(...lines.map(([t, c]) => tgTextWidth(t, c === 'op') * (c === 'op' ? 1 : 0.92))) + 22;
      const small = item.node.kind === 'constant' && !item.instr;
      return {w: Math.max(small ? 40 : 56, Math.min(w, 260)), h: lines.length * 14 + 12, cluster: item.cluster || null};
    });
    const edges = d.edges.filter(e => e.from !== e.to);
    this.layout = tgLayout(nodes, edges);
    this.edgeList = edges;
    this.sizes = nodes;
    this.draw();
  }

  draw() {
    const root = this.root;
    while (root.firstChild) root.removeChild(root.firstChild);
    const L = this.layout, d = this.display;
    const gClusters = tgEl('g', {class: 'clusters'}, root);
    const gEdges = tgEl('g', {class: 'edges'}, root);
    const gNodes = tgEl('g', {class: 'nodes'}, root);
    /* clusters: the box around their members (nested clusters include theirs) */
    const boxOf = new Map();
    d.items.forEach((item, i) => {
      for (let c = item.cluster; c; c = (d.clusters.find(x => x.key === c) || {}).parent) {
        const p = L.pos[i], s = this.sizes[i];
        const b = boxOf.get(c) || {x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity};
        b.x0 = Math.min(b.x0, p.x - s.w / 2); b.x1 = Math.max(b.x1, p.x + s.w / 2);
        b.y0 = Math.min(b.y0, p.y - s.h / 2); b.y1 = Math.max(b.y1, p.y + s.h / 2);
        boxOf.set(c, b);
      }
    });
    for (const c of d.clusters) {
      const b = boxOf.get(c.key);
      if (!b) continue;
      const g = tgEl('g', {class: 'cluster ' + (c.node.cls || 'src')}, gClusters);
      tgEl('rect', {x: b.x0 - 12, y: b.y0 - 26, width: b.x1 - b.x0 + 24, height: b.y1 - b.y0 + 38, rx: 10}, g);
      const t = tgEl('text', {x: b.x0 - 4, y: b.y0 - 10, class: 'clabel'}, g);
      t.textContent = '\u2212 ' + c.label;
      g.addEventListener('click', ev => { ev.stopPropagation(); this.toggle(c.owner || c.key); });
    }
    this.edgeEls = [];
    L.edges.forEach((pts, k) => {
      const e = this.edgeList[k];
      const path = tgEl('path', {d: tgCurve(pts), class: 'edge ' + e.type, 'marker-end': 'url(#arrow-' + e.type + ')'}, gEdges);
      this.edgeEls.push(path);
      e.el = path;
    });
    this.itemEls = [];
    d.items.forEach((item, i) => {
      const p = L.pos[i], s = this.sizes[i], n = item.node;
      const cls = ['node', n.kind, n.cls || '', item.instr ? 'member' : '', n.kind === 'op' && n.step === -1 ? 'notrun' : '',
        this.newNames.has(n.name) && !item.instr ? 'new' : '', tgCollapsible(n) && !item.instr ? 'collapsible' : ''].join(' ');
      const g = tgEl('g', {class: cls, transform: 'translate(' + p.x + ',' + p.y + ')'}, gNodes);
      g.dataset.key = item.key;
      const shape = n.kind === 'placeholder' || n.kind === 'variable' ? 'rect' : 'rect';
      tgEl(shape, {x: -s.w / 2, y: -s.h / 2, width: s.w, height: s.h, rx: n.kind === 'op' ? 6 : s.h / 2}, g);
      if (tgCollapsible(n) && !item.instr) {
        tgEl('rect', {x: -s.w / 2 + 3, y: -s.h / 2 + 3, width: s.w - 6, height: s.h - 6, rx: 4, class: 'inner'}, g);
        const plus = tgEl('text', {x: s.w / 2 - 9, y: -s.h / 2 + 12, class: 'plus'}, g);
        plus.textContent = '+';
      }
      item.lines.forEach(([text, c], j) => {
        const t = tgEl('text', {x: 0, y: -s.h / 2 + 17 + j * 14, class: c}, g);
        t.textContent = text.length > 40 ? text.slice(0, 39) + '\u2026' : text;
      });
      g.addEventListener('click', ev => { ev.stopPropagation(); this.select(item.key); });
      g.addEventListener('dblclick', ev => { ev.stopPropagation(); if (tgCollapsible(n) && !item.instr) this.toggle(item.key); });
      this.itemEls.push(g);
      item.el = g;
    });
    if (this.selected) this.highlight(this.selected);
    this.applySearch();
    this.applyView();
  }

  toggle(key) {
    if (this.expanded.has(key)) this.expanded.delete(key); else this.expanded.add(key);
    const keep = this.view;
    this.render();
    this.view = keep;
    this.applyView();
  }

  drawnCount() { return this.root.querySelectorAll('g.node').length; }

  select(key, center) {
    const i = this.display.byKey.get(key);
    if (i === undefined) return false;
    this.selected = key;
    this.highlight(key);
    this.on.select(this.display.items[i]);
    if (center) this.centerOn(i);
    return true;
  }

  highlight(key) {
    const i = this.display.byKey.get(key);
    for (const el of this.itemEls) el.classList.remove('selected');
    for (const e of this.edgeList) if (e.el) e.el.classList.remove('lit');
    if (i === undefined) return;
    this.itemEls[i].classList.add('selected');
    for (const e of this.edgeList) if (e.el && (e.from === i || e.to === i)) e.el.classList.add('lit');
  }

  /* search: names and ops containing q; returns the number of matches */
  search(q) {
    this.query = (q || '').trim().toLowerCase();
    this.matchAt = -1;
    return this.applySearch();
  }

  applySearch() {
    this.matches = [];
    if (!this.display) return 0;
    this.display.items.forEach((item, i) => {
      const hit = !!this.query && (item.node.name.toLowerCase().includes(this.query) ||
        (item.instr ? item.instr.op : item.node.op).toLowerCase().includes(this.query));
      this.itemEls[i].classList.toggle('match', hit);
      this.itemEls[i].classList.toggle('dim', !!this.query && !hit);
      if (hit) this.matches.push(i);
    });
    return this.matches.length;
  }

  nextMatch() {
    if (!this.matches || !this.matches.length) return null;
    this.matchAt = (this.matchAt + 1) % this.matches.length;
    const item = this.display.items[this.matches[this.matchAt]];
    this.select(item.key, true);
    return this.matchAt;
  }

  centerOn(i) {
    const r = this.svg.getBoundingClientRect(), p = this.layout.pos[i];
    this.view.k = Math.max(this.view.k, 0.8);
    const panel = document.getElementById('panel');
    const room = panel && !panel.hidden ? panel.offsetWidth + 24 : 0; /* the panel covers the right */
    this.view.x = (r.width - room) / 2 - p.x * this.view.k;
    this.view.y = r.height / 2 - p.y * this.view.k;
    this.applyView();
  }

  fit() {
    const r = this.svg.getBoundingClientRect();
    if (!r.width || !this.layout) return;
    const k = Math.min(r.width / this.layout.width, r.height / this.layout.height, 1.2);
    /* a tall graph: fit its width and start at the top rather than shrink it to dots */
    const kk = Math.max(k, Math.min(0.55, r.width / this.layout.width));
    this.view = {k: kk, x: (r.width - this.layout.width * kk) / 2, y: kk > k ? 10 : (r.height - this.layout.height * kk) / 2};
    this.applyView();
  }

  applyView() {
    const v = this.view;
    this.root.setAttribute('transform', 'translate(' + v.x + ',' + v.y + ') scale(' + v.k + ')');
  }

  installPanZoom() {
    const svg = this.svg;
    svg.addEventListener('wheel', ev => {
      ev.preventDefault();
      const r = svg.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
      const f = Math.exp(-ev.deltaY * (ev.deltaMode ? 0.05 : 0.0015));
      const k = Math.min(4, Math.max(0.05, this.view.k * f));
      this.view.x = mx - (mx - this.view.x) * k / this.view.k;
      this.view.y = my - (my - this.view.y) * k / this.view.k;
      this.view.k = k;
      this.applyView();
    }, {passive: false});
    let drag = null;
    svg.addEventListener('pointerdown', ev => { drag = {x: ev.clientX, y: ev.clientY, vx: this.view.x, vy: this.view.y, moved: false}; });
    svg.addEventListener('pointermove', ev => {
      if (!drag) return;
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; svg.classList.add('panning'); }
      this.view.x = drag.vx + dx; this.view.y = drag.vy + dy;
      this.applyView();
    });
    const end = () => { drag = null; svg.classList.remove('panning'); };
    svg.addEventListener('pointerup', end);
    svg.addEventListener('pointerleave', end);
  }
}

/* a smooth path through the points (vertical cubic segments) */
function tgCurve(pts) {
  let d = 'M' + pts[0].x.toFixed(1) + ',' + pts[0].y.toFixed(1);
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1], b = pts[i], my = (a.y + b.y) / 2;
    d += ' C' + a.x.toFixed(1) + ',' + my.toFixed(1) + ' ' + b.x.toFixed(1) + ',' + my.toFixed(1) + ' ' + b.x.toFixed(1) + ',' + b.y.toFixed(1);
  }
  return d;
}
