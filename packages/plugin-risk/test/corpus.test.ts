import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import { FingerprintLedger, scanTool } from '@sluice/plugin-risk';
import type { ToolShape } from '@sluice/plugin-risk';

interface CorpusEntry {
  readonly file: string;
  readonly label: 'clean' | 'poisoned';
  readonly source: string;
  readonly hard?: string;
  readonly attack?: string;
  readonly context?: { readonly otherTools?: string[] };
  readonly definition: ToolShape;
  readonly before?: ToolShape;
}

const dir = new URL('./corpus/', import.meta.url);
const corpus: CorpusEntry[] = readdirSync(dir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({ file, ...(JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as Omit<CorpusEntry, 'file'>) }));

/** The scanner's verdict on every entry, and the confusion matrix. */
function measure() {
  const outcomes = corpus.map((entry) => {
    const flagged = !scanTool(entry.definition, { otherTools: entry.context?.otherTools ?? [] }).clean;
    return { entry, flagged, poisoned: entry.label === 'poisoned' };
  });
  const count = (f: (o: (typeof outcomes)[number]) => boolean) => outcomes.filter(f).length;
  const tp = count((o) => o.poisoned && o.flagged);
  const fp = count((o) => !o.poisoned && o.flagged);
  const fn = count((o) => o.poisoned && !o.flagged);
  const tn = count((o) => !o.poisoned && !o.flagged);
  return { outcomes, tp, fp, fn, tn, precision: tp / (tp + fp), recall: tp / (tp + fn) };
}

describe('the labelled corpus', () => {
  it('holds at least 60 labelled definitions, each with a source note', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    for (const entry of corpus) {
      expect(['clean', 'poisoned'], entry.file).toContain(entry.label);
      expect(entry.source.length, entry.file).toBeGreaterThan(40);
      expect(typeof entry.definition.name, entry.file).toBe('string');
      expect(entry.file.startsWith(entry.label), entry.file).toBe(true);
    }
    expect(corpus.filter((e) => e.label === 'clean').length).toBeGreaterThanOrEqual(30);
    expect(corpus.filter((e) => e.label === 'poisoned').length).toBeGreaterThanOrEqual(30);
  });

  it('includes the hard cases: security words, emoji flags with tag characters, right-to-left scripts, gateways', () => {
    const hard = corpus.map((e) => e.hard ?? '').join('\n');
    for (const topic of ['security words', 'emoji flag', 'right-to-left', 'gateway']) expect(hard).toContain(topic);
    const attacks = corpus.map((e) => e.attack ?? '').join('\n');
    for (const topic of ['tool poisoning', 'tool shadowing', 'rug pull', 'hidden unicode'])
      expect(attacks).toContain(topic);
  });

  it('measures precision and recall, and the README reports these figures', () => {
    const { tp, fp, fn, tn, precision, recall } = measure();
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const row = `| ${corpus.length} | ${tn + fp} | ${tp + fn} | ${tp} | ${fp} | ${fn} | ${tn} | ${precision.toFixed(3)} | ${recall.toFixed(3)} |`;
    expect(readme).toContain(row);
  });

  it('lists, in the README, each entry the scanner gets wrong', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const { entry, flagged, poisoned } of measure().outcomes) {
      if (flagged !== poisoned) expect(readme, entry.file).toContain(entry.file);
    }
  });

  it('catches every rug pull of the corpus in the ledger, whatever the scanner says', async () => {
    const pulls = corpus.filter((e) => e.before !== undefined);
    expect(pulls.length).toBeGreaterThanOrEqual(3);
    for (const entry of pulls) {
      const ledger = new FingerprintLedger(new MemoryStore());
      expect((await ledger.check('upstream', entry.before as ToolShape)).status).toBe('NEW');
      expect(await ledger.check('upstream', entry.definition), entry.file).toMatchObject({
        status: 'MISMATCH',
        lifecycle: 'AWAITING_REREVIEW',
      });
    }
  });
});
