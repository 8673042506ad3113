import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scanTool } from '@sluice/plugin-risk';
import type { ScanResult, ToolShape } from '@sluice/plugin-risk';

/** The attack classes a poisoned entry may belong to (see corpus/README.md). */
const POISONED_CLASSES = [
  'hidden-instruction-block',
  'sensitive-file-reference',
  'credential-harvesting',
  'coercive-ordering',
  'secret-collection-upload',
  'command-injection-coaching',
  'full-schema-poisoning',
  'cross-server-imperative',
  'suspicious-sink-parameter',
  'prompt-injection',
  'unicode-smuggling',
  'exfiltration-directive',
  'markdown-image-exfil',
  'tool-shadowing',
  'rug-pull',
  'encoded-instruction',
  'preference-manipulation',
  'trust-claim',
  'context-exfiltration',
  'argument-tampering',
  'remote-instructions',
] as const;

/** The kinds of clean text: plain descriptions of real servers' tools, and hard negatives. */
const CLEAN_CLASSES = [
  'reference-server',
  'popular-server',
  'hard-security-words',
  'hard-credentials-legit',
  'hard-sensitive-paths',
  'hard-ordering',
  'hard-tool-references',
  'hard-free-text-parameter',
  'hard-markup',
  'hard-instructional-tone',
  'hard-sending-tools',
  'hard-unicode',
  'hard-other-language',
] as const;

/** The languages other than English an entry may be written in (its `language`). */
const LANGUAGES = ['es', 'fr', 'de', 'pt', 'it', 'ru', 'zh', 'ja', 'ko'] as const;
const MIN_CLASS_RECALL = 0.85;

const MIN_RECALL = 0.95;
const MAX_FALSE_POSITIVE_RATE = 0.02;

interface CorpusEntry {
  readonly file: string;
  readonly label: 'clean' | 'poisoned';
  readonly class: string;
  readonly language?: string;
  /**
   * `held-out`: measured blind before any tuning (the never-shown figure in the README), and tuned on since the
   * third pass; `tuning`: published attacks the lexicon was tuned on after a first, blind measurement.
   */
  readonly split?: 'held-out' | 'tuning';
  /** Where the attack or the tool was published, and its identifier there. */
  readonly citation?: { readonly url: string; readonly id: string };
  /** `sluice`: written by this project, modelled on no one published text; not counted among the cited definitions. */
  readonly origin?: 'sluice';
  readonly source: string;
  readonly context?: { readonly otherTools?: string[] };
  readonly definition: ToolShape;
}

const dir = new URL('./corpus/', import.meta.url);
const corpus: CorpusEntry[] = readdirSync(dir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({ file, ...(JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as Omit<CorpusEntry, 'file'>) }));
/** The held-out split: its misses were the never-shown figure; since the lexicon was tuned on them, it is held to the goals like every entry. */
const heldOut = corpus.filter((entry) => entry.split === 'held-out');

/**
 * Whether the scan would warn about a definition. Today every hit warns, so a hit is a hit.
 * Once hits carry a severity, count only those at or above the level that warns, e.g.
 * `result.hits.some((hit) => hit.severity !== undefined)` for "any severity warns", or a
 * comparison against the plugin's warn threshold if low hits become silent.
 */
function warns(result: ScanResult): boolean {
  return result.hits.length > 0;
}

interface Row {
  readonly cls: string;
  n: number;
  flagged: number;
  readonly wrong: string[];
}

/** Scans every entry once and tallies, per class, how many the scan flagged. */
function measure(entries: readonly CorpusEntry[] = corpus) {
  const rows = new Map<string, Row>();
  for (const entry of entries) {
    const key = `${entry.label}:${entry.class}`;
    const row = rows.get(key) ?? { cls: entry.class, n: 0, flagged: 0, wrong: [] };
    rows.set(key, row);
    const flagged = warns(scanTool(entry.definition, { otherTools: entry.context?.otherTools ?? [] }));
    row.n++;
    if (flagged) row.flagged++;
    if (flagged !== (entry.label === 'poisoned')) row.wrong.push(entry.file);
  }
  const of = (label: string) =>
    [...rows.entries()].filter(([key]) => key.startsWith(`${label}:`)).map(([, row]) => row);
  const poisoned = of('poisoned');
  const clean = of('clean');
  const sum = (list: Row[], f: (row: Row) => number) => list.reduce((total, row) => total + f(row), 0);
  const tp = sum(poisoned, (row) => row.flagged);
  const fn = sum(poisoned, (row) => row.n - row.flagged);
  const fp = sum(clean, (row) => row.flagged);
  const tn = sum(clean, (row) => row.n - row.flagged);
  return {
    poisoned,
    clean,
    tp,
    fn,
    fp,
    tn,
    precision: tp + fp === 0 ? 0 : tp / (tp + fp),
    recall: tp / (tp + fn),
    falsePositiveRate: fp / (fp + tn),
  };
}

