/* The two charts: the memory plan (each arena buffer a rectangle, its
 * offset and size against its lifetime in steps, with the naive and
 * planned peaks) and the profile (one lane of spans per thread). Both are
 * SVG drawn to the size of their container. */

function tgBytes(b) {
  if (b >= 1 << 30) return (b / (1 << 30)).toFixed(2) + ' GiB';
  if (b >= 1 << 20) return (b / (1 << 20)).toFixed(2) + ' MiB';
  if (b >= 1 << 10) return (b / (1 << 10)).toFixed(1) + ' KiB';
  return b + ' B';
}

function tgClear(el) { while (el.firstChild) el.removeChild(el.firstChild); }

function tgText(parent, x, y, text, cls, anchor) {
  const t = tgEl('text', {x, y, class: cls || '', 'text-anchor': anchor || 'start'}, parent);
  t.textContent = text;
  return t;
}

function tgTitle(el, text) { tgEl('title', {}, el).textContent = text; }

/* memory: mem is a level's "memory", g its graph; onPick(nodeId) */
function tgMemoryChart(svg, mem, g, onPick) {
  tgClear(svg);
  const W = svg.clientWidth || 1000, H = svg.clientHeight || 600;
  if (!mem) { tgText(svg, 30, 40, 'No memory plan at this level.', 'note'); return 0; }
  const bufs = mem.buffers;
  const left = 86, right = 250, top = 50, bottom = 44;
  const pw = W - left - right, ph = H - top - bottom;
  const steps = Math.max(1, mem.steps);
  const ymax = Math.max(mem.arena, 1);
  const sx = s => left + s / steps * pw, sy = o => top + ph - o / ymax * ph;
  tgText(svg, left, 24, 'Arena buffers over the plan\u2019s ' + mem.steps + ' steps: ' + bufs.length +
    ' buffers, ' + mem.reused + ' reuse freed memory, ' + mem.in_place + ' written in place', 'ctitle');
  /* axes */
  tgEl('line', {x1: left, y1: top + ph, x2: left + pw, y2: top + ph, class: 'axis'}, svg);
  tgEl('line', {x1: left, y1: top, x2: left, y2: top + ph, class: 'axis'}, svg);
  for (let i = 0; i <= 4; i++) {
    const o = ymax * i / 4;
    tgEl('line', {x1: left - 4, y1: sy(o), x2: left + pw, y2: sy(o), class: 'grid'}, svg);
    tgText(svg, left - 8, sy(o) + 4, tgBytes(Math.round(o)), 'tick', 'end');
  }
  for (let i = 0; i <= 5; i++) {
    const s = Math.round(steps * i / 5);
    tgText(svg, sx(s), top + ph + 16, String(s), 'tick', 'middle');
  }
  tgText(svg, left + pw / 2, top + ph + 34, 'step (execution order)', 'tick', 'middle');
  const byId = new Map(g.nodes.map(n => [n.id, n]));
  for (const [node, out, off, bytes, s0, s1, inPlace] of bufs) {
    const n = byId.get(node) || {name: '?', op: '?'};
    const r = tgEl('rect', {x: sx(s0), y: sy(off + bytes), width: Math.max(1.5, sx(s1 + 1) - sx(s0)),
      height: Math.max(1, sy(off) - sy(off + bytes)), class: 'buf ' + (n.cls || 'src') + (inPlace ? ' inplace' : '')}, svg);
    tgTitle(r, n.name + (out ? ':' + out : '') + ' (' + n.op + ')\n' + tgBytes(bytes) + ' at offset ' + off +
      '\nlives from step ' + s0 + ' to ' + s1 + (inPlace ? '\nwritten over its input (in place)' : ''));
    r.addEventListener('click', () => onPick(node));
  }
  /* the peaks, side by side */
  const bx = left + pw + 40, bw = 54, bh = ph, scale = Math.max(mem.naive, 1);
  tgText(svg, bx, 24, 'peaks', 'ctitle');
  [['naive', mem.naive, 'naive'], ['planned', mem.planned, 'planned']].forEach(([label, v, cls], i) => {
    const h = v / scale * bh, x = bx + i * (bw + 26);
    tgEl('rect', {x, y: top + bh - h, width: bw, height: Math.max(1, h), class: 'peak ' + cls}, svg);
    tgText(svg, x + bw / 2, top + bh - h - 6, tgBytes(v), 'tick', 'middle');
    tgText(svg, x + bw / 2, top + bh + 16, label, 'tick', 'middle');
  });
  tgText(svg, bx, top + bh + 34, 'planned = ' + (100 * mem.planned / Math.max(mem.naive, 1)).toFixed(0) + '% of naive', 'tick');
  return bufs.length;
}

