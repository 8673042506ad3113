import { describe, expect, it } from 'vitest';
import { CLUSTER_WINDOW, clusterStart } from '../src/graphemes.js';

const family = '👨‍👩‍👧'; // man ZWJ woman ZWJ girl: 8 code units, one cluster
const cutsInside = (cluster: string) => Array.from({ length: cluster.length - 1 }, (_, i) => i + 1);

describe('cutting between grapheme clusters', () => {
  it('moves a cut inside an emoji ZWJ sequence back to the start of the sequence', () => {
    const text = `ab${family}cd`;
    for (const offset of cutsInside(family)) expect(clusterStart(text, 2 + offset)).toBe(2);
    expect(clusterStart(text, 2 + family.length)).toBe(2 + family.length);
  });

  it('keeps flags, skin tones, variation selectors and combining marks whole', () => {
    for (const cluster of ['🇫🇷', '👍🏽', '❤️', 'é', 'ñ̃']) {
      const text = `xy${cluster}z`;
      for (const offset of cutsInside(cluster)) expect(clusterStart(text, 2 + offset)).toBe(2);
    }
  });

  it('leaves a cut that already falls between clusters where it is', () => {
    const text = `a${family}b🇫🇷c`;
    for (const index of [0, 1, 1 + family.length, 2 + family.length, text.length])
      expect(clusterStart(text, index)).toBe(index);
  });

  it('looks back only a bounded window: a cut deep inside a huge cluster stays on its code point boundary', () => {
    const zalgo = `a${'\u0301'.repeat(CLUSTER_WINDOW * 2)}`;
    expect(clusterStart(zalgo, CLUSTER_WINDOW + 10)).toBe(CLUSTER_WINDOW + 10);
    // Within the window, the base letter and its marks stay together.
    expect(clusterStart(`xy${zalgo.slice(0, 20)}`, 10)).toBe(2);
  });
});
