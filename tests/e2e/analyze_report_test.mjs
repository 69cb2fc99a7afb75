#!/usr/bin/env node
// End-to-end test of `brigade analyze` and its HTML report:
//   1. runs the real binary on two Fashion-MNIST variants (models/fashion_mnist_small and
//      models/fashion_mnist) with the real labelled test set from Debian's dataset-fashion-mnist,
//      a tiny sweep (2 configurations each, 2 load levels, short windows) and a loose SLO;
//   2. checks analysis.json: every configuration measured, accuracy from the labels, the frontier
//      and the recommendation consistent with the points;
//   3. opens report.html in headless Chromium (Debian's /usr/bin/chromium through playwright-core)
//      and checks that it renders: no page errors, the three charts laid out with a real size,
//      one marker per valid point in each scatter chart, the star on the recommended point,
//      stage-breakdown bars, the points table; saves a screenshot;
//   4. serves the recommended configuration (recommended/<model>, version folders linked) with
//      `brigade serve` and checks that the model is ready.
//
// Usage: BRIGADE_BIN=build/brigade node tests/e2e/analyze_report_test.mjs [--out DIR]
// (outputs go to a temporary folder, removed when every check passed, unless --out names one).
// Needs: apt-get install chromium dataset-fashion-mnist npm; playwright-core (`npm ci` into
// tests/node_modules when missing). Takes ~20 s on 2 cores. Exit status 0 when every check
// passes, 1 otherwise (each failure, or each missing prerequisite, is printed).

import {spawn, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import {setTimeout as sleep} from 'node:timers/promises';
import {fileURLToPath} from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TESTS_DIR = path.resolve(HERE, '..');
const ROOT = path.resolve(TESTS_DIR, '..');
const DATASET = '/usr/share/datasets/fashion-mnist';
const CHROMIUM = '/usr/bin/chromium';
// Loose on purpose: this test checks the pipeline, not the machine's speed (the frontier and the
// recommendation rules are unit-tested in tools/analyze), and it may share 2 cores with a build.
const SLO_P99_MS = 1000;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run'];

// playwright-core from tests/node_modules; `npm ci` (pinned by tests/package-lock.json) when it is
// missing, as on a fresh clone where scripts/setup has not run.
function loadPlaywright() {
  const require = createRequire(path.join(TESTS_DIR, 'package.json'));
  try {
    return require('playwright-core');
  } catch {
    console.log('playwright-core is missing: npm ci in tests/');
    const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'],
        {cwd: TESTS_DIR, stdio: 'inherit'});
    if (npm.error) {
      throw new Error(`cannot run npm (${npm.error.code}): install Debian's npm ` +
          '(apt-get install npm; scripts/setup does) or run `npm ci` in tests/');
    }
    if (npm.status !== 0) throw new Error(`npm ci in ${TESTS_DIR} failed (status ${npm.status})`);
    return require('playwright-core');
  }
}

// What the test needs from the machine, each missing piece named with the package providing it.
function checkPrerequisites(bin) {
  const needs = [
    [bin, 'the brigade binary (BRIGADE_BIN)'],
    [CHROMIUM, 'Debian\'s chromium (apt-get install chromium)'],
    [`${DATASET}/t10k-images-idx3-ubyte.gz`,
      'the Fashion-MNIST test set (apt-get install dataset-fashion-mnist)'],
  ];
  const missing = needs.filter(([file]) => !fs.existsSync(file));
  for (const [file, what] of missing) console.error(`missing ${file}: ${what}`);
  return missing.length === 0;
}

const failures = [];
let passed = 0;
function check(what, ok, detail = '') {
  if (ok) {
    passed += 1;
  } else {
    failures.push(what);
    console.error(`FAIL ${what} ${detail}`);
  }
}

