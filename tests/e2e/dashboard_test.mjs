#!/usr/bin/env node
// End-to-end test of the live dashboard (GET /) against a running Brigade server:
//   1. picks a READY model (or --model) and builds valid infer bodies from its metadata;
//   2. opens the page in headless Chromium (Debian's /usr/bin/chromium through playwright-core);
//   3. drives load (a few concurrent HTTP clients, some malformed requests) and checks the
//      page's requests/s against the rate the clients achieved;
//   4. stops the load, waits for the page's next scrapes, and checks every number the page shows
//      (requests, outcomes, errors, gauges, cache hit rate, per-stage count/mean/p50/p90/p99,
//      batch-size histogram) against /metrics, computed here independently of the page's code;
//   5. saves a screenshot.
//
// Usage:
//   node tests/e2e/dashboard_test.mjs --url http://127.0.0.1:8000 [--model NAME]
//   node tests/e2e/dashboard_test.mjs --server-cmd "build/src/telemetry/telemetry_dashboard_fixture"
// Options: --screenshot PATH (default dashboard.png), --load-seconds N (default 8),
//   --concurrency N (default 4), --chromium PATH (default /usr/bin/chromium).
// Needs: npm install --prefix tests (playwright-core), apt-get install chromium.
// Exit status 0 when every check passes, 1 otherwise (each failure is printed).

import {spawn} from 'node:child_process';
import {createRequire} from 'node:module';
import process from 'node:process';
import {setTimeout as sleep} from 'node:timers/promises';

const require = createRequire(import.meta.url);
const {chromium} = require('playwright-core');

const STAGES = ['receive', 'preprocess', 'queue', 'compute', 'postprocess', 'send', 'total'];
const OUTCOMES = ['success', 'error', 'rejected', 'timed_out', 'shed', 'cancelled'];
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run'];

