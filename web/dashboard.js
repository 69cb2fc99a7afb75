// Brigade dashboard: polls /metrics, keeps a short history of scrapes, and renders one card per
// model. Statistics (counts, errors, stage quantiles, batch sizes, cache hit rate, a router's
// requests per variant) cover the selected window — the change between the newest scrape and
// the one `window` seconds before it, or everything since the server started; requests/s always covers the last `rate` seconds;
// gauges (queue, in flight, busy instances) are the newest values.
//
// For tests, every number is also written, unformatted, to a data-value attribute next to its
// data-metric name, and <body data-scrape-seq> counts rendered scrapes.
'use strict';

(() => {
  const M = BrigadeMetrics;
  const STAGES = ['receive', 'preprocess', 'queue', 'compute', 'postprocess', 'send'];
  const OUTCOMES = ['success', 'error', 'rejected', 'timed_out', 'shed', 'cancelled'];
  const REQUESTS = 'brigade_requests_total';
  const STAGE_HIST = 'brigade_request_stage_duration_seconds';
  const BATCH_HIST = 'brigade_batch_size';
  const ROUTES = 'brigade_route_decisions_total';
  const SPARK_POINTS = 60;

  const params = new URLSearchParams(location.search);
  const number = (name, fallback) => {
    const value = Number(params.get(name));
    return Number.isFinite(value) && value > 0 ? value : fallback;
  };
  const state = {
    window: params.get('window') === 'all' ? 'all' : number('window', 60),
    rateSeconds: number('rate', 5),
    intervalSeconds: number('interval', 2),
    metricsUrl: params.get('metrics') || '/metrics',
    history: [],  // [{time (ms), families}], oldest first
    spark: new Map(),  // model → {rps: [], p99: []}
    cards: new Map(),  // model → DOM references
    seq: 0,
    paused: false,
    timer: null,
  };

  // ---- formatting -------------------------------------------------------------------------

  function formatSeconds(seconds) {
    if (!Number.isFinite(seconds)) return '—';
    const abs = Math.abs(seconds);
    if (abs >= 1) return `${seconds.toPrecision(3)} s`;
    if (abs >= 1e-3) return `${(seconds * 1e3).toPrecision(3)} ms`;
    if (abs >= 1e-6) return `${(seconds * 1e6).toPrecision(3)} µs`;
    return `${Math.round(seconds * 1e9)} ns`;
  }
  function formatCount(value) {
    if (!Number.isFinite(value)) return '—';
    if (Math.abs(value) >= 1e6) return `${(value / 1e6).toPrecision(3)}M`;
    if (Math.abs(value) >= 1e4) return `${(value / 1e3).toPrecision(3)}k`;
    return Number.isInteger(value) ? String(value) : value.toFixed(1);
  }
  function formatRatio(value) {
    return Number.isFinite(value) ? `${(value * 100).toFixed(1)} %` : '—';
  }
  function setMetric(element, value, text) {
    element.dataset.value = Number.isFinite(value) ? String(value) : '';
    element.textContent = text;
  }

  // ---- DOM --------------------------------------------------------------------------------

  function el(tag, attributes = {}, children = []) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (key === 'text') node.textContent = value;
      else if (key === 'class') node.className = value;
      else if (key.startsWith('data-')) node.setAttribute(key, value);
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  function kpi(label, metric) {
    const value = el('div', {class: 'value', 'data-metric': metric, text: '—'});
    const box = el('div', {class: 'kpi'}, [el('div', {class: 'label', text: label}), value]);
    return {box, value};
  }

  function sparkline() {
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', `0 0 ${SPARK_POINTS - 1} 24`);
    svg.setAttribute('preserveAspectRatio', 'none');
    const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    svg.append(line);
    return {svg, line};
  }

  function drawSpark(line, values) {
    const max = Math.max(...values.filter(Number.isFinite), 0);
    const offset = SPARK_POINTS - values.length;
    line.setAttribute('points', values.map((v, i) => {
      const y = max > 0 && Number.isFinite(v) ? 23 - (v / max) * 22 : 23;
      return `${i + offset},${y.toFixed(2)}`;
    }).join(' '));
  }

  function createCard(model) {
    const kpis = {
      rps: kpi('Requests/s', 'rps'),
      requests: kpi('Requests', 'requests'),
      errors: kpi('Errors', 'errors'),
      errorRate: kpi('Error rate', 'error_rate'),
      p99: kpi('p99 total', 'p99_total'),
      queue: kpi('Queue', 'queue_length'),
      inFlight: kpi('In flight', 'in_flight'),
      busy: kpi('Busy instances', 'busy_instances'),
      cache: kpi('Cache hit rate', 'cache_hit_rate'),
    };
    const rpsSpark = sparkline();
    kpis.rps.box.append(rpsSpark.svg);
    const p99Spark = sparkline();
    kpis.p99.box.append(p99Spark.svg);

    const bar = el('div', {class: 'stagebar', 'data-metric': 'stage_bar'});
    const legend = el('div', {class: 'legend'});
    const segments = new Map();
    for (const stage of STAGES) {
      const segment = el('div', {'data-stage': stage, title: stage});
      segment.style.background = `var(--${stage})`;
      segment.style.width = '0';
      bar.append(segment);
      const swatch = el('span', {text: stage});
      swatch.style.setProperty('--swatch', `var(--${stage})`);
      legend.append(swatch);
      segments.set(stage, segment);
    }

    const rows = new Map();
    const tbody = el('tbody');
    for (const stage of [...STAGES, 'total']) {
      const cells = {};
      const row = el('tr', {'data-stage': stage, class: stage === 'total' ? 'total' : ''});
      row.append(el('td', {text: stage === 'total' ? 'total (t0→t5)' : stage}));
      for (const metric of ['count', 'mean', 'p50', 'p90', 'p99']) {
        cells[metric] = el('td', {'data-metric': metric, text: '—'});
        row.append(cells[metric]);
      }
      tbody.append(row);
      rows.set(stage, cells);
    }
    const table = el('table', {}, [
      el('thead', {}, [el('tr', {}, ['stage', 'count', 'mean', 'p50', 'p90', 'p99'].map(
          (h) => el('th', {text: h})))]),
      tbody,
    ]);

    const histogram = el('div', {class: 'histogram', 'data-metric': 'batch_histogram'});
    const outcomes = el('table', {class: 'outcomes'});
    // A router's traffic per variant (hidden for models that route nothing).
    const routingTitle = el('h3', {text: 'Routed to (requests, share, reasons)',
                                   style: 'margin-top:12px'});
    const routing = el('table', {class: 'outcomes', 'data-metric': 'routing'});

    const versions = el('small');
    const section = el('section', {class: 'model', 'data-model': model}, [
      el('h2', {}, [document.createTextNode(model), versions]),
      el('div', {class: 'kpis'}, Object.values(kpis).map((k) => k.box)),
      el('div', {class: 'panels'}, [
        el('div', {}, [el('h3', {text: 't0 → t5 breakdown (share of request time; p50/p90/p99 per stage)'}), bar,
                       legend, table]),
        el('div', {}, [el('h3', {text: 'Batch size (executions)'}), histogram,
                       el('h3', {text: 'Outcomes', style: 'margin-top:12px'}), outcomes,
                       routingTitle, routing]),
      ]),
    ]);
    return {section, kpis, rpsSpark, p99Spark, segments, rows, histogram, outcomes, versions,
            routing, routingTitle};
  }

  // ---- statistics ----------------------------------------------------------------------------

  // The newest scrape at least `seconds` older than the latest, else the oldest kept.
  function baseline(seconds) {
    const latest = state.history[state.history.length - 1];
    let base = state.history[0];
    for (const entry of state.history) {
      if (latest.time - entry.time >= seconds * 1000) base = entry;
    }
    return base === latest ? null : base;
  }

  function histogramFor(families, name, filter) {
    if (!families) return null;
    return M.mergeHistograms(M.histogramSeries(families, name).filter((s) => filter(s.labels)));
  }

  function modelStats(model, now, base) {
    const ofModel = (labels) => labels.model === model;
    const windowed = (name, filter = ofModel) =>
      M.sum(now, name, filter) - (base ? M.sum(base, name, filter) : 0);
    const stats = {outcomes: {}, stages: {}};
    stats.requests = windowed(REQUESTS);
    for (const outcome of OUTCOMES) {
      stats.outcomes[outcome] = windowed(REQUESTS, (l) => ofModel(l) && l.outcome === outcome);
    }
    stats.errors = stats.requests - stats.outcomes.success;
    stats.errorRate = stats.requests > 0 ? stats.errors / stats.requests : NaN;
    for (const stage of [...STAGES, 'total']) {
      const filter = (l) => ofModel(l) && l.stage === stage;
      const h = M.subtractHistogram(histogramFor(now, STAGE_HIST, filter),
                                    histogramFor(base, STAGE_HIST, filter));
      stats.stages[stage] = {
        count: h.count,
        sum: h.sum,
        mean: h.count > 0 ? h.sum / h.count : NaN,
        p50: M.histogramQuantile(0.5, h),
        p90: M.histogramQuantile(0.9, h),
        p99: M.histogramQuantile(0.99, h),
      };
    }
    stats.batches = M.bucketCounts(M.subtractHistogram(histogramFor(now, BATCH_HIST, ofModel),
                                                       histogramFor(base, BATCH_HIST, ofModel)));
    // The response cache's own families; hits are split by tier (memory, redis), summed here.
    const hits = windowed('brigade_response_cache_hits_total');
    const misses = windowed('brigade_response_cache_misses_total');
    stats.cacheHitRate = hits + misses > 0 ? hits / (hits + misses) : NaN;
    stats.queue = M.sum(now, 'brigade_queue_length', ofModel);
    stats.inFlight = M.sum(now, 'brigade_requests_in_flight', ofModel);
    stats.busy = M.sum(now, 'brigade_instances_busy', ofModel);
    // Routing decisions the model made as a router, per variant and reason.
    stats.routes = [];
    for (const variant of M.labelValues(now, ROUTES, 'variant')) {
      const ofVariant = (l) => ofModel(l) && l.variant === variant;
      if (M.sum(now, ROUTES, ofVariant) === 0) continue;
      const reasons = {};
      for (const reason of M.labelValues(now, ROUTES, 'reason')) {
        const n = windowed(ROUTES, (l) => ofVariant(l) && l.reason === reason);
        if (n > 0) reasons[reason] = n;
      }
      stats.routes.push({variant, requests: windowed(ROUTES, ofVariant), reasons});
    }
    stats.versions = M.labelValues(now, REQUESTS, 'version').filter((v) =>
      M.sum(now, REQUESTS, (l) => ofModel(l) && l.version === v) > 0);
    return stats;
  }

  function requestRate(model, now) {
    const base = baseline(state.rateSeconds);
    if (!base) return NaN;
    const latest = state.history[state.history.length - 1];
    const filter = (l) => l.model === model;
    const delta = M.sum(now, REQUESTS, filter) - M.sum(base.families, REQUESTS, filter);
    // The span the rate covers (ms since the epoch), published on <body> for anyone checking it.
    state.rateSpan = {from: base.time, to: latest.time};
    return Math.max(delta, 0) / ((latest.time - base.time) / 1000);
  }

  // ---- rendering -----------------------------------------------------------------------------

  function renderCard(card, stats, rps) {
    const k = card.kpis;
    setMetric(k.rps.value, rps, Number.isFinite(rps) ? rps.toFixed(1) : '—');
    setMetric(k.requests.value, stats.requests, formatCount(stats.requests));
    setMetric(k.errors.value, stats.errors, formatCount(stats.errors));
    k.errors.box.classList.toggle('bad', stats.errors > 0);
    setMetric(k.errorRate.value, stats.errorRate, formatRatio(stats.errorRate));
    setMetric(k.p99.value, stats.stages.total.p99, formatSeconds(stats.stages.total.p99));
    setMetric(k.queue.value, stats.queue, formatCount(stats.queue));
    setMetric(k.inFlight.value, stats.inFlight, formatCount(stats.inFlight));
    setMetric(k.busy.value, stats.busy, formatCount(stats.busy));
    setMetric(k.cache.value, stats.cacheHitRate, formatRatio(stats.cacheHitRate));
    card.versions.textContent = stats.versions.length ? `version ${stats.versions.join(', ')}` : '';

    // Each stage's share of all the time requests spent (its summed seconds over the window), so
    // a stage only some requests pass through (queue and compute skip cache hits) weighs as
    // much as it cost.
    const sums = STAGES.map((s) => stats.stages[s].sum).map((v) => (v > 0 ? v : 0));
    const total = sums.reduce((a, b) => a + b, 0);
    const requests = stats.stages.total.count;
    STAGES.forEach((stage, i) => {
      const share = total > 0 ? sums[i] / total : 0;
      const segment = card.segments.get(stage);
      segment.style.width = `${(share * 100).toFixed(2)}%`;
      segment.dataset.value = String(share);
      const perRequest = requests > 0 ? sums[i] / requests : NaN;
      segment.title = `${stage}: ${(share * 100).toFixed(1)} % of request time ` +
                      `(${formatSeconds(perRequest)} per request)`;
    });
    for (const [stage, cells] of card.rows) {
      const s = stats.stages[stage];
      setMetric(cells.count, s.count, formatCount(s.count));
      for (const q of ['mean', 'p50', 'p90', 'p99']) setMetric(cells[q], s[q], formatSeconds(s[q]));
    }

    const maxCount = Math.max(...stats.batches.map((b) => b.count), 0);
    card.histogram.replaceChildren(...stats.batches.map((b) => {
      const fill = el('div', {class: 'fill'});
      fill.style.height = maxCount > 0 ? `${(b.count / maxCount) * 80}%` : '0';
      const label = Number.isFinite(b.le) ? `≤${b.le}` : '>';
      const bar = el('div', {class: 'bar', 'data-batch-le': String(b.le), title: label}, [
        el('span', {class: 'count', text: b.count > 0 ? formatCount(b.count) : ''}), fill,
        el('span', {text: label}),
      ]);
      bar.dataset.value = String(b.count);
      return bar;
    }));
    if (!stats.batches.length) card.histogram.append(el('div', {class: 'empty', text: 'no batches'}));

    const routed = stats.routes.reduce((sum, r) => sum + r.requests, 0);
    card.routingTitle.hidden = card.routing.hidden = stats.routes.length === 0;
    card.routing.replaceChildren(...stats.routes.map((r) => {
      const count = el('td', {'data-metric': 'route_requests'});
      setMetric(count, r.requests, formatCount(r.requests));
      const share = el('td', {'data-metric': 'route_share'});
      const fraction = routed > 0 ? r.requests / routed : NaN;
      setMetric(share, fraction, formatRatio(fraction));
      const reasons = Object.entries(r.reasons).map(([k, v]) => `${k} ${formatCount(v)}`);
      return el('tr', {'data-variant': r.variant}, [el('td', {text: r.variant}), count, share,
                                                   el('td', {text: reasons.join(', ')})]);
    }));

    card.outcomes.replaceChildren(...OUTCOMES.map((outcome) => {
      const cell = el('td', {'data-metric': 'outcome'});
      setMetric(cell, stats.outcomes[outcome], formatCount(stats.outcomes[outcome]));
      return el('tr', {'data-outcome': outcome}, [el('td', {text: outcome}), cell]);
    }));

    const spark = card.spark;
    spark.rps.push(rps);
    spark.p99.push(stats.stages.total.p99);
    for (const series of [spark.rps, spark.p99]) {
      if (series.length > SPARK_POINTS) series.shift();
    }
    drawSpark(card.rpsSpark.line, spark.rps);
    drawSpark(card.p99Spark.line, spark.p99);
  }

  function render() {
    const latest = state.history[state.history.length - 1];
    const now = latest.families;
    const base = state.window === 'all' ? null : baseline(state.window)?.families || null;
    const models = [...new Set([
      ...M.labelValues(now, REQUESTS, 'model'),
      ...M.labelValues(now, 'brigade_queue_length', 'model'),
      ...M.labelValues(now, ROUTES, 'model'),
    ])].filter((m) => m !== '');
    const main = document.getElementById('models');
    for (const model of models) {
      if (!state.cards.has(model)) {
        const card = createCard(model);
        card.spark = {rps: [], p99: []};
        state.cards.set(model, card);
      }
      const card = state.cards.get(model);
      renderCard(card, modelStats(model, now, base), requestRate(model, now));
    }
    main.replaceChildren(...models.map((m) => state.cards.get(m).section));
    if (!models.length) main.append(el('p', {class: 'empty', text: 'No models have reported yet.'}));

    const unresolved = M.sum(now, REQUESTS, (l) => l.model === '');
    const dropped = M.sum(now, 'brigade_trace_spans_dropped_total');
    document.getElementById('footer').textContent =
        `Requests without a model: ${formatCount(unresolved)} · trace spans dropped: ` +
        `${formatCount(dropped)} · window: ${state.window === 'all' ? 'since start' :
                                                                      `${state.window} s`}`;
  }

  // ---- polling -------------------------------------------------------------------------------

  function setStatus(text, isError) {
    const status = document.getElementById('status');
    status.textContent = text;
    status.classList.toggle('error', isError);
  }

  async function poll() {
    if (state.paused) return;
    try {
      const response = await fetch(state.metricsUrl, {cache: 'no-store'});
      if (!response.ok) throw new Error(`${state.metricsUrl}: HTTP ${response.status}`);
      const families = M.parse(await response.text());
      const time = Date.now();
      state.history.push({time, families});
      const keepMs = Math.max(state.window === 'all' ? 0 : state.window, state.rateSeconds) * 1000 +
                     state.intervalSeconds * 2000;
      while (state.history.length > 2 && time - state.history[1].time > keepMs) state.history.shift();
      render();
      state.seq += 1;
      document.body.dataset.scrapeSeq = String(state.seq);
      if (state.rateSpan) {
        document.body.dataset.rateFrom = String(state.rateSpan.from);
        document.body.dataset.rateTo = String(state.rateSpan.to);
      }
      document.body.dataset.window = String(state.window);
      delete document.body.dataset.lastError;
      setStatus(`updated ${new Date(time).toLocaleTimeString()}`, false);
    } catch (error) {
      document.body.dataset.lastError = String(error.message || error);
      setStatus(`scrape failed: ${error.message || error}`, true);
    }
  }

  function schedule() {
    clearInterval(state.timer);
    state.timer = setInterval(poll, state.intervalSeconds * 1000);
  }

  function bindControls() {
    const windowSelect = document.getElementById('window');
    if (![...windowSelect.options].some((o) => o.value === String(state.window))) {
      windowSelect.append(el('option', {value: String(state.window), text: `last ${state.window} s`}));
    }
    windowSelect.value = String(state.window);
    windowSelect.addEventListener('change', () => {
      state.window = windowSelect.value === 'all' ? 'all' : Number(windowSelect.value);
      poll();
    });
    const intervalSelect = document.getElementById('interval');
    if (![...intervalSelect.options].some((o) => o.value === String(state.intervalSeconds))) {
      intervalSelect.append(el('option', {value: String(state.intervalSeconds),
                                          text: `${state.intervalSeconds} s`}));
    }
    intervalSelect.value = String(state.intervalSeconds);
    intervalSelect.addEventListener('change', () => {
      state.intervalSeconds = Number(intervalSelect.value);
      schedule();
    });
    const pause = document.getElementById('pause');
    pause.addEventListener('click', () => {
      state.paused = !state.paused;
      pause.textContent = state.paused ? 'Resume' : 'Pause';
      if (!state.paused) poll();
    });
  }

  bindControls();
  poll();
  schedule();
})();
