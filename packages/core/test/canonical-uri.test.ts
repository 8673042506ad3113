// The canonical spelling of resource URIs: what every deny glob, rule and route sees.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_URI_LENGTH, canonicalUri } from '../src/features/canonical-uri.js';
import { matchGlob } from '../src/glob.js';

describe('canonicalUri', () => {
  it.each([
    ['FILE:///secret/key', 'file:///secret/key'],
    ['file://localhost/secret/key', 'file:///secret/key'],
    ['file://LocalHost/secret/key', 'file:///secret/key'],
    ['file:/secret/key', 'file:///secret/key'],
    ['file:///%73ecret/key', 'file:///secret/key'],
    ['file:///a%2fb', 'file:///a%2Fb'],
    ['gitlab://projects/group%2Fproject/..', 'gitlab://projects/'],
    ['file:///a..%2Fb', 'file:///a..%2Fb'],
    ['file:///a/./b/../c', 'file:///a/c'],
    ['file:///../../etc/passwd', 'file:///etc/passwd'],
    ['file:///a/b/..', 'file:///a/'],
    ['file:////a//b///c', 'file:///a/b/c'],
    ['file:///a/%2E%2e/b', 'file:///b'],
    ['HTTPS://User@Example.COM:8443/A/./B?Q=%7e#F', 'https://User@example.com:8443/A/B?Q=~#F'],
    ['note://secret', 'note://secret'],
    ['urn:isbn:0451450523', 'urn:isbn:0451450523'],
  ])('spells %s as %s', (uri, canonical) => {
    expect(canonicalUri(uri)).toBe(canonical);
  });

  it.each([
    ['no scheme', '/etc/passwd'],
    ['a control character', 'file:///a\u0000b'],
    ['a space', 'file:///a b'],
    ['a backslash', 'file:///secret\\key'],
    ['a broken percent-encoding', 'file:///%7'],
    ['a percent sign alone', 'file:///100%'],
    ['too many characters', `file:///${'a'.repeat(MAX_URI_LENGTH)}`],
    ['a ".." beside an encoded slash', 'file:///public/..%2Fsecret%2Fkey'],
    ['a ".." beside an encoded backslash', 'file:///public/..%5csecret'],
    ['encoded dots and an encoded slash', 'file:///public/%2e%2E%2fsecret'],
    ['a "." beside an encoded slash', 'file:///public/.%2F..%2Fsecret'],
  ])('refuses a URI with %s', (_, uri) => {
    expect(() => canonicalUri(uri)).toThrow(/resource URI/);
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
        const once = canonicalUri(url);
        expect(canonicalUri(once)).toBe(once);
      }),
    );
  });
});

const SEGMENTS = ['secret', 'public', 'key', 'etc', 'passwd', 'a.b', 'x~y', 'Z_9'];
const DENY = ['file:///secret/*', 'file:///etc/passwd', 'file:///public/*/key'].map(canonicalUri);

/** One way to spell a path segment: some of its unreserved characters percent-encoded, in either hex case. */
const spelledSegment = (segment: string) =>
  fc.array(fc.boolean(), { minLength: segment.length, maxLength: segment.length }).chain((encode) =>
    fc.boolean().map((upper) =>
      Array.from(segment)
        .map((char, i) => {
          if (!encode[i]) return char;
          const hex = char.charCodeAt(0).toString(16).padStart(2, '0');
          return `%${upper ? hex.toUpperCase() : hex}`;
        })
        .join(''),
    ),
  );

/** Noise that names no other file: `./`, a detour `x/../`, or an extra slash (not first: `file://x` names a host). */
const noise = (first: boolean) =>
  first ? fc.constantFrom('', './', 'detour/../', './/') : fc.constantFrom('', '', './', 'detour/../', '/', './/');

/** A path, and one of its many spellings as a `file:` URI. */
const spelled = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 }).chain((segments) =>
  fc
    .tuple(
      fc.constantFrom('file', 'FILE', 'File', 'fILE'),
      fc.constantFrom('//', '///', '//localhost/', '//LOCALHOST/', '/'),
      fc.tuple(...segments.map((s, i) => fc.tuple(noise(i === 0), spelledSegment(s)))),
    )
    .map(([scheme, authority, parts]) => ({
      plain: `file:///${segments.join('/')}`,
      spelling: `${scheme}:${authority === '//' ? '///' : authority}${parts.map(([n, s]) => `${n}${s}`).join('/')}`,
    })),
);

describe('a deny list against spellings of URIs', () => {
  it('denies every spelling of a denied path and no spelling of an allowed one', () => {
    fc.assert(
      fc.property(spelled, ({ plain, spelling }) => {
        const canonical = canonicalUri(spelling);
        expect(canonical).toBe(plain);
        const denied = (uri: string) => DENY.some((pattern) => matchGlob(pattern, uri));
        expect(denied(canonical)).toBe(denied(plain));
      }),
      { numRuns: 2000 },
    );
  });
});

/** An encoded separator as a client may spell it: `/` or `\\`, either hex case. */
const encodedSeparator = fc.constantFrom('%2F', '%2f', '%5C', '%5c');
/** A dot segment as a client may spell it: `.` or `..`, each dot as it is or encoded. */
const dotSegment = fc.constantFrom('..', '.', '%2E%2E', '%2e.', '.%2E', '%2E');

describe('a path that climbs once its encoded separators are decoded (attack: `/public/..%2Fsecret`)', () => {
  it('is refused wherever the dot segment and the encoded separator stand', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...SEGMENTS), { minLength: 0, maxLength: 3 }),
        dotSegment,
        encodedSeparator,
        fc.constantFrom('before', 'after'),
        fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 3 }),
        (head, dots, separator, side, tail) => {
          const climb = side === 'before' ? `${dots}${separator}${tail.join('/')}` : `x${separator}${dots}`;
          const uri = `file:///${[...head, climb].join('/')}`;
          expect(() => canonicalUri(uri), uri).toThrow(/encoded/);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps an encoded separator among other characters, which names one segment', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SEGMENTS), encodedSeparator, fc.constantFrom(...SEGMENTS), (a, separator, b) => {
        const uri = `gitlab://projects/${a}${separator}${b}`;
        expect(canonicalUri(uri)).toBe(`gitlab://projects/${a}${separator.toUpperCase()}${b}`);
      }),
    );
  });
});