/** The table the test prints: per poisoned class its recall, per clean class its false-positive rate, then the misses. */
function table(m: ReturnType<typeof measure>): string {
  const pad = (s: string | number, w: number) => String(s).padEnd(w);
  const lines = ['', `${pad('poisoned class', 28)}${pad('n', 5)}${pad('detected', 10)}recall`];
  for (const row of [...m.poisoned].sort((a, b) => a.cls.localeCompare(b.cls)))
    lines.push(`${pad(row.cls, 28)}${pad(row.n, 5)}${pad(row.flagged, 10)}${(row.flagged / row.n).toFixed(3)}`);
  lines.push('', `${pad('clean class', 28)}${pad('n', 5)}${pad('false pos', 10)}FPR`);
  for (const row of [...m.clean].sort((a, b) => a.cls.localeCompare(b.cls)))
    lines.push(`${pad(row.cls, 28)}${pad(row.n, 5)}${pad(row.flagged, 10)}${(row.flagged / row.n).toFixed(3)}`);
  lines.push(
    '',
    `overall: ${m.tp + m.fn + m.fp + m.tn} definitions, tp ${m.tp}, fn ${m.fn}, fp ${m.fp}, tn ${m.tn}; ` +
      `precision ${m.precision.toFixed(3)}, recall ${m.recall.toFixed(3)}, false-positive rate ${m.falsePositiveRate.toFixed(3)}`,
    '',
    'missed (poisoned, not flagged):',
    ...m.poisoned.flatMap((row) => row.wrong.map((file) => `  ${row.cls}: ${file}`)),
    'false positives (clean, flagged):',
    ...m.clean.flatMap((row) => row.wrong.map((file) => `  ${row.cls}: ${file}`)),
  );
  return lines.join('\n');
}

