'use strict';
/* The layered (Sugiyama) layout of the explorer, written for it:
 *  1. cycles broken (control and ordering edges may point backwards) by
 *     reversing the back edges of a depth-first search;
 *  2. layering: the longest path from the sources, then every source
 *     (a parameter, a constant) moved down to just above its first reader;
 *  3. long edges cut into chains of dummy nodes, one per layer crossed;
 *  4. crossing reduction: sweeps down and up ordering each layer by the
 *     barycenter of its neighbours in the layer before, keeping the order
 *     with the fewest crossings (counted exactly, with a Fenwick tree);
 *     members of one cluster are kept side by side;
 *  5. coordinates: each layer placed as close as it can be to its
 *     neighbours' barycenters with the nodes' widths and gaps respected,
 *     the least-squares placement of an ordered row (pool adjacent
 *     violators), alternating down and up; dummy chains weigh more, so
 *     long edges run straight.
 * In: nodes [{w, h, cluster}], edges [{from, to}] (indices). Out: node
 * centres, edge polylines, the drawing's size. */

function tgLayout(nodes, edges, opt) {
  opt = Object.assign({rankGap: 46, nodeGap: 22, dummyGap: 10, sweeps: 14, margin: 30}, opt || {});
  const n = nodes.length;
  const succ = [], pred = [];
  for (let i = 0; i < n; i++) { succ.push([]); pred.push([]); }

  /* 1. a DAG: edges the DFS meets as back edges are reversed */
  const flip = tgBackEdges(n, edges);
  const dag = edges.map((e, k) => flip[k] ? {from: e.to, to: e.from, k} : {from: e.from, to: e.to, k});
  for (const e of dag) if (e.from !== e.to) { succ[e.from].push(e.to); pred[e.to].push(e.from); }

  /* 2. layers */
  const layer = tgLayers(n, succ, pred);

  /* 3. dummies: vertex ids n.. ; chain per edge */
  const V = nodes.map((nd, i) => ({w: nd.w, h: nd.h, cluster: nd.cluster, layer: layer[i], dummy: false}));
  const up = [], down = []; /* adjacency between consecutive layers: [neighbour, weight] */
  const link = (a, b) => {
    const w = V[a].dummy && V[b].dummy ? 8 : V[a].dummy || V[b].dummy ? 2 : 1;
    down[a].push([b, w]); up[b].push([a, w]);
  };
  for (let i = 0; i < n; i++) { up.push([]); down.push([]); }
  const chains = [];
  for (const e of dag) {
    if (e.from === e.to) { chains[e.k] = {path: [e.from, e.to], flipped: flip[e.k]}; continue; }
    const path = [e.from];
    let prev = e.from;
    for (let l = layer[e.from] + 1; l < layer[e.to]; l++) {
      const d = V.length;
      V.push({w: 2, h: 0, cluster: null, layer: l, dummy: true});
      up.push([]); down.push([]);
      link(prev, d); path.push(d); prev = d;
    }
    link(prev, e.to); path.push(e.to);
    chains[e.k] = {path, flipped: flip[e.k]};
  }

  /* 4. orders */
  const nLayers = V.reduce((m, v) => Math.max(m, v.layer + 1), 0);
  let rows = [];
  for (let l = 0; l < nLayers; l++) rows.push([]);
  V.forEach((v, i) => rows[v.layer].push(i));
  rows = tgOrder(V, rows, up, down, opt.sweeps);

  /* 5. coordinates */
  const pos = tgCoordinates(V, rows, up, down, opt);
  const outEdges = chains.map(c => {
    const pts = c.path.map((id, j) => {
      const p = pos[id], v = V[id];
      if (j === 0) return {x: p.x, y: p.y + v.h / 2};
      if (j === c.path.length - 1) return {x: p.x, y: p.y - v.h / 2};
      return {x: p.x, y: p.y};
    });
    return c.flipped ? pts.reverse() : pts;
  });
  let w = 0, h = 0;
  for (let i = 0; i < V.length; i++) {
    w = Math.max(w, pos[i].x + V[i].w / 2 + opt.margin);
    h = Math.max(h, pos[i].y + V[i].h / 2 + opt.margin);
  }
  return {pos: pos.slice(0, n), edges: outEdges, width: w, height: h, layers: nLayers};
}

