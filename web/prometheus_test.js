// Unit tests of the dashboard's metrics arithmetic: node --test web/prometheus_test.js
'use strict';

const assert = require('node:assert/strict');
const test = require('node:test');
const M = require('./prometheus.js');

const SCRAPE = `# HELP brigade_requests_total Inference requests answered.
# TYPE brigade_requests_total counter
brigade_requests_total{model="a",version="1",protocol="http",outcome="success"} 7
brigade_requests_total{model="a",version="1",protocol="grpc",outcome="rejected"} 2
brigade_requests_total{model="we\\"ird\\\\",version="1",protocol="http",outcome="success"} 1
# HELP brigade_request_stage_duration_seconds Stage time.
# TYPE brigade_request_stage_duration_seconds histogram
brigade_request_stage_duration_seconds_bucket{model="a",stage="total",protocol="http",le="0.001"} 2
brigade_request_stage_duration_seconds_bucket{model="a",stage="total",protocol="http",le="0.002"} 6
brigade_request_stage_duration_seconds_bucket{model="a",stage="total",protocol="http",le="+Inf"} 7
brigade_request_stage_duration_seconds_sum{model="a",stage="total",protocol="http"} 0.0105
brigade_request_stage_duration_seconds_count{model="a",stage="total",protocol="http"} 7
brigade_request_stage_duration_seconds_bucket{model="a",stage="total",protocol="grpc",le="0.001"} 1
brigade_request_stage_duration_seconds_bucket{model="a",stage="total",protocol="grpc",le="0.002"} 1
brigade_request_stage_duration_seconds_bucket{model="a",stage="total",protocol="grpc",le="+Inf"} 1
brigade_request_stage_duration_seconds_sum{model="a",stage="total",protocol="grpc"} 0.0005
brigade_request_stage_duration_seconds_count{model="a",stage="total",protocol="grpc"} 1
# HELP brigade_queue_length Queue.
# TYPE brigade_queue_length gauge
brigade_queue_length{model="a",version="1"} 3
untyped_thing 1.5e-3 1700000000000
`;

test('parses families, types, escaped label values and timestamps', () => {
  const f = M.parse(SCRAPE);
  assert.equal(f.get('brigade_requests_total').type, 'counter');
  assert.equal(f.get('brigade_request_stage_duration_seconds').type, 'histogram');
  assert.equal(f.get('brigade_request_stage_duration_seconds').samples.length, 10);
  assert.deepEqual(M.labelValues(f, 'brigade_requests_total', 'model'), ['a', 'we"ird\\']);
  assert.equal(f.get('untyped_thing').samples[0].value, 0.0015);
});

test('sums counters under a label filter', () => {
  const f = M.parse(SCRAPE);
  assert.equal(M.sum(f, 'brigade_requests_total', (l) => l.model === 'a'), 9);
  assert.equal(M.sum(f, 'brigade_requests_total', (l) => l.outcome === 'rejected'), 2);
  assert.equal(M.sum(f, 'missing_total'), 0);
});

test('merges histogram series and estimates quantiles like histogram_quantile', () => {
  const f = M.parse(SCRAPE);
  const series = M.histogramSeries(f, 'brigade_request_stage_duration_seconds');
  assert.equal(series.length, 2);
  const merged = M.mergeHistograms(series);
  assert.deepEqual(merged.buckets.map((b) => b.count), [3, 7, 8]);
  assert.equal(merged.count, 8);
  // rank 4 of 8: one of four into (0.001, 0.002].
  assert.ok(Math.abs(M.histogramQuantile(0.5, merged) - 0.00125) < 1e-15);
  // rank 1.5 of 8: half into [0, 0.001].
  assert.ok(Math.abs(M.histogramQuantile(0.1875, merged) - 0.0005) < 1e-15);
  // rank in +Inf: the last finite bound.
  assert.equal(M.histogramQuantile(0.99, merged), 0.002);
  assert.ok(Number.isNaN(M.histogramQuantile(0.5, {buckets: [], sum: 0, count: 0})));
});

test('window deltas subtract bucket by bucket and survive counter resets', () => {
  const now = {buckets: [{le: 1, count: 5}, {le: Infinity, count: 9}], sum: 20, count: 9};
  const before = {buckets: [{le: 1, count: 2}, {le: Infinity, count: 3}], sum: 5, count: 3};
  assert.deepEqual(M.subtractHistogram(now, before),
                   {buckets: [{le: 1, count: 3}, {le: Infinity, count: 6}], sum: 15, count: 6});
  assert.equal(M.subtractHistogram(before, now), before);  // reset: keep the newer
  assert.deepEqual(M.bucketCounts(now).map((b) => b.count), [5, 4]);
});

test('rejects malformed samples', () => {
  assert.throws(() => M.parse('x{a="b} 1\n'));
  assert.throws(() => M.parse('x{a=b} 1\n'));
  assert.throws(() => M.parse('x abc\n'));
});
