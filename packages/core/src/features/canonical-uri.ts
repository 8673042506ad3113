/**
 * The one spelling of a resource URI that every allow/deny glob, authz rule,
 * route, ledger and log line sees. A client may spell one resource many ways
 * (`FILE:`, `file://localhost/`, `%73ecret`, `/../`, `/./`, `//`); each
 * spelling is brought to this form once, at the edge, before any of them
 * looks, and the upstream is sent the same form.
 *
 * The canonical form (RFC 3986 section 6.2.2, plus two rules for paths):
 * - the scheme and the host in lower case; `file://localhost/` and `file:/` become `file:///`;
 * - a percent-encoded unreserved character (`A-Z a-z 0-9 - . _ ~`) decoded,
 *   every other percent-encoding kept, its hex digits in upper case;
 * - in a path that starts with `/`: runs of `/` collapsed to one, then `.`
 *   and `..` segments removed (`..` never climbs above the root);
 * - the query and the fragment kept as sent, bar the percent rule.
 * A URI without a scheme, longer than `MAX_URI_LENGTH`, holding control
 * characters or a broken percent-encoding, or a dot segment beside an encoded
 * separator (`..%2F`), is refused: it names no resource.
 */

/** The longest URI accepted, in UTF-16 code units. */
export const MAX_URI_LENGTH = 8192;

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** Whether a URI holds a C0 control, a space, DEL or a backslash (which some servers read as a separator). */
function hasForbidden(uri: string): boolean {
  for (let i = 0; i < uri.length; i++) {
    const code = uri.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f || code === 0x5c) return true;
  }
  return false;
}
const PERCENT = /%([0-9A-Fa-f]{0,2})/g;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** Why a URI was refused, as thrown by `canonicalUri`. */
export class UriError extends Error {
  override readonly name = 'UriError';
}

/** The canonical spelling of a resource URI; throws `UriError` for one that names no resource. */
export function canonicalUri(uri: string): string {
  if (uri.length > MAX_URI_LENGTH) throw new UriError(`A resource URI is at most ${MAX_URI_LENGTH} characters`);
  if (hasForbidden(uri)) throw new UriError('A resource URI holds no spaces, control characters or backslashes');
  const scheme = SCHEME.exec(uri);
  if (scheme === null) throw new UriError('A resource URI starts with a scheme, such as "file:"');
  let rest = percentNormalized(uri.slice(scheme[0].length));
  const hash = rest.indexOf('#');
  const fragment = hash === -1 ? '' : rest.slice(hash);
  if (hash !== -1) rest = rest.slice(0, hash);
  const question = rest.indexOf('?');
  const query = question === -1 ? '' : rest.slice(question);
  if (question !== -1) rest = rest.slice(0, question);
  const name = scheme[0].slice(0, -1).toLowerCase();
  let authority = '';
  let path = rest;
  if (rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    authority = hostLowered(rest.slice(2, end === -1 ? rest.length : end));
    path = end === -1 ? '' : rest.slice(end);
    if (name === 'file' && authority === 'localhost') authority = '';
  }
  if (path.startsWith('/')) path = withoutDotSegments(path.replace(/\/{2,}/g, '/'));
  if (climbsWhenDecoded(path))
    throw new UriError(
      'A resource URI has no "." or ".." segment beside an encoded "/" or "\\" (%2F, %5C): a server that decodes it would climb',
    );
  // `file:/a` and `file:///a` name one file (RFC 8089): a file URI always spells its (empty) authority.
  const hierarchical = rest.startsWith('//') || (name === 'file' && path.startsWith('/'));
  return `${name}:${hierarchical ? `//${authority}` : ''}${path}${query}${fragment}`;
}

/** Decodes percent-encoded unreserved characters and upper-cases the hex of the rest. */
function percentNormalized(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(PERCENT, (match, hex: string) => {
    if (hex.length !== 2) throw new UriError('A resource URI has a "%" not followed by two hex digits');
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/** The authority with its host in lower case; user information and port stay as sent. */
function hostLowered(authority: string): string {
  const at = authority.lastIndexOf('@');
  return `${authority.slice(0, at + 1)}${authority.slice(at + 1).toLowerCase()}`;
}

/**
 * Whether a path holds a dot segment once its encoded separators (`%2F`, `%5C`)
 * are read as separators. The literal dot segments are already gone, so such a
 * segment stands beside an encoded separator (`/public/..%2Fsecret`): a path
 * every glob sees under `/public/` that a server decoding it reads as `/secret`.
 * An encoded separator among other characters (`group%2Fproject`) is kept.
 */
function climbsWhenDecoded(path: string): boolean {
  if (!path.includes('%2F') && !path.includes('%5C')) return false;
  return path.split(/\/|%2F|%5C/).some((segment) => segment === '.' || segment === '..');
}

/** RFC 3986 section 5.2.4 on an absolute path: `.` and `..` segments removed, never above the root. */
function withoutDotSegments(path: string): string {
  const segments = path.slice(1).split('/');
  const out: string[] = [];
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..') out.pop();
      // A trailing dot segment leaves a directory: `/a/b/..` is `/a/`.
      if (last) out.push('');
      continue;
    }
    out.push(segment);
  }
  return `/${out.join('/')}`;
}