function tgBackEdges(n, edges) {
  const out = [];
  for (let i = 0; i < n; i++) out.push([]);
  edges.forEach((e, k) => out[e.from].push([e.to, k]));
  const state = new Uint8Array(n), flip = new Array(edges.length).fill(false);
  for (let s = 0; s < n; s++) {
    if (state[s]) continue;
    const stack = [[s, 0]];
    state[s] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      const list = out[top[0]];
      if (top[1] >= list.length) { state[top[0]] = 2; stack.pop(); continue; }
      const [to, k] = list[top[1]++];
      if (state[to] === 1) flip[k] = true;
      else if (state[to] === 0) { state[to] = 1; stack.push([to, 0]); }
    }
  }
  return flip;
}

function tgLayers(n, succ, pred) {
  const layer = new Array(n).fill(0), indeg = pred.map(p => p.length), queue = [];
  for (let i = 0; i < n; i++) if (!indeg[i]) queue.push(i);
  const topo = [];
  while (queue.length) {
    const u = queue.shift();
    topo.push(u);
    for (const v of succ[u]) {
      layer[v] = Math.max(layer[v], layer[u] + 1);
      if (--indeg[v] === 0) queue.push(v);
    }
  }
  /* sources sit right above their first reader, not all in the top row */
  for (let t = topo.length - 1; t >= 0; t--) {
    const u = topo[t];
    if (pred[u].length || !succ[u].length) continue;
    layer[u] = Math.max(0, Math.min(...succ[u].map(v => layer[v])) - 1);
  }
  return layer;
}

/* crossings between two consecutive rows, from the lower row's up lists */
function tgCrossings(rowA, rowB, posOf, up) {
  const pairs = [];
  for (const b of rowB) for (const [a] of up[b]) pairs.push([posOf[a], posOf[b]]);
  pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  const size = rowB.length + 1, tree = new Array(size + 1).fill(0);
  let crossings = 0, seen = 0;
  for (const [, pb] of pairs) {
    let s = 0;
    for (let i = pb + 1; i > 0; i -= i & -i) s += tree[i];
    crossings += seen - s;
    for (let i = pb + 1; i <= size; i += i & -i) tree[i]++;
    seen++;
  }
  return crossings;
}

function tgTotalCrossings(rows, up) {
  const posOf = {};
  rows.forEach(r => r.forEach((v, i) => { posOf[v] = i; }));
  let c = 0;
  for (let l = 1; l < rows.length; l++) c += tgCrossings(rows[l - 1], rows[l], posOf, up);
  return c;
}

function tgOrder(V, rows, up, down, sweeps) {
  const posOf = new Float64Array(V.length);
  const index = () => rows.forEach(r => r.forEach((v, i) => { posOf[v] = i; }));
  index();
  let best = rows.map(r => r.slice()), bestC = tgTotalCrossings(rows, up);
  const big = V.length > 4000; /* keep huge graphs responsive */
  for (let s = 0; s < (big ? 4 : sweeps) && bestC > 0; s++) {
    const downward = s % 2 === 0;
    for (let k = 1; k < rows.length; k++) {
      const l = downward ? k : rows.length - 1 - k;
      const adj = downward ? up : down;
      rows[l] = tgSortRow(V, rows[l], adj, posOf);
      rows[l].forEach((v, i) => { posOf[v] = i; });
    }
    const c = tgTotalCrossings(rows, up);
    if (c < bestC) { bestC = c; best = rows.map(r => r.slice()); }
  }
  return best;
}

