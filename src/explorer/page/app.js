/* The explorer page: reads the embedded data, builds the header (level
 * switch, tabs, search), the passes column, the side panel, and runs the
 * self-test when the address ends in #selftest (what the browser test
 * reads: a JSON verdict in the pre element with id tg-selftest). */

(function explorer() {
  const $ = id => document.getElementById(id);
  const data = JSON.parse($('tg-data').textContent);
  const levels = data.levels.filter(l => l.graph);
  const CLASS_NAMES = {fwd: 'forward', bwd: 'backward', upd: 'state update'};
  const times = tgProfileTimes(data.profile);
  const level0 = new Set((levels[0] ? levels[0].graph.nodes : []).map(n => n.name));
  const state = {level: null, tab: 'graph'};

  document.title = data.title + ' \u2014 tensorgraph explorer';
  $('title').textContent = data.title;
  $('version').textContent = 'tensorgraph ' + data.version;

  const view = new GraphView($('graph'), {select: showPanel});

  /* ---- header ---------------------------------------------------------- */
  const levelBar = $('levels');
  for (const l of data.levels) {
    const b = document.createElement('button');
    b.className = 'level';
    b.dataset.level = l.level;
    const big = document.createElement('b');
    big.textContent = 'O' + l.level;
    const small = document.createElement('span');
    small.textContent = l.graph ? l.graph.nodes.length + ' nodes' : 'n/a';
    b.append(big, small);
    if (!l.graph) { b.disabled = true; b.title = l.error || ''; }
    b.addEventListener('click', () => setLevel(l.level));
    levelBar.appendChild(b);
  }
  for (const b of document.querySelectorAll('button.tab'))
    b.addEventListener('click', () => setTab(b.dataset.tab));
  $('search').addEventListener('input', e => {
    const n = view.search(e.target.value);
    $('hits').textContent = e.target.value ? n + ' match' + (n === 1 ? '' : 'es') : '';
  });
  $('search').addEventListener('keydown', e => {
    if (e.key !== 'Enter') return;
    const at = view.nextMatch();
    if (at !== null) $('hits').textContent = (at + 1) + ' / ' + view.matches.length;
  });
  $('fit').addEventListener('click', () => view.fit());
  $('close').addEventListener('click', () => { $('panel').hidden = true; });
  window.addEventListener('resize', () => { if (state.tab !== 'graph') drawTab(); });

  function current() { return data.levels.find(l => l.level === state.level); }

  function setLevel(level) {
    const l = data.levels.find(x => x.level === level && x.graph);
    if (!l) return false;
    state.level = level;
    for (const b of levelBar.children) b.classList.toggle('on', +b.dataset.level === level);
    const keep = view.selected && view.display ? view.display.items[view.display.byKey.get(view.selected)] : null;
    view.expanded.clear();
    view.selected = null;
    view.setGraph(l.graph, level === levels[0].level ? new Set() : new Set(l.graph.nodes.map(n => n.name).filter(n => !level0.has(n))));
    $('count').textContent = l.graph.nodes.length + ' nodes';
    view.fit();
    drawPasses(l);
    if (keep) {
      const same = l.graph.nodes.find(n => n.name === keep.node.name);
      if (same) view.select('n' + same.id); else $('panel').hidden = true;
    }
    if (state.tab !== 'graph') drawTab();
    return true;
  }

  function setTab(tab) {
    state.tab = tab;
    for (const b of document.querySelectorAll('button.tab')) b.classList.toggle('on', b.dataset.tab === tab);
    for (const v of ['graph', 'memory', 'profile']) $('view-' + v).hidden = v !== tab;
    drawTab();
  }

  function drawTab() {
    const l = current();
    if (state.tab === 'memory') return tgMemoryChart($('memchart'), l.memory, l.graph, pickNode);
    if (state.tab === 'profile') {
      const svg = $('profchart');
      svg.tgRedraw = () => tgProfileChart(svg, data.profile, classOfName, pickName);
      return svg.tgRedraw();
    }
    return 0;
  }

  function classOfName(name) {
    const n = current().graph.nodes.find(x => x.name === name);
    return n ? n.cls || n.kind : 'unknown';
  }
  function pickNode(id) { setTab('graph'); view.select('n' + id, true); }
  function pickName(name) {
    const n = current().graph.nodes.find(x => x.name === name);
    if (n) pickNode(n.id);
  }

  /* ---- the passes column ------------------------------------------------ */
  function el(tag, cls, text, parent) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function drawPasses(l) {
    const box = $('passes');
    tgClear(box);
    el('h3', '', 'Level ' + l.level + ': ' + l.graph.nodes.length + ' nodes', box);
    if (l.error) el('p', 'warn', l.error, box);
    if (!l.passes || !l.passes.length) el('p', 'muted', l.level === 0 ? 'The graph as built: no passes run.' : 'No pass ran.', box);
    for (const p of l.passes || []) {
      const row = el('div', 'pass' + (p.before === p.after && !p.counts.length ? ' idle' : ''), undefined, box);
      el('span', 'pname', p.pass, row);
      el('span', 'pnodes', p.before + ' \u2192 ' + p.after, row);
      if (p.counts.length) el('div', 'pcounts', p.counts.map(([w, n]) => w + ' ' + n).join(', '), row);
    }
    if (l.level !== levels[0].level) {
      const names = new Set(l.graph.nodes.map(n => n.name));
      const gone = [...level0].filter(n => !names.has(n)), made = l.graph.nodes.filter(n => !level0.has(n.name));
      el('h3', '', 'Compared with level ' + levels[0].level, box);
      for (const [label, list, cls] of [['removed or merged', gone, 'gone'], ['new (fused, rewritten)', made.map(n => n.name), 'made']]) {
        const d = el('details', cls, undefined, box);
        el('summary', '', list.length + ' ' + label, d);
        el('div', 'names', list.join(', '), d);
      }
    }
    const mem = l.memory;
    if (mem) {
      el('h3', '', 'Memory plan', box);
      el('p', '', 'naive ' + tgBytes(mem.naive) + ' \u2192 planned peak ' + tgBytes(mem.planned) +
        ' (' + (100 * mem.planned / Math.max(1, mem.naive)).toFixed(0) + '%)', box);
    }
  }

  /* ---- the side panel ----------------------------------------------------- */
  function showPanel(item) {
    const n = item.node, box = $('pbody'), g = current().graph;
    tgClear(box);
    $('panel').hidden = false;
    $('pname').textContent = item.instr ? item.instr.op + ' (in ' + n.name + ')' : n.name;
    const facts = el('div', 'facts', undefined, box);
    const fact = (k, v) => { const r = el('div', 'fact', undefined, facts); el('span', 'k', k, r); el('span', 'v', v, r); };
    fact('op', n.op);
    fact('kind', n.kind + (n.cls ? ' \u00b7 ' + CLASS_NAMES[n.cls] : ''));
    if (n.step !== undefined) fact('step', n.step >= 0 ? n.step + ' of the plan' : 'not run by this plan');
    if (n.loc) fact('source', n.loc);
    const t = times.get(n.name);
    if (data.profile) fact('time', t ? (t.total / t.runs.size).toFixed(1) + ' \u00b5s per run (' + t.count + ' spans, ' + t.runs.size + ' runs)' : 'not in the profile');
    if (item.instr) {
      el('h4', '', 'Instruction ' + item.j + ' of the fused program', box);
      el('code', 'prog', item.instr.op + (item.instr.attrs ? '[' + item.instr.attrs + ']' : '') + '(' +
        item.instr.args.map(a => a.input !== undefined ? '%' + a.input : '$' + a.instr).join(', ') + ')', box);
    }
    el('h4', '', 'Inputs', box);
    if (!n.in.length) el('p', 'muted', 'none', box);
    n.in.forEach(([p, k], i) => {
      const src = g.nodes[p] || {name: '?', out: []};
      const r = el('div', 'io link', undefined, box);
      el('span', 'slot', '%' + i, r);
      el('span', 'who', src.name + (src.out.length > 1 ? ':' + k : ''), r);
      el('span', 'meta', tgMeta(src.out[k]), r);
      r.addEventListener('click', () => view.select('n' + p, true));
    });
    el('h4', '', 'Outputs', box);
    n.out.forEach((o, k) => {
      const readers = g.nodes.filter(x => x.in.some(([p, kk]) => p === n.id && kk === k));
      const r = el('div', 'io', undefined, box);
      el('span', 'slot', ':' + k, r);
      el('span', 'meta', tgMeta(o), r);
      el('span', 'who', readers.length ? '\u2192 ' + readers.map(x => x.name).join(', ') : '(fetched or unused)', r);
    });
    const deps = (n.ctrl || []).concat(n.order || []);
    if (deps.length) {
      el('h4', '', 'Runs after', box);
      el('p', '', deps.map(d => (g.nodes[d] || {name: '?'}).name).join(', '), box);
    }
    if (n.attrs.length) {
      el('h4', '', 'Attributes', box);
      for (const [k, v] of n.attrs) {
        const r = el('div', 'attr', undefined, box);
        el('span', 'k', k, r);
        if (k === 'program' && typeof v === 'string') el('code', 'prog', v.split(';').map(s => s.trim()).join(';\n'), r);
        else el('span', 'v', typeof v === 'string' ? v : JSON.stringify(v), r);
      }
    }
    const mem = current().memory;
    const bufs = mem ? mem.buffers.filter(b => b[0] === n.id) : [];
    if (bufs.length) {
      el('h4', '', 'Memory', box);
      for (const [, o, off, bytes, s0, s1, ip] of bufs)
        el('p', '', ':' + o + ' ' + tgBytes(bytes) + ' at arena offset ' + off + ', steps ' + s0 + '\u2013' + s1 + (ip ? ', in place' : ''), box);
    }
    if (tgCollapsible(n) && !item.instr) {
      const b = el('button', 'expand', view.expanded.has(item.key) ? 'Collapse the cluster' : 'Expand the cluster', box);
      b.addEventListener('click', () => { view.toggle(item.key); showPanel(item); });
    }
  }

  /* ---- start ----------------------------------------------------------------- */
  const start = data.levels.find(l => l.level === data.initial_level && l.graph) ? data.initial_level
    : levels.length ? levels[levels.length - 1].level : null;
  if (start === null) {
    $('passes').textContent = 'No graph to draw.';
  } else {
    setLevel(start);
  }
  if (location.hash === '#selftest') setTimeout(selftest, 0);
  else if (location.hash.length > 1) openAddress(new URLSearchParams(location.hash.slice(1)));

  /* page.html#level=1&select=NAME&zoom=1.2&tab=memory: a view to link to
   * (and to take screenshots of) */
  function openAddress(q) {
    if (q.has('level')) setLevel(+q.get('level'));
    if (q.has('tab')) setTab(q.get('tab'));
    const n = q.has('select') ? current().graph.nodes.find(x => x.name === q.get('select')) : null;
    if (q.has('zoom')) view.view.k = Math.min(4, Math.max(0.05, +q.get('zoom') || 1));
    if (n) view.select('n' + n.id, true);
    if (q.has('search')) {
      $('search').value = q.get('search');
      $('search').dispatchEvent(new Event('input'));
    }
  }

  /* clicks a node, switches levels, opens each view, and writes what it saw */
  function selftest() {
    const v = {levels: [], title: $('title').textContent};
    try {
      for (const l of levels) {
        levelBar.querySelector('button[data-level="' + l.level + '"]').click();
        v.levels.push({level: l.level, nodes: l.graph.nodes.length, drawn: view.drawnCount(),
          shown: $('count').textContent});
      }
      levelBar.querySelector('button[data-level="' + levels[0].level + '"]').click();
      const target = [...document.querySelectorAll('#graph g.node.op')][0];
      target.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      v.clicked = view.display.items[view.display.byKey.get(target.dataset.key)].node.name;
      v.panel = {open: !$('panel').hidden, name: $('pname').textContent, inputs: document.querySelectorAll('#pbody .io').length};
      const last = levels[levels.length - 1];
      levelBar.querySelector('button[data-level="' + last.level + '"]').click();
      const fused = view.display.items.find(it => tgCollapsible(it.node));
      if (fused) {
        const before = view.drawnCount();
        view.toggle(fused.key);
        v.cluster = {name: fused.node.name, before, after: view.drawnCount()};
        view.toggle(fused.key);
      }
      $('search').value = 'relu';
      $('search').dispatchEvent(new Event('input'));
      v.search = {query: 'relu', hits: view.matches.length};
      setTab('memory');
      v.memory = {buffers: document.querySelectorAll('#memchart rect.buf').length};
      setTab('profile');
      v.profile = {spans: document.querySelectorAll('#profchart rect.span').length};
      setTab('graph');
    } catch (e) {
      tgErrors.push('selftest: ' + (e && e.stack || e));
    }
    v.errors = tgErrors.slice();
    const pre = document.createElement('pre');
    pre.id = 'tg-selftest';
    pre.textContent = JSON.stringify(v);
    document.body.appendChild(pre);
  }
})();
