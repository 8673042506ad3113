import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { escapeLabelValue } from '@sluice/gateway';
import { escapeHelp, formatSample } from '../src/prometheus.js';
import { Histogram, LabeledValue, MetricsRegistry } from '../src/metrics-registry.js';

/** Reads a quoted label value back the way a scraper does. */
function unescapeLabelValue(escaped: string): string {
  return escaped.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** The label values of one sample line, parsed as the exposition format defines them. */
function labelValuesOf(line: string): string[] {
  const values: string[] = [];
  const pattern = /[a-z_]+="((?:[^"\\\n]|\\.)*)"[,}]/g;
  for (const match of line.matchAll(pattern)) values.push(unescapeLabelValue(match[1] as string));
  return values;
}

describe('the text exposition format', () => {
  it('escapes backslash, double quote and line feed in label values, and nothing else', () => {
    expect(escapeLabelValue('a\\b"c\nd\te')).toBe('a\\\\b\\"c\\nd\te');
    expect(escapeHelp('a\\b"c\nd')).toBe('a\\\\b"c\\nd');
  });

  it('keeps any label value on one line and recovers it exactly when parsed', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string(), (a, b) => {
        const line = formatSample('m', ['x', 'y'], [a, b], 1);
        expect(line.includes('\n')).toBe(false);
        expect(labelValuesOf(line)).toEqual([a, b]);
        expect(line.endsWith('} 1')).toBe(true);
      }),
    );
  });

  it('writes special values by name', () => {
    expect(formatSample('m', [], [], Infinity)).toBe('m +Inf');
    expect(formatSample('m', [], [], Number.NaN)).toBe('m NaN');
    expect(formatSample('m', [], [], 0.25)).toBe('m 0.25');
  });
});

describe('the metric families', () => {
  it('counts by label values and renders HELP and TYPE before the samples', () => {
    const registry = new MetricsRegistry();
    const counter = registry.register(new LabeledValue('calls_total', 'Calls.\nBy tool.', 'counter', ['tool']));
    counter.add(['a']);
    counter.add(['a']);
    counter.add(['b"q'], 3);
    expect(registry.render()).toBe(
      '# HELP calls_total Calls.\\nBy tool.\n# TYPE calls_total counter\ncalls_total{tool="a"} 2\ncalls_total{tool="b\\"q"} 3\n',
    );
  });

  it('keeps histogram buckets cumulative, with +Inf, _sum and _count', () => {
    const histogram = new Histogram('latency_seconds', 'Latency.', ['tool'], [0.1, 1]);
    for (const value of [0.05, 0.1, 0.5, 2]) histogram.observe(['t'], value);
    expect(histogram.render().slice(2)).toEqual([
      'latency_seconds_bucket{tool="t",le="0.1"} 2',
      'latency_seconds_bucket{tool="t",le="1"} 3',
      'latency_seconds_bucket{tool="t",le="+Inf"} 4',
      'latency_seconds_sum{tool="t"} 2.65',
      'latency_seconds_count{tool="t"} 4',
    ]);
  });

  it('never lets a bucket count exceed the next one, whatever is observed', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 1 }), (values) => {
        const histogram = new Histogram('h', 'H.', [], [0.001, 0.5, 1, 10]);
        for (const value of values) histogram.observe([], value);
        const counts = histogram
          .render()
          .filter((line) => line.startsWith('h_bucket'))
          .map((line) => Number(line.split(' ')[1]));
        expect(counts).toEqual([...counts].sort((x, y) => x - y));
        expect(counts.at(-1)).toBe(values.length);
      }),
    );
  });
});