/* a row by barycenter, members of a cluster gathered at their mean */
function tgSortRow(V, row, adj, posOf) {
  const key = new Map();
  for (const v of row) {
    let s = 0, w = 0;
    for (const [u, wt] of adj[v]) { s += posOf[u] * wt; w += wt; }
    key.set(v, w ? s / w : posOf[v]);
  }
  const groups = new Map();
  for (const v of row) {
    const c = V[v].cluster;
    if (c == null) continue;
    if (!groups.has(c)) groups.set(c, []);
    groups.get(c).push(key.get(v));
  }
  const mean = c => { const a = groups.get(c); return a.reduce((x, y) => x + y, 0) / a.length; };
  const sortKey = v => V[v].cluster == null ? [key.get(v), '', 0] : [mean(V[v].cluster), String(V[v].cluster), key.get(v)];
  return row.slice().sort((a, b) => {
    const ka = sortKey(a), kb = sortKey(b);
    return ka[0] - kb[0] || (ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0) || ka[2] - kb[2] || posOf[a] - posOf[b];
  });
}

/* least-squares placement of an ordered row: minimise sum w_i (x_i - d_i)^2
 * with x_{i+1} - x_i >= gap_i, by pool adjacent violators on the shifted
 * problem (y_i = x_i - offset_i must not decrease) */
function tgPlaceRow(desired, weight, gaps) {
  const m = desired.length, off = new Float64Array(m);
  for (let i = 1; i < m; i++) off[i] = off[i - 1] + gaps[i];
  const blocks = []; /* [sum of weights, weighted sum, count] */
  for (let i = 0; i < m; i++) {
    blocks.push([weight[i], weight[i] * (desired[i] - off[i]), 1]);
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1], a = blocks[blocks.length - 2];
      if (a[1] / a[0] <= b[1] / b[0]) break;
      blocks.pop();
      a[0] += b[0]; a[1] += b[1]; a[2] += b[2];
    }
  }
  const x = new Float64Array(m);
  let i = 0;
  for (const [w, s, c] of blocks) for (let k = 0; k < c; k++, i++) x[i] = s / w + off[i];
  return x;
}

function tgCoordinates(V, rows, up, down, opt) {
  const x = new Float64Array(V.length), y = new Float64Array(V.length);
  const gapOf = (a, b) => (V[a].w + V[b].w) / 2 +
    (V[a].dummy && V[b].dummy ? opt.dummyGap : V[a].cluster != null && V[a].cluster === V[b].cluster ? opt.nodeGap / 2 : opt.nodeGap);
  for (const row of rows) {
    let at = 0;
    row.forEach((v, i) => { if (i) at += gapOf(row[i - 1], v); x[v] = at; });
  }
  const place = (row, adjs) => {
    if (!row.length) return;
    const desired = [], weight = [], gaps = [0];
    row.forEach((v, i) => {
      let s = 0, w = 0;
      for (const adj of adjs) for (const [u, wt] of adj[v]) { s += x[u] * wt; w += wt; }
      desired.push(w ? s / w : x[v]);
      weight.push(w ? w : 0.01);
      if (i) gaps.push(gapOf(row[i - 1], v));
    });
    const nx = tgPlaceRow(desired, weight, gaps);
    row.forEach((v, i) => { x[v] = nx[i]; });
  };
  for (let it = 0; it < 10; it++) {
    if (it % 2 === 0) for (let l = 1; l < rows.length; l++) place(rows[l], [up]);
    else for (let l = rows.length - 2; l >= 0; l--) place(rows[l], [down]);
  }
  for (let l = 0; l < rows.length; l++) place(rows[l], [up, down]);
  let minX = Infinity;
  V.forEach((v, i) => { minX = Math.min(minX, x[i] - v.w / 2); });
  let top = opt.margin;
  const pos = [];
  for (const row of rows) {
    const h = row.reduce((m, v) => Math.max(m, V[v].h), 0);
    for (const v of row) y[v] = top + h / 2;
    top += h + opt.rankGap;
  }
  for (let i = 0; i < V.length; i++) pos.push({x: x[i] - minX + opt.margin, y: y[i]});
  return pos;
}
