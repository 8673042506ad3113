// The Prometheus text exposition format (version 0.0.4), the few parts Sluice needs.

/** The `Content-Type` of a scrape response. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A label value in double quotes: backslash, double quote and line feed are escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** HELP text: backslash and line feed are escaped (double quotes are not). */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** A sample value: integers as written, `+Inf`, `-Inf` and `NaN` by name. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** `name{a="x",b="y"} value`, or `name value` without labels. */
export function formatSample(
  name: string,
  labelNames: readonly string[],
  labelValues: readonly string[],
  value: number,
): string {
  if (labelNames.length === 0) return `${name} ${formatValue(value)}`;
  const pairs = labelNames.map((label, i) => `${label}="${escapeLabelValue(labelValues[i] ?? '')}"`);
  return `${name}{${pairs.join(',')}} ${formatValue(value)}`;
}

/** The `# HELP` and `# TYPE` lines that open a metric family. */
export function familyHeader(name: string, help: string, type: 'counter' | 'gauge' | 'histogram'): string[] {
  return [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`];
}
