import type { LowerText } from './phrase-scan.js';

/** An email address or URL in a text: where exfiltration directives point. */
export interface Address {
  readonly start: number;
  readonly end: number;
  readonly email: boolean;
}

const MAX_LOCAL_PART = 64;

/**
 * Finds email addresses and http(s) URLs in a lower-cased text, sorted by
 * start. Hand-written: every character is looked at a bounded number of
 * times, whatever the input.
 */
export function findAddresses(lower: LowerText): Address[] {
  const emails = findEmails(lower);
  const urls = findUrls(lower);
  if (urls.length === 0) return emails;
  if (emails.length === 0) return urls;
  return [...emails, ...urls].sort((a, b) => a.start - b.start);
}

const NONE: Address[] = [];

function findEmails(lower: LowerText): Address[] {
  let at = lower.indexOf('@');
  if (at === -1) return NONE;
  const out: Address[] = [];
  while (at !== -1) {
    let start = at;
    while (start > 0 && at - start < MAX_LOCAL_PART && isLocalChar(lower.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < lower.length && isDomainChar(lower.charCodeAt(end))) end++;
    while (end > at + 1 && !isAlnum(lower.charCodeAt(end - 1))) end--;
    if (start < at && isDomain(lower, at + 1, end)) out.push({ start, end, email: true });
    at = lower.indexOf('@', Math.max(at + 1, end));
  }
  return out;
}

function findUrls(lower: LowerText): Address[] {
  let at = lower.indexOf('http');
  if (at === -1) return NONE;
  const out: Address[] = [];
  while (at !== -1) {
    const scheme = lower.startsWith('://', at + 4) ? 7 : lower.startsWith('s://', at + 4) ? 8 : 0;
    if (scheme === 0) {
      at = lower.indexOf('http', at + 4);
      continue;
    }
    let end = at + scheme;
    while (end < lower.length && !isUrlStop(lower.charCodeAt(end))) end++;
    if (end > at + scheme) out.push({ start: at, end, email: false });
    at = lower.indexOf('http', end);
  }
  return out;
}

function isDomain(lower: LowerText, start: number, end: number): boolean {
  // Searched within the domain only: a search past its start would make many addresses quadratic.
  let dot = end - 1;
  while (dot > start && lower.charCodeAt(dot) !== 46) dot--;
  if (dot <= start || end - dot < 3) return false;
  for (let i = dot + 1; i < end; i++) {
    const c = lower.charCodeAt(i);
    if (c < 97 || c > 122) return false;
  }
  return true;
}

function isAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

function isLocalChar(c: number): boolean {
  return isAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45; // . _ % + -
}

function isDomainChar(c: number): boolean {
  return isAlnum(c) || c === 46 || c === 45;
}

function isUrlStop(c: number): boolean {
  return (
    c <= 32 ||
    c === 34 ||
    c === 39 ||
    c === 60 ||
    c === 62 ||
    c === 40 ||
    c === 41 ||
    c === 91 ||
    c === 93 ||
    c === 123 ||
    c === 125 ||
    c === 96
  );
}