function runAnalyze(bin, out) {
  const args = ['analyze', path.join(ROOT, 'models/fashion_mnist_small'),
    path.join(ROOT, 'models/fashion_mnist'),
    '--eval-inputs', `${DATASET}/t10k-images-idx3-ubyte.gz`,
    '--eval-labels', `${DATASET}/t10k-labels-idx1-ubyte.gz`, '--eval-limit', '500',
    '--max-batch', '1,8', '--batching', 'delay:200', '--concurrency', '1,2',
    '--warmup-s', '0.2', '--duration-s', '0.6', '--load-samples', '16',
    '--slo-p99-ms', `${SLO_P99_MS}`, '--max-accuracy-drop', '0.05', '-o', out, '--progress',
    '--serve-arg=--pin-threads=false'];
  console.log(`$ ${bin} ${args.join(' ')}`);
  const result = spawnSync(bin, args, {encoding: 'utf8', timeout: 240_000});
  process.stdout.write(result.stdout || '');
  check('analyze exits 0 (a point was recommended)', result.status === 0,
      `status ${result.status}\n${result.stderr}`);
  check('the progress bar was drawn', /\[[#.]+\]/.test(result.stderr || ''));
  return result.status === 0;
}

function checkJson(analysis) {
  check('4 configurations measured', analysis.configs.length === 4,
      `${analysis.configs.length}`);
  check('no configuration failed', analysis.configs.every((c) => c.error === ''),
      JSON.stringify(analysis.configs.map((c) => c.error)));
  check('2 load levels per configuration', analysis.points.length === 8,
      `${analysis.points.length}`);
  for (const variant of analysis.variants) {
    check(`${variant.name}: accuracy measured on 500 labelled examples`,
        variant.examples === 500 && variant.accuracy > 0.7 && variant.accuracy <= 1,
        JSON.stringify(variant));
  }
  check('other work on the machine was sampled', typeof analysis.settings.other_cores_busy ===
      'number', JSON.stringify(analysis.settings));
  const valid = analysis.points.filter((p) => p.latency_ms.p99 !== null && p.accuracy !== null);
  check('every point measured', valid.length === analysis.points.length);
  const dominates = (a, b) => a.latency_ms.p99 <= b.latency_ms.p99 &&
      a.throughput_per_s >= b.throughput_per_s && a.accuracy >= b.accuracy &&
      (a.latency_ms.p99 < b.latency_ms.p99 || a.throughput_per_s > b.throughput_per_s ||
       a.accuracy > b.accuracy);
  const frontier = valid.filter((p) => !valid.some((q) => dominates(q, p))).map((p) => p.id);
  check('frontier matches an independent computation',
      JSON.stringify(frontier) === JSON.stringify(analysis.frontier),
      `${JSON.stringify(frontier)} vs ${JSON.stringify(analysis.frontier)}`);
  const rec = analysis.recommendation;
  check('recommendation chosen', rec.status === 'chosen', rec.status);
  const chosen = analysis.points[rec.point];
  const feasible = valid.filter((p) => p.latency_ms.p99 <= SLO_P99_MS &&
      rec.baseline_accuracy - p.accuracy <= 0.05 + 1e-9);
  const best = Math.max(...feasible.map((p) => p.throughput_per_s));
  check('the recommended point has the most throughput among points meeting the SLO',
      chosen && chosen.throughput_per_s === best, `${chosen && chosen.throughput_per_s} vs ${best}`);
  check('the recommended point is on the frontier', analysis.frontier.includes(rec.point));
  return valid.length;
}

async function checkReport(playwright, reportPath, validPoints, screenshot) {
  const browser = await playwright.chromium.launch({executablePath: CHROMIUM, headless: true,
    args: CHROMIUM_FLAGS});
  try {
    const page = await browser.newPage({viewport: {width: 1280, height: 900}});
    const errors = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const requests = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(`file://${reportPath}`);
    check('report has a title', (await page.title()).startsWith('brigade analyze:'));
    for (const id of ['latency-accuracy', 'throughput-latency', 'stage-breakdown']) {
      const box = await page.locator(`svg#${id}`).boundingBox();
      check(`chart #${id} is laid out`, box !== null && box.width > 300 && box.height > 150,
          JSON.stringify(box));
    }
    for (const id of ['latency-accuracy', 'throughput-latency']) {
      const markers = await page.locator(`svg#${id} .pt`).count();
      check(`chart #${id} has one marker per point`, markers === validPoints,
          `${markers} vs ${validPoints}`);
      const stars = await page.locator(`svg#${id} .pt.star`).count();
      check(`chart #${id} stars the recommendation`, stars === 1, `${stars}`);
      const visible = await page.locator(`svg#${id} .pt`).first().isVisible();
      check(`chart #${id} markers are visible`, visible);
    }
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check('the page fits a 1280 px window (no horizontal scrolling)', width <= 1280, `${width}`);
    const machine = await page.locator('table.settings').innerText();
    check('settings say how busy the machine was', /other processes used [0-9.]+ cores/.test(
        machine), machine);
    const bars = await page.locator('svg#stage-breakdown .seg').count();
    check('stage breakdown has bars', bars >= validPoints, `${bars}`);
    const rows = await page.locator('#points tr[data-id]').count();
    check('points table lists every point', rows === validPoints, `${rows}`);
    check('recommended row is marked', await page.locator('#points tr.recommended').count() === 1);
    const recommendation = await page.locator('#recommendation').innerText();
    check('recommendation box names the config', /Recommended/.test(recommendation) &&
        /max_batch_size/.test(recommendation), recommendation.slice(0, 200));
    check('no page errors', errors.length === 0, errors.join('\n'));
    check('nothing fetched besides the page', requests.length === 1, requests.join('\n'));
    await page.screenshot({path: screenshot, fullPage: true});
    check('screenshot written', fs.statSync(screenshot).size > 10_000);
    console.log(`screenshot: ${screenshot}`);
  } finally {
    await browser.close();
  }
}

async function checkRecommendedConfigServes(bin, out, model) {
  const server = spawn(bin, ['serve', '--model-repository', path.join(out, 'recommended'),
    '--http-address', '127.0.0.1', '--http-port', '0', '--allow-grpc', 'false',
    '--pin-threads', 'false'], {stdio: ['ignore', 'pipe', 'pipe']});
  let output = '';
  const port = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(0), 60_000);
    const onData = (chunk) => {
      output += chunk;
      const match = /HTTP.*listening on [^:\s]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.on('exit', () => resolve(0));
  });
  try {
    check('recommended repository starts a server', port > 0, output);
    if (port === 0) return;
    let ready = false;
    for (let i = 0; i < 200 && !ready; ++i) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/v2/models/${model}/ready`);
        ready = response.status === 200;
      } catch {
        // not listening yet
      }
      if (!ready) await sleep(100);
    }
    check(`recommended model ${model} is ready`, ready, output);
  } finally {
    server.kill('SIGTERM');
  }
}

async function main() {
  const bin = process.env.BRIGADE_BIN;
  if (!bin) throw new Error('set BRIGADE_BIN to the brigade executable');
  const outIndex = process.argv.indexOf('--out');
  const out = outIndex > 0 ? path.resolve(process.argv[outIndex + 1])
                           : fs.mkdtempSync(path.join(os.tmpdir(), 'analyze-e2e-'));
  if (!checkPrerequisites(bin)) process.exit(1);
  const playwright = loadPlaywright();
  if (runAnalyze(bin, out)) {
    const analysis = JSON.parse(fs.readFileSync(path.join(out, 'analysis.json'), 'utf8'));
    const validPoints = checkJson(analysis);
    await checkReport(playwright, path.join(out, 'report.html'), validPoints,
        path.join(out, 'report.png'));
    const chosen = analysis.points[analysis.recommendation.point];
    if (chosen) await checkRecommendedConfigServes(bin, out, chosen.variant);
  }
  const keep = outIndex > 0 || failures.length > 0;
  console.log(`${passed} checks passed, ${failures.length} failed` +
      (keep ? ` (outputs in ${out})` : ''));
  // A temporary output folder goes once everything passed; --out or a failure keeps it.
  if (!keep) fs.rmSync(out, {recursive: true, force: true});
  process.exit(failures.length === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(`analyze report test error: ${error.stack || error}`);
  process.exit(1);
});
