/* The HTML report's script (render-html.c embeds it; its hash is in the
 * page's Content-Security-Policy). It draws the timeline, the flame graph
 * of the live set at the selected moment and the operations table from
 * the JSON block #memtrace-data. Every string from the trace reaches the
 * page through textContent or an attribute set with setAttribute: never as
 * markup. */
(function () {
	'use strict';

	var SVGNS = 'http://www.w3.org/2000/svg';
	var D = JSON.parse(document.getElementById('memtrace-data').textContent);
	var KINDS = { py: 'Python', fw: 'framework', cuda: 'CUDA', native: 'native', none: 'missing' };
	var state = { sel: D.selected || 0, zoom: null, inverted: false, sort: 'moment', filter: '' };

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined && text !== null) e.textContent = String(text);
		return e;
	}

	function sv(tag, attrs, text) {
		var e = document.createElementNS(SVGNS, tag);
		for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
		if (text !== undefined) e.textContent = String(text);
		return e;
	}

	/* as the text report writes them: fmt_size and fmt_seconds */
	function bytes(b) {
		var units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
		if (b < 1024) return b + ' B';
		var v = b / 1024, u = 0;
		while (v >= 1023.95 && u + 1 < units.length) { v /= 1024; u++; }
		return v.toFixed(1) + ' ' + units[u];
	}

	/* a value at or below v with two significant binary digits (768 MiB, 1 GiB) */
	function niceTick(v) {
		if (v <= 0) return 0;
		var p = Math.pow(2, Math.floor(Math.log2(v)));
		return v >= 1.5 * p ? 1.5 * p : p;
	}

	/* axis labels with as many decimals as the scale needs */
	function axisTime(ns, end) {
		if (end >= 1e10) return (ns / 1e9).toFixed(0) + ' s';
		if (end >= 1e8) return (ns / 1e9).toFixed(end >= 1e9 ? 1 : 2) + ' s';
		if (end >= 1e5) return (ns / 1e6).toFixed(end >= 1e7 ? 0 : end >= 1e6 ? 1 : 2) + ' ms';
		return (ns / 1e3).toFixed(1) + ' µs';
	}

	function secs(ns) { return (ns / 1e9).toFixed(3) + ' s'; }

	/* ---- tooltip ---- */
	var tip = el('div', 'tip');
	document.body.appendChild(tip);

	function showTip(ev, lines) {
		tip.textContent = '';
		lines.forEach(function (l) { tip.appendChild(el('div', null, l)); });
		tip.style.display = 'block';
		var x = ev.clientX + 14, y = ev.clientY + 14;
		var w = tip.offsetWidth, h = tip.offsetHeight;
		if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - 14);
		if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - h - 14);
		tip.style.left = x + 'px';
		tip.style.top = y + 'px';
	}

	function hideTip() { tip.style.display = 'none'; }

	function frameLabel(f) { return D.frames[f] ? D.frames[f][0] : '??'; }
	function frameKind(f) { return D.frames[f] ? D.frames[f][1] : 'none'; }

	/* ---- timeline ---- */
	var TL = D.timeline;

	function tlEnd() {
		var end = Math.max(TL.end || 0, 1);
		TL.buckets.forEach(function (b) { end = Math.max(end, (b[0] + 1) * TL.width); });
		D.moments.forEach(function (m) { end = Math.max(end, m.t); });
		return end;
	}

	/* device bytes live at time t: the last value of the bucket at or before it */
	function liveAt(t) {
		var i = Math.floor(t / TL.width), best = null;
		for (var k = 0; k < TL.buckets.length && TL.buckets[k][0] <= i; k++) best = TL.buckets[k];
		return best;
	}

	function nearestMoment(t) {
		var best = 0, bd = Infinity;
		D.moments.forEach(function (m, i) {
			var d = Math.abs(m.t - t);
			if (d < bd || (d === bd && m.kind !== 'sample')) { bd = d; best = i; }
		});
		return best;
	}

	function drawTimeline() {
		var box = document.getElementById('timeline');
		var old = box.querySelector('svg.tl');
		if (old) box.removeChild(old);
		var W = Math.max(box.clientWidth, 300), H = 150, L = 66, R = 14, T = 16, B = 20;
		var end = tlEnd();
		/* from the first event: a program that starts CUDA late would
		 * otherwise be a sliver at the right */
		var t0 = Math.min(Math.max(0, Math.floor((TL.first || 0) / TL.width) * TL.width), end - 1);
		var peak = TL.peak[1] || 0, total = TL.total || 0;
		var ymax = Math.max(peak, 1);
		if (total && total <= 4 * peak) ymax = Math.max(ymax, total);
		ymax *= 1.05;
		var X = function (t) { return L + (W - L - R) * (Math.max(t, t0) - t0) / (end - t0); };
		var Y = function (v) { return T + (H - T - B) * (1 - v / ymax); };
		var svg = sv('svg', { 'class': 'tl', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H });

		for (var g = 0; g <= 2; g++) {
			var v = niceTick(ymax / 1.05) * g / 2;
			svg.appendChild(sv('line', { 'class': 'tl-grid', x1: L, x2: W - R, y1: Y(v), y2: Y(v) }));
			svg.appendChild(sv('text', { x: L - 4, y: Y(v) + 4, 'text-anchor': 'end' }, bytes(Math.round(v))));
		}
		for (var k = 0; k <= 5; k++) {
			var t = t0 + (end - t0) * k / 5;
			svg.appendChild(sv('text', { x: X(t), y: H - 5, 'text-anchor': k === 0 ? 'start' : k === 5 ? 'end' : 'middle' }, axisTime(t, end - t0)));
		}
		/* the highest value of each bucket, as steps: peaks are never lost */
		var d = 'M' + X(t0) + ',' + Y(0), prev = 0;
		TL.buckets.forEach(function (b) {
			var x0 = X(b[0] * TL.width), x1 = X((b[0] + 1) * TL.width);
			d += 'L' + x0 + ',' + Y(prev) + 'L' + x0 + ',' + Y(b[2]) + 'L' + x1 + ',' + Y(b[2]) + 'L' + x1 + ',' + Y(b[3]);
			prev = b[3];
		});
		d += 'L' + X(end) + ',' + Y(prev) + 'L' + X(end) + ',' + Y(0) + 'Z';
		svg.appendChild(sv('path', { 'class': 'tl-area', d: d }));
		svg.appendChild(sv('line', { 'class': 'tl-axis', x1: L, x2: W - R, y1: Y(0), y2: Y(0) }));
		if (total && total <= ymax) {
			svg.appendChild(sv('line', { 'class': 'tl-total', x1: L, x2: W - R, y1: Y(total), y2: Y(total) }));
			svg.appendChild(sv('text', { x: L + 4, y: Y(total) - 3 }, 'device total ' + bytes(total)));
		}
		var lastLabel = -Infinity;
		TL.markers.forEach(function (m) {
			var x = X(m[0]);
			if (m[1] === 3) {
				svg.appendChild(sv('line', { 'class': 'tl-oom', x1: x, x2: x, y1: T - 4, y2: Y(0) }));
			} else if (m[1] === 13) {
				svg.appendChild(sv('line', { 'class': 'tl-mark', x1: x, x2: x, y1: T, y2: Y(0) }));
				/* the mark's name where there is room for it */
				if (typeof m[3] === 'string' && x - lastLabel >= 70) {
					var lbl = m[3].length > 12 ? m[3].slice(0, 11) + '…' : m[3];
					svg.appendChild(sv('text', { 'class': 'tl-mark-l', x: x + 2, y: T + 8 }, lbl));
					lastLabel = x;
				}
			} else {
				svg.appendChild(sv('line', { 'class': 'tl-graph', x1: x, x2: x, y1: Y(0) - 6, y2: Y(0) }));
			}
		});
		var ooms = TL.markers.filter(function (m) { return m[1] === 3; });
		if (ooms.length) {
			var last = ooms[ooms.length - 1];
			svg.appendChild(sv('text', { 'class': 'tl-oom-l', x: X(last[0]) - 3, y: T - 5, 'text-anchor': 'end' },
				(ooms.length > 1 ? ooms.length + ' OOMs, last ' : 'OOM ') + bytes(last[2])));
		}
		if (peak) {
			svg.appendChild(sv('circle', { 'class': 'tl-peak', cx: X(TL.peak[0]), cy: Y(peak), r: 3.5 }));
			var right = X(TL.peak[0]) > W - 140;
			svg.appendChild(sv('text', { 'class': 'tl-peak-l', x: X(TL.peak[0]) + (right ? -5 : 5), y: Y(peak) + 12, 'text-anchor': right ? 'end' : 'start' }, 'peak ' + bytes(peak)));
		}
		D.moments.forEach(function (m) {
			svg.appendChild(sv('circle', { 'class': 'tl-moment', cx: X(m.t), cy: Y(0), r: m.kind === 'sample' ? 1.6 : 3 }));
		});
		var sel = D.moments[state.sel];
		if (sel) svg.appendChild(sv('line', { 'class': 'tl-sel', x1: X(sel.t), x2: X(sel.t), y1: T, y2: Y(0) }));
		var hover = sv('line', { 'class': 'tl-hover', x1: 0, x2: 0, y1: T, y2: Y(0), visibility: 'hidden' });
		svg.appendChild(hover);
		var overlay = sv('rect', { x: L, y: 0, width: W - L - R, height: H, fill: 'transparent', cursor: 'crosshair' });
		svg.appendChild(overlay);
		function timeOf(ev) {
			var r = svg.getBoundingClientRect();
			var x = (ev.clientX - r.left) * W / r.width;
			return Math.max(t0, Math.min(end, t0 + (x - L) / (W - L - R) * (end - t0)));
		}
		overlay.addEventListener('mousemove', function (ev) {
			var t = timeOf(ev), b = liveAt(t), x = X(t);
			hover.setAttribute('x1', x);
			hover.setAttribute('x2', x);
			hover.setAttribute('visibility', 'visible');
			var lines = ['at ' + secs(t)];
			if (b) {
				lines.push(bytes(b[3]) + ' live' + (b[2] !== b[1] ? ' (' + bytes(b[1]) + ' to ' + bytes(b[2]) + ' around then)' : ''));
			} else {
				lines.push('nothing live yet');
			}
			TL.markers.forEach(function (m) {
				if (Math.abs(X(m[0]) - x) < 3) lines.push(m[1] === 3 ? 'OOM: ' + bytes(m[2]) + ' requested' : m[1] === 13 ? 'mark' + (typeof m[3] === 'string' ? ': ' + m[3] : '') : 'graph event');
			});
			lines.push('click: show the live set here');
			showTip(ev, lines);
		});
		overlay.addEventListener('mouseleave', function () { hover.setAttribute('visibility', 'hidden'); hideTip(); });
		overlay.addEventListener('click', function (ev) { select(nearestMoment(timeOf(ev))); });
		box.appendChild(svg);
	}

	/* ---- the selected moment: buttons, flame graph ---- */
	function momentTitle(m) {
		var what = m.kind === 'oom' ? 'at ' + m.name : m.kind === 'peak' ? 'at the peak' :
			m.kind === 'end' ? 'at the end' : 'at ' + m.name;
		return 'Live ' + what + ' (' + secs(m.t) + '): ' + bytes(m.live) +
			(m.count ? ' in ' + m.count + ' allocations' : '');
	}

	function drawMomentBar() {
		var box = document.getElementById('moment');
		var bar = box.querySelector('.moments');
		if (!bar) {
			bar = el('div', 'moments');
			box.insertBefore(bar, document.getElementById('flame'));
		}
		bar.textContent = '';
		bar.appendChild(el('span', null, 'Show:'));
		D.moments.forEach(function (m, i) {
			if (m.kind === 'sample' && i !== state.sel) return;
			var b = el('button', i === state.sel ? 'on' : '', m.kind === 'sample' ? m.name : m.name.charAt(0).toUpperCase() + m.name.slice(1));
			b.addEventListener('click', function () { select(i); });
			bar.appendChild(b);
		});
		bar.appendChild(el('span', 'sub', '· or click the timeline ·'));
		var inv = el('button', state.inverted ? 'on' : '', 'allocating frame on top');
		inv.addEventListener('click', function () { state.inverted = !state.inverted; state.zoom = null; drawMoment(); });
		bar.appendChild(inv);
		var lg = el('span', 'flegend');
		Object.keys(KINDS).forEach(function (k) { if (k !== 'none') lg.appendChild(el('span', 'k-' + k, KINDS[k])); });
		bar.appendChild(lg);
		if (D.stacks_left_out)
			bar.appendChild(el('span', 'sub', '· ' + D.stacks_left_out + ' smaller stacks are summed in (other stacks): the page keeps ' +
				D.stacks.length + ', the JSON report has them all'));
		document.getElementById('moment-title').textContent = momentTitle(D.moments[state.sel]);
	}

	function node(name, frame) { return { name: name, frame: frame, bytes: 0, count: 0, kids: new Map(), parent: null }; }

	function buildTree(m) {
		var root = node('all', -1);
		m.groups.forEach(function (g) {
			var st = D.stacks[g[0]] || [];
			if (state.inverted) st = st.slice().reverse();
			var n = root;
			n.bytes += g[1]; n.count += g[2];
			st.forEach(function (f) {
				var c = n.kids.get(f);
				if (!c) { c = node(frameLabel(f), f); c.parent = n; n.kids.set(f, c); }
				c.bytes += g[1]; c.count += g[2];
				n = c;
			});
		});
		if (m.other[0]) {
			var o = node('(other stacks)', -2);
			o.bytes = m.other[0]; o.count = m.other[1]; o.parent = root;
			root.kids.set(-2, o);
			root.bytes += o.bytes; root.count += o.count;
		}
		root.name = 'all: ' + bytes(root.bytes);
		return root;
	}

	function kids(n) {
		return Array.from(n.kids.values()).sort(function (a, b) { return b.bytes - a.bytes || (a.name < b.name ? -1 : 1); });
	}

	function drawFlame() {
		var box = document.getElementById('flame');
		box.textContent = '';
		var m = D.moments[state.sel];
		if (!m) return;
		var root = buildTree(m);
		if (!root.bytes) {
			box.appendChild(el('p', 'sub', 'No device memory was live at this moment.'));
			return;
		}
		var focus = state.zoom || root, path = [];
		for (var a = focus; a; a = a.parent) path.unshift(a);
		var W = Math.max(box.clientWidth - 2, 300), RH = 17, MAXN = 2000;
		var rows = [], drawn = 0;
		/* ancestors of the focus: full width, click to zoom out */
		path.forEach(function (n, d) { rows.push({ n: n, d: d, x: 0, w: W }); });
		var queue = [{ n: focus, d: path.length - 1, x: 0, w: W }];
		/* children too narrow to see, or past MAXN, are one "(n smaller)"
		 * box: they come last, largest first, so they are contiguous */
		while (queue.length && drawn < MAXN) {
			var it = queue.shift(), x = it.x, rest = null;
			kids(it.n).forEach(function (c) {
				var w = it.w * c.bytes / it.n.bytes;
				if (w >= 0.5 && drawn < MAXN) {
					var r = { n: c, d: it.d + 1, x: x, w: w };
					rows.push(r); queue.push(r); drawn++;
				} else {
					if (!rest) { rest = { n: node('', -3), d: it.d + 1, x: x, w: 0, k: 0 }; rest.n.parent = it.n; }
					rest.w += w; rest.k++; rest.n.bytes += c.bytes; rest.n.count += c.count;
				}
				x += w;
			});
			if (rest && rest.w >= 0.5) {
				rest.n.name = '(' + rest.k + ' smaller)';
				rows.push(rest); drawn++;
			}
		}
		var depth = 0;
		rows.forEach(function (r) { depth = Math.max(depth, r.d); });
		var svg = sv('svg', { viewBox: '0 0 ' + W + ' ' + (depth + 1) * RH, width: W, height: (depth + 1) * RH });
		rows.forEach(function (r) {
			var n = r.n;
			var kind = n.frame === -1 ? 'root' : n.frame <= -2 ? 'other' : frameKind(n.frame);
			var g = sv('g', {});
			g.appendChild(sv('rect', { 'class': 'k-' + kind, x: r.x, y: r.d * RH, width: Math.max(r.w, 0.5), height: RH - 1 }));
			var chars = Math.floor((r.w - 6) / 6.7);
			if (chars >= 3) {
				var label = n.name.length > chars ? n.name.slice(0, chars - 1) + '…' : n.name;
				g.appendChild(sv('text', { x: r.x + 3, y: r.d * RH + 12 }, label));
			}
			g.addEventListener('mousemove', function (ev) {
				showTip(ev, [n.name, bytes(n.bytes) + ' (' + (100 * n.bytes / root.bytes).toFixed(1) + '% of the live set)' +
					(n.count ? ', ' + n.count + ' allocations' : ''),
					n.frame === -3 ? 'too small to draw one by one' : (KINDS[kind] ? KINDS[kind] + ' frame · ' : '') + 'click to zoom']);
			});
			g.addEventListener('mouseleave', hideTip);
			if (n.frame !== -3) /* a folded box has no children to zoom into */
				g.addEventListener('click', function () { state.zoom = n === focus ? n.parent : n; hideTip(); drawFlame(); });
			svg.appendChild(g);
		});
		box.appendChild(svg);
	}

	/* ---- the cache's segments and the blocks inside them ---- */
	var BLOCK_STATES = ['tensor', 'freed, free pending', 'free'];
	var BLOCK_CLASSES = ['s-alloc', 's-pending', 's-free'];

	/* The line a block's tensor was made on: the innermost Python frame
	 * of its stack, else the innermost frame. */
	function blockLine(ref) {
		var st = ref >= 0 ? D.stacks[ref] || [] : [];
		for (var i = st.length - 1; i >= 0; i--)
			if (frameKind(st[i]) === 'py') return frameLabel(st[i]);
		return st.length ? frameLabel(st[st.length - 1]) : '';
	}

	/* Each segment a bar, as wide as its size against the largest; its
	 * blocks inside it end to end, to scale (memory_viz's segment view). */
	function drawSegments() {
		var box = document.getElementById('segments');
		box.textContent = '';
		var m = D.moments[state.sel];
		if (!m || !m.segments) return;
		var what = m.kind === 'peak' ? 'at its peak' : m.kind === 'end' ? 'at the end' : 'at ' + m.name;
		box.appendChild(el('p', 'segs-title', m.bfc
			? "Inside TensorFlow's BFC arena " + what + ': ' + bytes(m.reserved) + ' in ' +
			  m.segments.length + ' regions, ' + bytes(m.allocated) + ' allocated to tensors'
			: "Inside PyTorch's cache " + what + ': ' + bytes(m.reserved) + ' reserved in ' +
			  m.segments.length + ' segments, ' + bytes(m.allocated) + ' allocated to tensors'));
		var lg = el('div', 'legend');
		BLOCK_CLASSES.forEach(function (c, i) { lg.appendChild(el('span', c, BLOCK_STATES[i])); });
		box.appendChild(lg);
		if (!m.segments.length) return;
		var W = Math.max(box.clientWidth - 2, 300), LW = 90, RH = 14, biggest = 0;
		m.segments.forEach(function (s) { biggest = Math.max(biggest, s[1]); });
		var svg = sv('svg', { 'class': 'segs', viewBox: '0 0 ' + W + ' ' + m.segments.length * RH,
			width: W, height: m.segments.length * RH });
		var scale = (W - LW) / biggest;
		m.segments.forEach(function (s, row) {
			var y = row * RH, seg = sv('g', { 'data-segment': s[0] + ',' + s[1] });
			seg.appendChild(sv('text', { x: 0, y: y + 11 }, bytes(s[1]) + (s[2] ? ' exp.' : '')));
			seg.appendChild(sv('rect', { 'class': 's-seg', x: LW, y: y, width: Math.max(s[1] * scale, 0.5), height: RH - 2 }));
			var at = s[0];
			(s[3] || []).forEach(function (b) {
				var r = sv('rect', { 'class': BLOCK_CLASSES[b[1]], x: LW + (at - s[0]) * scale, y: y,
					width: Math.max(b[0] * scale, 0.5), height: RH - 2, 'data-block': at + ',' + b[0] + ',' + b[1] });
				var addr = at, line = blockLine(b[2]);
				r.addEventListener('mousemove', function (ev) {
					showTip(ev, [bytes(b[0]) + ' · ' + BLOCK_STATES[b[1]] + (b[1] < 2 ? ' (asked for ' + bytes(b[3]) + ')' : ''),
						line ? 'allocated at ' + line : '', 'at 0x' + addr.toString(16) + ' in a segment of ' + bytes(s[1])]);
				});
				r.addEventListener('mouseleave', hideTip);
				seg.appendChild(r);
				at += b[0];
			});
			if (!s[3])
				seg.appendChild(sv('text', { x: LW + 3, y: y + 11 }, 'blocks not listed: the page keeps ' + 2000 + ' per moment'));
			svg.appendChild(seg);
		});
		box.appendChild(svg);
	}

	function drawMoment() {
		drawMomentBar();
		drawFlame();
		drawSegments();
		drawOps();
	}

	function select(i) {
		state.sel = i;
		state.zoom = null;
		drawTimeline();
		drawMoment();
		drawThreads();
	}

	/* ---- the operations table ---- */
	var COLS = [
		{ key: 'site', name: 'site', num: false },
		{ key: 'moment', name: 'at the selected moment', num: true },
		{ key: 'peak', name: 'at the peak', num: true },
		{ key: 'oom', name: 'at the OOM', num: true },
		{ key: 'total', name: 'total allocated', num: true },
		{ key: 'count', name: 'allocations', num: true, plain: true },
		{ key: 'leaked', name: 'leaked (live at end)', num: true }
	];

	function siteRows() {
		var at = new Map(), m = D.moments[state.sel];
		if (m) m.groups.forEach(function (g) { at.set(g[0], (at.get(g[0]) || 0) + g[1]); });
		return D.sites.map(function (s) {
			return { stack: s[0], site: s[1], moment: at.get(s[0]) || 0, peak: s[2], oom: s[3], total: s[4], count: s[5], leaked: s[6] };
		});
	}

	function stackText(s) {
		var st = (D.stacks[s] || []).slice().reverse();
		return st.map(function (f, i) { return '#' + i + ' ' + frameLabel(f); }).join('\n');
	}

	function drawOps() {
		var box = document.getElementById('ops');
		var wrap = box.querySelector('.ops-wrap');
		if (!wrap) {
			var bar = el('div', 'ops-bar');
			var input = el('input');
			input.type = 'search';
			input.placeholder = 'filter by site';
			input.addEventListener('input', function () { state.filter = input.value.toLowerCase(); drawOps(); });
			bar.appendChild(input);
			bar.appendChild(el('span', 'sub count'));
			box.appendChild(bar);
			wrap = el('div', 'ops-wrap');
			box.appendChild(wrap);
		}
		wrap.textContent = '';
		if (!D.has_oom) COLS[3].hidden = true;
		var rows = siteRows().filter(function (r) { return !state.filter || r.site.toLowerCase().indexOf(state.filter) >= 0; });
		var key = state.sort;
		rows.sort(function (a, b) {
			if (key === 'site') return a.site < b.site ? -1 : a.site > b.site ? 1 : 0;
			return b[key] - a[key] || b.peak - a.peak || b.total - a.total;
		});
		box.querySelector('.count').textContent = rows.length + ' of ' + D.sites.length + ' sites' +
			(D.sites_other[0] ? ' (' + D.sites_other[0] + ' smaller sites summed below)' : '') +
			' · click a column to sort; hover a site for its stack';
		var t = el('table', 'ops'), tr = el('tr');
		COLS.forEach(function (c) {
			if (c.hidden) return;
			var th = el('th', (c.num ? 'n' : '') + (state.sort === c.key ? ' sorted' : ''), c.name);
			th.addEventListener('click', function () { state.sort = c.key; drawOps(); });
			tr.appendChild(th);
		});
		t.appendChild(tr);
		rows.slice(0, 300).forEach(function (r) {
			var row = el('tr');
			row.title = stackText(r.stack);
			COLS.forEach(function (c) {
				if (c.hidden) return;
				var v = r[c.key];
				row.appendChild(el('td', c.num ? 'n' : 'site', c.num ? (c.plain ? v : v ? bytes(v) : '·') : v));
			});
			t.appendChild(row);
		});
		var o = D.sites_other;
		if (o[0] && !state.filter) {
			var orow = el('tr');
			var vals = ['(' + o[0] + ' other sites)', null, o[1], o[2], o[3], o[4], o[5]];
			COLS.forEach(function (c, i) {
				if (c.hidden) return;
				var v = vals[i];
				orow.appendChild(el('td', c.num ? 'n' : 'site', v === null ? '' : c.num ? (c.plain ? v : bytes(v)) : v));
			});
			t.appendChild(orow);
		}
		if (rows.length > 300) {
			var more = el('tr');
			more.appendChild(el('td', 'sub', (rows.length - 300) + ' more: filter to narrow'));
			t.appendChild(more);
		}
		wrap.appendChild(t);
	}

	/* "Live at the peak, by thread": D.threads is [tid, name, bytes, allocations] */
	function drawThreads() {
		var box = document.getElementById('threads');
		if (!box || !D.threads) return;
		var t = el('table', 'grid'), tr = el('tr');
		['thread allocated on', 'bytes', 'allocations'].forEach(function (n) { tr.appendChild(el('th', null, n)); });
		t.appendChild(tr);
		function row(label, b, n) {
			var r = el('tr');
			r.appendChild(el('td', null, label));
			var c = el('td', 'n', bytes(b));
			c.title = b + ' bytes';
			r.appendChild(c);
			r.appendChild(el('td', 'n', n === null ? '' : n));
			t.appendChild(r);
		}
		D.threads.forEach(function (x) {
			var label = x[0] === null ? '(other threads)' : x[1] !== null ? x[1] + ' (' + x[0] + ')' : 'thread ' + x[0];
			row(label, x[2], x[3]);
		});
		if (D.threads_rest) row('not by thread (graph memory, VMM mappings, seen by CUPTI alone)', D.threads_rest, null);
		box.appendChild(t);
	}

	function init() {
		var h = document.querySelector('#timeline h2');
		if (h) h.appendChild(el('span', 'sub', 'peak ' + bytes(TL.peak[1] || 0) + ' at ' + secs(TL.peak[0] || 0) +
			(TL.markers_dropped ? ' · ' + TL.markers_dropped + ' markers not drawn' : '') +
			' · hover for values, click to choose the moment shown below'));
		drawTimeline();
		drawMoment();
		/* when the first views were drawn, in ms from the page's request: what
		 * the browser test holds under a second whatever the trace */
		document.documentElement.setAttribute('data-drawn-ms', String(Math.round(performance.now())));
		var pending = null;
		window.addEventListener('resize', function () {
			if (pending) clearTimeout(pending);
			pending = setTimeout(function () { drawTimeline(); drawFlame(); }, 100);
		});
	}

	init();
}());
