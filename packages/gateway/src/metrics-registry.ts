import { familyHeader, formatSample, formatValue } from './prometheus.js';

/** One metric family: renders its lines in the text exposition format. */
export interface MetricFamily {
  readonly name: string;
  render(): string[];
}

// Label values joined by a character that cannot be confused with their text.
const keyOf = (values: readonly string[]): string => values.join('\u0000');

/** One labelled series of a `LabeledValue`: held by a caller that updates it often, so the key is built once. */
export interface Series {
  readonly labels: readonly string[];
  value: number;
}

/** A counter or gauge with labels, updated as things happen. */
export class LabeledValue implements MetricFamily {
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge',
    readonly labelNames: readonly string[],
  ) {}

  add(labels: readonly string[], by = 1): void {
    this.at(labels).value += by;
  }

  /** The series of these labels, made (at 0) if it is not there yet: keep it and update its `value` directly. */
  at(labels: readonly string[]): Series {
    const key = keyOf(labels);
    let found = this.series.get(key);
    if (found === undefined) {
      found = { labels: [...labels], value: 0 };
      this.series.set(key, found);
    }
    return found;
  }

  /** Stops showing the series of these labels (a gauge or counter of something that is gone). */
  remove(labels: readonly string[]): void {
    this.series.delete(keyOf(labels));
  }

  /** The current value of one series (0 when it never moved). */
  get(labels: readonly string[]): number {
    return this.series.get(keyOf(labels))?.value ?? 0;
  }

  /** Every series with its value, for a reader other than a scraper (the console). */
  readings(): GaugeReading[] {
    return [...this.series.values()].map(({ labels, value }) => ({ labels: [...labels], value }));
  }

  render(): string[] {
    const lines = familyHeader(this.name, this.help, this.type);
    for (const { labels, value } of this.series.values())
      lines.push(formatSample(this.name, this.labelNames, labels, value));
    return lines;
  }
}

export interface GaugeReading {
  readonly labels: readonly string[];
  readonly value: number;
}

/** A gauge (or a counter kept elsewhere) read at scrape time from the state it describes (upstream health). */
export class CollectedGauge implements MetricFamily {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    private readonly collect: () => Iterable<GaugeReading>,
    private readonly type: 'gauge' | 'counter' = 'gauge',
  ) {}

  render(): string[] {
    const lines = familyHeader(this.name, this.help, this.type);
    for (const { labels, value } of this.collect()) lines.push(formatSample(this.name, this.labelNames, labels, value));
    return lines;
  }
}

/** One labelled series of a `Histogram`, to keep and pass to `record`. */
export interface HistogramSeries {
  readonly labels: readonly string[];
  /** Per bucket (not cumulative); one more than `bounds` for +Inf. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** A histogram with fixed bucket bounds (upper bounds, ascending). */
export class Histogram implements MetricFamily {
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {}

  observe(labels: readonly string[], value: number): void {
    this.record(this.at(labels), value);
  }

  /** The series of these labels, made (empty) if it is not there yet. */
  at(labels: readonly string[]): HistogramSeries {
    const key = keyOf(labels);
    let series = this.series.get(key);
    if (series === undefined) {
      series = { labels: [...labels], counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    return series;
  }

  /** Stops showing the series of these labels. */
  remove(labels: readonly string[]): void {
    this.series.delete(keyOf(labels));
  }

  /** Counts one observation in a series of this histogram. */
  record(series: HistogramSeries, value: number): void {
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && value > (bounds[bucket] as number)) bucket++;
    series.counts[bucket] = (series.counts[bucket] ?? 0) + 1;
    series.sum += value;
    series.count++;
  }

  render(): string[] {
    const lines = familyHeader(this.name, this.help, 'histogram');
    const bucketLabels = [...this.labelNames, 'le'];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      counts.forEach((inBucket, i) => {
        cumulative += inBucket;
        const le = i < this.bounds.length ? formatValue(this.bounds[i] as number) : '+Inf';
        lines.push(formatSample(`${this.name}_bucket`, bucketLabels, [...labels, le], cumulative));
      });
      lines.push(formatSample(`${this.name}_sum`, this.labelNames, labels, sum));
      lines.push(formatSample(`${this.name}_count`, this.labelNames, labels, count));
    }
    return lines;
  }
}

/** The metric families of one gateway, rendered together for a scrape. */
export class MetricsRegistry {
  private readonly families: MetricFamily[] = [];

  register<F extends MetricFamily>(family: F): F {
    this.families.push(family);
    return family;
  }

  /** The whole exposition, ending with a line feed. */
  render(): string {
    return `${this.families.flatMap((family) => family.render()).join('\n')}\n`;
  }
}