function parseArgs(argv) {
  const options = {screenshot: 'dashboard.png', loadSeconds: 8, concurrency: 4,
    chromium: '/usr/bin/chromium', rateSeconds: 4};
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${key}`);
    const name = key.replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    options[name] = ['loadSeconds', 'concurrency'].includes(name) ? Number(value) : value;
  }
  if (!options.url && !options.serverCmd) throw new Error('give --url or --server-cmd');
  return options;
}

// ---- an independent reading of /metrics -------------------------------------------------

function parseMetrics(text) {
  const samples = [];
  const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
  for (const raw of text.split('\n')) {
    if (raw.startsWith('#') || raw.trim() === '') continue;
    const m = line.exec(raw);
    if (!m) throw new Error(`unparsable metrics line: ${raw}`);
    const labels = {};
    for (const pair of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]] = pair[2].replace(/\\n/g, '\n').replace(/\\(.)/g, '$1');
    }
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    samples.push({name: m[1], labels, value});
  }
  return samples;
}

function total(samples, name, filter) {
  return samples.filter((s) => s.name === name && filter(s.labels))
      .reduce((sum, s) => sum + s.value, 0);
}

// Cumulative buckets by upper bound, summed over the series that pass `filter`.
function buckets(samples, name, filter) {
  const byLe = new Map();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || !filter(s.labels)) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) || 0) + s.value);
  }
  return [...byLe.entries()].sort((a, b) => a[0] - b[0]);
}

// Prometheus histogram_quantile on [[le, cumulative count], ...].
function quantile(q, cumulative) {
  if (cumulative.length < 2) return NaN;
  const count = cumulative[cumulative.length - 1][1];
  if (count === 0) return NaN;
  const rank = q * count;
  let i = 0;
  while (i < cumulative.length - 1 && cumulative[i][1] < rank) i++;
  if (i === cumulative.length - 1) return cumulative[cumulative.length - 2][0];
  const [upper, atUpper] = cumulative[i];
  const [lower, atLower] = i === 0 ? [0, 0] : cumulative[i - 1];
  return lower + (upper - lower) * (rank - atLower) / (atUpper - atLower);
}

function expectedFor(model, samples) {
  const ofModel = (l) => l.model === model;
  const out = {outcomes: {}, stages: {}, batches: []};
  out.requests = total(samples, 'brigade_requests_total', ofModel);
  for (const o of OUTCOMES) {
    out.outcomes[o] = total(samples, 'brigade_requests_total', (l) => ofModel(l) && l.outcome === o);
  }
  out.errors = out.requests - out.outcomes.success;
  out.queue_length = total(samples, 'brigade_queue_length', ofModel);
  out.in_flight = total(samples, 'brigade_requests_in_flight', ofModel);
  out.busy_instances = total(samples, 'brigade_instances_busy', ofModel);
  const hits = total(samples, 'brigade_response_cache_hits_total', ofModel);  // all tiers
  const misses = total(samples, 'brigade_response_cache_misses_total', ofModel);
  out.cache_hit_rate = hits + misses > 0 ? hits / (hits + misses) : NaN;
  for (const stage of STAGES) {
    const f = (l) => ofModel(l) && l.stage === stage;
    const name = 'brigade_request_stage_duration_seconds';
    const cumulative = buckets(samples, name, f);
    const count = total(samples, `${name}_count`, f);
    out.stages[stage] = {count, mean: count > 0 ? total(samples, `${name}_sum`, f) / count : NaN,
      p50: quantile(0.5, cumulative), p90: quantile(0.9, cumulative),
      p99: quantile(0.99, cumulative)};
  }
  // A router's decisions per variant (all reasons).
  out.routes = {};
  for (const s of samples) {
    if (s.name === 'brigade_route_decisions_total' && ofModel(s.labels)) {
      out.routes[s.labels.variant] = (out.routes[s.labels.variant] || 0) + s.value;
    }
  }
  let previous = 0;
  for (const [le, cumulative] of buckets(samples, 'brigade_batch_size', ofModel)) {
    out.batches.push({le, count: cumulative - previous});
    previous = cumulative;
  }
  return out;
}

// ---- checks -------------------------------------------------------------------------------

const failures = [];
let passed = 0;
function check(what, ok, detail = '') {
  if (ok) {
    passed++;
  } else {
    failures.push(`${what}${detail ? `: ${detail}` : ''}`);
    console.error(`FAIL ${what} ${detail}`);
  }
}
function same(a, b) {
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)) + 1e-15;
}
function checkNumber(what, shown, expected) {
  check(what, same(shown, expected), `page ${shown}, /metrics ${expected}`);
}

// ---- the server ---------------------------------------------------------------------------

async function startServer(command) {
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], {stdio: ['ignore', 'pipe', 'inherit']});
  const url = await new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /(http:\/\/[^\s/]+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}) before listening`)));
  });
  return {child, url};
}

