#!/usr/bin/env node
// How much ONNX Runtime (CPU) disagrees with itself: runs one model on the same inputs under
// several session settings (intra-op threads × graph optimization level) and counts, for each
// setting against the first, the output elements outside the engine's tolerance
// |a − b| > 1e-5 + 1e-4·|b| (b: the first setting's output). Gives the float32 noise floor that
// Brigade's own comparison with ONNX Runtime (bench/onnx_compare.sh) should be read against.
//
//   node bench/ort_self_compare.js MODEL.onnx DUMP_DIR [--settings t1:all,t2:all,t1:disabled]
//                                  [--save DIR]
//
// DUMP_DIR holds the inputs, as written by `ort-run.js MODEL --dump DUMP_DIR` (manifest.json and
// raw little-endian files). A setting is t<threads>:<level>, level one of onnxruntime-node's
// graphOptimizationLevel values (disabled, basic, extended, all). Each setting runs twice; the
// second run's output is compared with the first's too (run-to-run determinism). Prints one
// line per setting. --save DIR writes each setting's first outputs as DIR/<t1_all>/output_<name>.bin
// (the layout bench/models/fp64_reference.py reads from D/ours). Needs NODE_PATH with onnxruntime-node (see bench/onnx_compare.sh).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = { float32: Float32Array, float64: Float64Array, int64: BigInt64Array,
  int32: Int32Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array };

function readInputs(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const feeds = {};
  for (const m of manifest.inputs) {
    const buf = fs.readFileSync(path.join(dir, m.file));
    const Arr = ARRAYS[m.type];
    if (!Arr) throw new Error(`input ${m.name}: type ${m.type} not supported`);
    const data = new Arr(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
    feeds[m.name] = new ort.Tensor(m.type, data, m.shape);
  }
  return feeds;
}

async function runSetting(model, setting, feeds) {
  const [t, level] = setting.split(':');
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: +t.slice(1), interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: level, executionProviders: ['cpu'] });
  const first = await session.run(feeds);
  const second = await session.run(feeds);
  return [first, second];
}

// Elements of every float output outside the tolerance, against `ref`; and the largest |a − b|.
function compare(out, ref) {
  let outside = 0, total = 0, maxAbs = 0;
  for (const name of Object.keys(ref)) {
    const a = out[name].data, b = ref[name].data;
    if (!(b instanceof Float32Array)) continue;
    for (let i = 0; i < b.length; i++) {
      const d = Math.abs(a[i] - b[i]);
      maxAbs = Math.max(maxAbs, d);
      if (d > 1e-5 + 1e-4 * Math.abs(b[i])) outside++;
    }
    total += b.length;
  }
  return { outside, total, maxAbs };
}

(async () => {
  const argv = process.argv.slice(2);
  if (argv.length < 2) throw new Error('usage: ort_self_compare.js MODEL.onnx DUMP_DIR [--settings ...]');
  const [model, dir] = argv;
  let settings = ['t1:all', 't2:all', 't1:disabled', 't1:basic', 't1:extended', 't2:disabled'];
  const i = argv.indexOf('--settings');
  if (i >= 0) settings = argv[i + 1].split(',');
  const j = argv.indexOf('--save');
  const save = j >= 0 ? argv[j + 1] : null;
  const feeds = readInputs(dir);
  let ref = null;
  for (const s of settings) {
    const [first, second] = await runSetting(model, s, feeds);
    if (ref === null) ref = first;
    if (save !== null) {
      const out = path.join(save, s.replace(':', '_'));
      fs.mkdirSync(out, { recursive: true });
      for (const [name, ten] of Object.entries(first)) {
        const d = ten.data;
        fs.writeFileSync(path.join(out, `output_${name}.bin`),
          Buffer.from(d.buffer, d.byteOffset, d.byteLength));
      }
    }
    const vs = compare(first, ref), again = compare(second, first);
    console.log(`${settings[0]} vs ${s}: outside ${vs.outside} / ${vs.total}, ` +
      `max abs ${vs.maxAbs.toExponential(2)}; run-to-run outside ${again.outside}, ` +
      `max abs ${again.maxAbs.toExponential(2)}`);
  }
})().catch(e => { console.error('ort_self_compare: ' + e.message); process.exit(1); });