/* profile: spans [name, cat, ts, dur, tid, run]; classOf(name) -> css class */
function tgProfileChart(svg, prof, classOf, onPick) {
  tgClear(svg);
  const W = svg.clientWidth || 1000, H = svg.clientHeight || 600;
  if (!prof) {
    tgText(svg, 30, 40, 'No profile on this page: tg graph lenet --html FILE --profile TRACE.json', 'note');
    tgText(svg, 30, 62, '(TRACE.json from tg train --profile TRACE.json --mode graph)', 'note');
    return 0;
  }
  const ev = prof.events;
  const tids = [...new Set(ev.map(e => e[4]))].sort((a, b) => a - b);
  let t0 = Infinity, t1 = -Infinity;
  for (const e of ev) { t0 = Math.min(t0, e[2]); t1 = Math.max(t1, e[2] + e[3]); }
  if (!ev.length) { tgText(svg, 30, 40, 'The profile has no spans.', 'note'); return 0; }
  const left = 90, right = 24, top = 50, lane = Math.min(46, (H - top - 50) / Math.max(1, tids.length));
  const pw = W - left - right;
  const view = svg.tgView || (svg.tgView = {a: t0, b: t1});
  const sx = t => left + (t - view.a) / (view.b - view.a) * pw;
  const runs = new Set(ev.map(e => e[5])).size;
  tgText(svg, left, 24, ev.length + ' spans on ' + tids.length + ' thread' + (tids.length > 1 ? 's' : '') + ', ' +
    runs + ' run' + (runs > 1 ? 's' : '') + ', ' + ((t1 - t0) / 1000).toFixed(2) + ' ms  (wheel: zoom in time, drag: pan)', 'ctitle');
  const clip = tgEl('clipPath', {id: 'lanes'}, svg);
  tgEl('rect', {x: left, y: 0, width: pw, height: H}, clip);
  const body = tgEl('g', {'clip-path': 'url(#lanes)'}, svg);
  tids.forEach((tid, i) => {
    const y = top + i * lane;
    tgEl('rect', {x: left, y, width: pw, height: lane - 6, class: 'lane'}, body);
    tgText(svg, left - 8, y + lane / 2, 'thread ' + tid, 'tick', 'end');
  });
  for (const [name, cat, ts, dur, tid, run] of ev) {
    const x0 = sx(ts), x1 = sx(ts + dur);
    if (x1 < left || x0 > left + pw) continue;
    const y = top + tids.indexOf(tid) * lane;
    const r = tgEl('rect', {x: x0, y: y + 2, width: Math.max(0.8, x1 - x0), height: lane - 10, class: 'span ' + classOf(name)}, body);
    tgTitle(r, name + ' (' + cat + ')\n' + dur.toFixed(1) + ' \u00b5s, run ' + run);
    r.addEventListener('click', () => onPick(name));
    if (x1 - x0 > 40) tgText(body, x0 + 3, y + lane / 2, name, 'spantext');
  }
  const axisY = top + tids.length * lane + 8;
  for (let i = 0; i <= 6; i++) {
    const t = view.a + (view.b - view.a) * i / 6;
    tgText(svg, left + pw * i / 6, axisY + 8, ((t - t0) / 1000).toFixed(2) + ' ms', 'tick', 'middle');
  }
  if (!svg.tgWired) {
    svg.tgWired = true;
    svg.addEventListener('wheel', e => {
      e.preventDefault();
      const r = svg.getBoundingClientRect(), f = Math.exp(e.deltaY * 0.002);
      const at = view.a + (e.clientX - r.left - left) / pw * (view.b - view.a);
      view.a = at - (at - view.a) * f; view.b = at + (view.b - at) * f;
      svg.tgRedraw();
    }, {passive: false});
    let drag = null;
    svg.addEventListener('pointerdown', e => { drag = {x: e.clientX, a: view.a, b: view.b}; });
    svg.addEventListener('pointermove', e => {
      if (!drag) return;
      const dt = (e.clientX - drag.x) / pw * (drag.b - drag.a);
      view.a = drag.a - dt; view.b = drag.b - dt;
      svg.tgRedraw();
    });
    svg.addEventListener('pointerup', () => { drag = null; });
    svg.addEventListener('pointerleave', () => { drag = null; });
  }
  return ev.length;
}

/* per node name: total time, spans and runs in the profile */
function tgProfileTimes(prof) {
  const m = new Map();
  if (!prof) return m;
  for (const [name, , , dur, , run] of prof.events) {
    const t = m.get(name) || {total: 0, count: 0, runs: new Set()};
    t.total += dur; t.count++; t.runs.add(run);
    m.set(name, t);
  }
  return m;
}