async function json(url, init) {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

async function chooseModel(base, wanted) {
  if (wanted) return wanted;
  const index = await json(`${base}/v2/repository/index`, {method: 'POST', body: '{}'});
  const ready = index.find((m) => m.state === 'READY');
  if (!ready) throw new Error('no READY model in the repository index');
  return ready.name;
}

// A few distinct valid bodies (so a response cache sees hits and misses) and one malformed one.
async function inferBodies(base, model) {
  const metadata = await json(`${base}/v2/models/${encodeURIComponent(model)}`);
  const bodies = [];
  for (let variant = 0; variant < 4; variant++) {
    const inputs = metadata.inputs.map((input) => {
      const shape = input.shape.map((d) => (d < 0 ? 1 : d));
      const elements = shape.reduce((a, b) => a * b, 1);
      const data = Array.from({length: elements}, (_, i) =>
        input.datatype === 'BOOL' ? (i + variant) % 2 === 0 :
        input.datatype === 'BYTES' ? `v${variant}` : (i + variant) % 7);
      return {name: input.name, datatype: input.datatype, shape, data};
    });
    bodies.push(JSON.stringify({inputs}));
  }
  return {valid: bodies, malformed: '{"inputs": "not a list"}'};
}

async function driveLoad(base, model, bodies, seconds, concurrency) {
  const url = `${base}/v2/models/${encodeURIComponent(model)}/infer`;
  const deadline = Date.now() + seconds * 1000;
  const stats = {ok: 0, failed: 0, completions: []};
  const worker = async (id) => {
    for (let n = 0; Date.now() < deadline; n++) {
      const malformed = n % 10 === 9;
      const body = malformed ? bodies.malformed : bodies.valid[(n + id) % bodies.valid.length];
      const response = await fetch(url, {method: 'POST', body,
        headers: {'content-type': 'application/json'}});
      await response.arrayBuffer();
      if (response.ok) stats.ok++; else stats.failed++;
      stats.completions.push(Date.now());
    }
  };
  stats.done = Promise.all(Array.from({length: concurrency}, (_, id) => worker(id)));
  return stats;
}

async function readPage(page, model) {
  return page.evaluate(({model, stages, outcomes}) => {
    const card = document.querySelector(`section.model[data-model="${CSS.escape(model)}"]`);
    if (!card) return null;
    const value = (el) => (el && el.dataset.value !== '' ? Number(el.dataset.value) : NaN);
    const metric = (name) => value(card.querySelector(`.kpis [data-metric="${name}"]`));
    const out = {stages: {}, outcomes: {}, batches: [], text: {}};
    for (const name of ['rps', 'requests', 'errors', 'queue_length', 'in_flight',
      'busy_instances', 'cache_hit_rate', 'p99_total']) {
      out[name] = metric(name);
      out.text[name] = card.querySelector(`.kpis [data-metric="${name}"]`)?.textContent;
    }
    for (const stage of stages) {
      const row = card.querySelector(`tr[data-stage="${stage}"]`);
      out.stages[stage] = {};
      for (const m of ['count', 'mean', 'p50', 'p90', 'p99']) {
        out.stages[stage][m] = value(row?.querySelector(`[data-metric="${m}"]`));
      }
    }
    for (const o of outcomes) {
      out.outcomes[o] = value(card.querySelector(`tr[data-outcome="${o}"] [data-metric="outcome"]`));
    }
    for (const bar of card.querySelectorAll('[data-batch-le]')) {
      out.batches.push({le: Number(bar.dataset.batchLe), count: Number(bar.dataset.value)});
    }
    out.routes = {};
    for (const row of card.querySelectorAll('tr[data-variant]')) {
      out.routes[row.dataset.variant] = value(row.querySelector('[data-metric="route_requests"]'));
    }
    return out;
  }, {model, stages: STAGES, outcomes: OUTCOMES});
}

async function waitForScrapes(page, count) {
  const start = Number(await page.evaluate(() => document.body.dataset.scrapeSeq));
  await page.waitForFunction((target) => Number(document.body.dataset.scrapeSeq) >= target,
      start + count, {timeout: 30_000});
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const server = options.serverCmd ? await startServer(options.serverCmd) : null;
  const base = (options.url || server.url).replace(/\/$/, '');
  const browser = await chromium.launch({executablePath: options.chromium, headless: true,
    args: CHROMIUM_FLAGS});
  try {
    const model = await chooseModel(base, options.model);
    const bodies = await inferBodies(base, model);
    console.log(`dashboard test: ${base}, model ${model}`);

    const page = await browser.newPage({viewport: {width: 1400, height: 1000}});
    const pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    const response = await page.goto(`${base}/?window=all&interval=1&rate=${options.rateSeconds}`);
    check('GET / answers 200', response.status() === 200, `status ${response.status()}`);
    check('GET / is HTML', (response.headers()['content-type'] || '').startsWith('text/html'));
    await waitForScrapes(page, 1);

    // Load: the page's requests/s against what the clients achieved over the same window.
    const load = await driveLoad(base, model, bodies, options.loadSeconds, options.concurrency);
    await sleep((options.loadSeconds - 1.5) * 1000);
    await waitForScrapes(page, 1);
    const during = await readPage(page, model);
    // The clients' rate over exactly the span the page's rate covers (the page publishes it):
    // on a busy machine the rate moves within seconds, so any other window can disagree.
    const span = await page.evaluate(() => ({from: Number(document.body.dataset.rateFrom),
      to: Number(document.body.dataset.rateTo)}));
    check('requests/s span published', span.to > span.from, `${span.from} .. ${span.to}`);
    const clientRate = load.completions.filter((t) => t > span.from && t <= span.to).length /
                       ((span.to - span.from) / 1000);
    check('model card shown during load', during !== null);
    if (during) {
      check('requests/s shown and positive', during.rps > 0, `page ${during.rps}`);
      check('requests/s matches the clients\' rate within 40%',
          during.rps > clientRate * 0.6 && during.rps < clientRate * 1.4,
          `page ${during.rps.toFixed(1)}/s, clients ${clientRate.toFixed(1)}/s`);
    }
    await load.done;

    // Quiet: every number on the page against /metrics.
    await waitForScrapes(page, 2);
    const shown = await readPage(page, model);
    const expected = expectedFor(model, parseMetrics(await (await fetch(`${base}/metrics`)).text()));
    check('clients\' successes all counted', expected.outcomes.success === load.ok,
        `/metrics ${expected.outcomes.success}, clients ${load.ok}`);
    check('malformed requests counted as failures', expected.errors >= load.failed,
        `/metrics ${expected.errors}, clients ${load.failed}`);
    for (const name of ['requests', 'errors', 'queue_length', 'in_flight', 'busy_instances',
      'cache_hit_rate']) {
      checkNumber(name, shown[name], expected[name]);
    }
    for (const o of OUTCOMES) checkNumber(`outcome ${o}`, shown.outcomes[o], expected.outcomes[o]);
    for (const stage of STAGES) {
      for (const m of ['count', 'mean', 'p50', 'p90', 'p99']) {
        checkNumber(`${stage} ${m}`, shown.stages[stage][m], expected.stages[stage][m]);
      }
    }
    checkNumber('p99 total KPI', shown.p99_total, expected.stages.total.p99);
    check('batch histogram buckets', shown.batches.length === expected.batches.length,
        `page ${shown.batches.length}, /metrics ${expected.batches.length}`);
    for (const b of expected.batches) {
      const bar = shown.batches.find((x) => x.le === b.le);
      checkNumber(`batches le=${b.le}`, bar ? bar.count : NaN, b.count);
    }
    const variants = Object.keys(expected.routes);
    check('routing table lists the variants /metrics has',
        variants.length === Object.keys(shown.routes).length,
        `page ${Object.keys(shown.routes).join(',')}, /metrics ${variants.join(',')}`);
    for (const v of variants) checkNumber(`routed to ${v}`, shown.routes[v], expected.routes[v]);
    check('total latency shown as text', /\d/.test(shown.text.p99_total || ''),
        `'${shown.text.p99_total}'`);
    check('no script errors on the page', pageErrors.length === 0, pageErrors.join('; '));
    check('no scrape errors on the page',
        (await page.evaluate(() => document.body.dataset.lastError)) === undefined);

    await page.screenshot({path: options.screenshot, fullPage: true});
    console.log(`screenshot: ${options.screenshot}`);
  } finally {
    await browser.close();
    if (server) server.child.kill('SIGTERM');
  }
  console.log(`${passed} checks passed, ${failures.length} failed`);
  process.exitCode = failures.length ? 1 : 0;
}

main().catch((error) => {
  console.error(`dashboard test error: ${error.stack || error}`);
  process.exitCode = 1;
});