describe('the labelled corpus, by class', () => {
  it('holds at least 600 well-formed definitions, about half of them poisoned, each with a class and a source', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(600);
    const clean = corpus.filter((entry) => entry.label === 'clean').length;
    expect(clean).toBeGreaterThanOrEqual(150);
    expect(clean / corpus.length).toBeGreaterThan(0.4);
    expect(clean / corpus.length).toBeLessThan(0.6);
    for (const entry of corpus) {
      const classes: readonly string[] = entry.label === 'poisoned' ? POISONED_CLASSES : CLEAN_CLASSES;
      expect(classes, entry.file).toContain(entry.class);
      expect(entry.file.startsWith(`${entry.label}-`), entry.file).toBe(true);
      expect(entry.source.length, entry.file).toBeGreaterThan(40);
      const definition = entry.definition as unknown as Record<string, unknown>;
      expect(typeof definition.name, entry.file).toBe('string');
      expect(typeof definition.description, entry.file).toBe('string');
      expect(definition.inputSchema, entry.file).toMatchObject({ type: 'object' });
    }
  });

  it('cites, for each entry of the published-attack splits, the page and the identifier it was taken from', () => {
    const split = corpus.filter((entry) => entry.split !== undefined);
    expect(split.length).toBeGreaterThanOrEqual(120);
    expect(heldOut.length).toBeGreaterThanOrEqual(60);
    for (const entry of split) {
      expect(['held-out', 'tuning'], entry.file).toContain(entry.split);
      expect(entry.citation?.url, entry.file).toMatch(/^https:\/\/[a-z0-9.-]+\.[a-z]{2,}\//);
      expect(entry.citation?.id.length ?? 0, entry.file).toBeGreaterThan(3);
      expect(entry.source, entry.file).toContain(entry.citation?.url);
    }
    // At least 200 clean definitions from real public servers, the held-out ones each citing its repository and tool.
    expect(corpus.filter((e) => e.label === 'clean' && !e.class.startsWith('hard-')).length).toBeGreaterThanOrEqual(
      150,
    );
    expect(corpus.filter((e) => e.label === 'clean').length).toBeGreaterThanOrEqual(200);
  });

  it("cites a page and an identifier for every entry not marked as our own; at least 600 cited, 200 of them real servers' clean tools, and the README counts them", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const entry of corpus) {
      if (entry.origin !== undefined) {
        expect(entry.origin, entry.file).toBe('sluice');
        expect(entry.citation, entry.file).toBeUndefined();
        continue;
      }
      expect(entry.citation?.url, entry.file).toMatch(/^https?:\/\/[a-z0-9.-]+\.[a-z]{2,}\/\S*$/);
      expect(entry.citation?.id.trim().length ?? 0, entry.file).toBeGreaterThan(3);
      expect(entry.source, entry.file).toContain(entry.citation?.url);
    }
    const cited = corpus.filter((entry) => entry.origin === undefined);
    const own = corpus.filter((entry) => entry.origin === 'sluice');
    const citedClean = cited.filter((entry) => entry.label === 'clean');
    expect(cited.length).toBeGreaterThanOrEqual(600);
    expect(citedClean.length).toBeGreaterThanOrEqual(200);
    expect(citedClean.filter((entry) => entry.class.startsWith('hard-')).length).toBeGreaterThanOrEqual(20);
    const count = (list: readonly CorpusEntry[]) =>
      `${list.length} | ${list.filter((e) => e.label === 'clean').length} | ${list.filter((e) => e.label === 'poisoned').length} |`;
    expect(readme).toContain(`| cited (counted) | ${count(cited)}`);
    expect(readme).toContain(`| our own (\`origin: 'sluice'\`, not counted) | ${count(own)}`);
    expect(readme).toContain(`| all | ${count(corpus)}`);
  });

  it('has at least four entries in every class, so that each class has a measured rate', () => {
    for (const cls of POISONED_CLASSES)
      expect(corpus.filter((e) => e.label === 'poisoned' && e.class === cls).length, cls).toBeGreaterThanOrEqual(4);
    for (const cls of CLEAN_CLASSES)
      expect(corpus.filter((e) => e.label === 'clean' && e.class === cls).length, cls).toBeGreaterThanOrEqual(4);
  });

  it(`finds at least ${MIN_CLASS_RECALL} of the poisoned definitions of every class and every language, and the README says so`, () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const m = measure();
    const rate = (row: Row) => (row.flagged / row.n).toFixed(3);
    for (const row of m.poisoned) {
      expect(row.flagged / row.n, row.cls).toBeGreaterThanOrEqual(MIN_CLASS_RECALL);
      expect(readme).toContain(`| ${row.cls} | ${row.n} | ${row.flagged} | ${rate(row)} |`);
    }
    for (const row of m.clean) expect(readme).toContain(`| ${row.cls} | ${row.n} | ${row.flagged} | ${rate(row)} |`);
    for (const language of ['en', ...LANGUAGES]) {
      const entries = corpus.filter((e) => (e.language ?? 'en') === language);
      const poisoned = entries.filter((e) => e.label === 'poisoned');
      const clean = entries.filter((e) => e.label === 'clean');
      expect(poisoned.length, language).toBeGreaterThanOrEqual(4);
      expect(clean.length, language).toBeGreaterThanOrEqual(1);
      const scan = (e: CorpusEntry) => warns(scanTool(e.definition, { otherTools: e.context?.otherTools ?? [] }));
      const found = poisoned.filter(scan).length;
      const flagged = clean.filter(scan).length;
      expect(found / poisoned.length, language).toBeGreaterThanOrEqual(MIN_CLASS_RECALL);
      expect(readme).toContain(
        `| ${language} | ${poisoned.length} | ${found} | ${(found / poisoned.length).toFixed(3)} | ${clean.length} | ${flagged} |`,
      );
    }
  });

  it(`finds at least ${MIN_RECALL} of the poisoned definitions and flags at most ${MAX_FALSE_POSITIVE_RATE} of the clean ones`, () => {
    const m = measure();
    // The table is the point of this test: it shows the detector author which classes and files to work on.
    console.log(table(m));
    expect(m.recall).toBeGreaterThanOrEqual(MIN_RECALL);
    expect(m.falsePositiveRate).toBeLessThanOrEqual(MAX_FALSE_POSITIVE_RATE);
  });

  it('measures the held-out split (blind before the third pass, tuned on since) and the README reports what it finds there, per class and per language', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const m = measure(heldOut);
    expect(readme).toContain(
      `| held-out, this scanner | ${heldOut.length} | ${m.fp + m.tn} | ${m.tp + m.fn} | ${m.tp} | ${m.fp} | ${m.fn} | ${m.tn} | ${m.recall.toFixed(3)} | ${m.falsePositiveRate.toFixed(3)} |`,
    );
    for (const row of m.poisoned) expect(readme).toContain(`| held-out ${row.cls} | ${row.n} | ${row.flagged} |`);
    for (const language of ['en', ...LANGUAGES]) {
      const poisoned = heldOut.filter((e) => e.label === 'poisoned' && (e.language ?? 'en') === language);
      if (poisoned.length === 0) continue;
      const hits = poisoned.filter((e) => warns(scanTool(e.definition, { otherTools: e.context?.otherTools ?? [] })));
      expect(readme).toContain(`| held-out ${language} | ${poisoned.length} | ${hits.length} |`);
    }
  });
});
