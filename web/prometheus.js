// Prometheus text exposition (format 0.0.4) parsing and the arithmetic the dashboard needs:
// histogram merging, window deltas and histogram_quantile. Pure functions, no DOM; the page
// inlines this file, and web/prometheus_test.js runs it under Node.
//
// Quantiles follow Prometheus' histogram_quantile (and Brigade's C++ EstimateQuantile): find the
// bucket holding rank q * count, interpolate linearly inside it (0 is the lower edge of the first
// bucket); ranks in the +Inf bucket answer the last finite bound.
'use strict';

const BrigadeMetrics = (() => {
  const SUFFIXES = ['_bucket', '_sum', '_count'];

  function parseValue(text) {
    if (text === '+Inf' || text === 'Inf') return Infinity;
    if (text === '-Inf') return -Infinity;
    if (text === 'NaN') return NaN;
    const value = Number(text);
    if (text === '' || Number.isNaN(value)) throw new Error(`bad sample value '${text}'`);
    return value;
  }

  // Parses `{a="x",b="y\"z"}` starting at text[start] === '{'; returns [labels, index after '}'].
  function parseLabels(text, start) {
    const labels = {};
    let i = start + 1;
    while (true) {
      while (text[i] === ' ' || text[i] === ',') i++;
      if (text[i] === '}') return [labels, i + 1];
      const eq = text.indexOf('=', i);
      if (eq < 0) throw new Error('label without =');
      const name = text.slice(i, eq).trim();
      i = eq + 1;
      if (text[i] !== '"') throw new Error(`label ${name}: value not quoted`);
      i++;
      let value = '';
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') {
          const next = text[i + 1];
          value += next === 'n' ? '\n' : next;
          i += 2;
        } else {
          value += text[i++];
        }
      }
      if (i >= text.length) throw new Error(`label ${name}: unterminated value`);
      labels[name] = value;
      i++;
    }
  }

  // Map of family name → {name, type, help, samples: [{name, labels, value}]}.
  function parse(text) {
    const families = new Map();
    const family = (name) => {
      if (!families.has(name)) {
        families.set(name, {name, type: 'untyped', help: '', samples: []});
      }
      return families.get(name);
    };
    // Which family a sample belongs to: itself, or a histogram/summary it is a suffix of.
    const owner = (sampleName) => {
      for (const suffix of SUFFIXES) {
        if (sampleName.endsWith(suffix)) {
          const base = sampleName.slice(0, -suffix.length);
          const f = families.get(base);
          if (f && (f.type === 'histogram' || f.type === 'summary')) return f;
        }
      }
      return family(sampleName);
    };
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      if (line.startsWith('#')) {
        const match = /^#\s+(HELP|TYPE)\s+(\S+)\s?(.*)$/.exec(line);
        if (!match) continue;
        const f = family(match[2]);
        if (match[1] === 'TYPE') {
          f.type = match[3].trim();
        } else {
          f.help = match[3].replace(/\\(n|\\)/g, (_, c) => (c === 'n' ? '\n' : '\\'));
        }
        continue;
      }
      let i = 0;
      while (i < line.length && line[i] !== '{' && line[i] !== ' ' && line[i] !== '\t') i++;
      const name = line.slice(0, i);
      let labels = {};
      if (line[i] === '{') [labels, i] = parseLabels(line, i);
      const fields = line.slice(i).trim().split(/\s+/);
      owner(name).samples.push({name, labels, value: parseValue(fields[0])});
    }
    return families;
  }

  function seriesKey(labels, omit) {
    return Object.keys(labels)
        .filter((k) => k !== omit)
        .sort()
        .map((k) => `${k}=${labels[k]}`)
        .join(',');
  }

  // The series of a histogram family: [{labels, buckets: [{le, count}] (cumulative, ascending,
  // ending with +Inf), sum, count}].
  function histogramSeries(families, name) {
    const f = families.get(name);
    if (!f) return [];
    const series = new Map();
    for (const s of f.samples) {
      const key = seriesKey(s.labels, 'le');
      if (!series.has(key)) {
        const labels = {...s.labels};
        delete labels.le;
        series.set(key, {labels, buckets: [], sum: 0, count: 0});
      }
      const entry = series.get(key);
      if (s.name === `${name}_bucket`) {
        entry.buckets.push({le: parseValue(s.labels.le), count: s.value});
      } else if (s.name === `${name}_sum`) {
        entry.sum = s.value;
      } else if (s.name === `${name}_count`) {
        entry.count = s.value;
      }
    }
    for (const entry of series.values()) entry.buckets.sort((a, b) => a.le - b.le);
    return [...series.values()];
  }

  // Sums histograms with the same bucket layout.
  function mergeHistograms(list) {
    const out = {buckets: [], sum: 0, count: 0};
    const byLe = new Map();
    for (const h of list) {
      for (const b of h.buckets) byLe.set(b.le, (byLe.get(b.le) || 0) + b.count);
      out.sum += h.sum;
      out.count += h.count;
    }
    out.buckets = [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({le, count}));
    return out;
  }

  // now − before, bucket by bucket (a reset, i.e. a smaller count, keeps `now`).
  function subtractHistogram(now, before) {
    if (!before || now.count < before.count) return now;
    const previous = new Map(before.buckets.map((b) => [b.le, b.count]));
    return {
      buckets: now.buckets.map((b) => ({le: b.le, count: b.count - (previous.get(b.le) || 0)})),
      sum: now.sum - before.sum,
      count: now.count - before.count,
    };
  }

  // histogram_quantile over cumulative buckets; NaN when empty.
  function histogramQuantile(q, histogram) {
    const buckets = histogram.buckets;
    if (buckets.length < 2) return NaN;
    const total = buckets[buckets.length - 1].count;
    if (!(total > 0)) return NaN;
    const rank = Math.min(Math.max(q, 0), 1) * total;
    let index = buckets.findIndex((b) => b.count >= rank);
    if (index < 0) index = buckets.length - 1;
    if (index === buckets.length - 1) return buckets[buckets.length - 2].le;
    const lower = index === 0 ? 0 : buckets[index - 1].le;
    const below = index === 0 ? 0 : buckets[index - 1].count;
    const inBucket = buckets[index].count - below;
    if (inBucket <= 0) return buckets[index].le;
    return lower + (buckets[index].le - lower) * (rank - below) / inBucket;
  }

  // Per-bucket (non-cumulative) counts: [{le, count}].
  function bucketCounts(histogram) {
    let previous = 0;
    return histogram.buckets.map((b) => {
      const count = b.count - previous;
      previous = b.count;
      return {le: b.le, count};
    });
  }

  // Sum of a counter or gauge family's samples whose labels pass `filter`.
  function sum(families, name, filter = () => true) {
    const f = families.get(name);
    if (!f) return 0;
    let total = 0;
    for (const s of f.samples) {
      if (s.name === name && filter(s.labels)) total += s.value;
    }
    return total;
  }

  // Values of `label` across a family's samples (sorted, unique).
  function labelValues(families, name, label) {
    const f = families.get(name);
    if (!f) return [];
    return [...new Set(f.samples.map((s) => s.labels[label]).filter((v) => v !== undefined))].sort();
  }

  return {
    parse,
    histogramSeries,
    mergeHistograms,
    subtractHistogram,
    histogramQuantile,
    bucketCounts,
    sum,
    labelValues,
  };
})();

if (typeof module !== 'undefined') module.exports = BrigadeMetrics;
