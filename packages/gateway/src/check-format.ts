import type { CheckReport, CheckedTool } from './check.js';
import { guessableKeyWarning } from '@sluice/http';
import { textTable as table } from './text-table.js';

/** `sluice check` as text: upstreams, plugins loaded from modules, exposed tools (with risk when configured), skipped tools. */
export function formatCheckReport(report: CheckReport, file: string): string {
  const out: string[] = [`Config ${file} is valid.`, ''];
  out.push(`Upstreams (${report.upstreams.length})`);
  out.push(
    ...table(
      report.upstreams.map((u) => [
        u.name,
        u.transport,
        u.health,
        `${u.tools} ${u.tools === 1 ? 'tool' : 'tools'}`,
        u.lastError ? `(${u.lastError})` : '',
      ]),
    ),
  );
  if (report.plugins.length > 0) {
    out.push('', `Plugins from modules (${report.plugins.length})`);
    out.push(...table(report.plugins.map((p) => [p.name, p.version, p.path, p.module])));
  }
  out.push('', `Tools exposed (${report.tools.length})`);
  const withRisk = report.tools.some((t) => t.risk !== undefined);
  const header = withRisk ? [['tool', 'upstream', 'risk', 'floors', 'scan hits']] : [['tool', 'upstream']];
  out.push(...table([...header, ...report.tools.map((tool) => toolRow(tool, withRisk))]));
  out.push('', `Skipped (${report.skipped.length})`);
  out.push(...table(report.skipped.map((s) => [s.name, s.upstream, `${s.by}:`, s.reason])));
  if (!report.healthy) out.push('', 'Some upstreams could not be reached: their tools are missing above.');
  for (const { name, bits } of report.guessableKeys) out.push('', `Warning: ${guessableKeyWarning(name, bits)}.`);
  return `${out.join('\n')}\n`;
}

function toolRow(tool: CheckedTool, withRisk: boolean): string[] {
  const held = tool.ledger === 'held' ? ' [held: awaiting re-review]' : tool.ledger === 'revoked' ? ' [revoked]' : '';
  const row = [`${tool.name}${held}`, tool.upstream ?? 'local'];
  if (!withRisk) return row;
  const risk = tool.risk;
  return [
    ...row,
    risk?.level ?? '-',
    risk && risk.floors.length > 0 ? risk.floors.join(', ') : '-',
    risk && risk.hits.length > 0 ? risk.hits.join('; ') : '-',
  ];
}
