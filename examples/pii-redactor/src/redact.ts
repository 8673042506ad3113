// Linear-time scanners: no regular expressions, every character is visited a
// bounded number of times whatever the input.

import type { PiiPattern } from './options.js';

export const EMAIL_MARK = '[redacted email]';
export const PHONE_MARK = '[redacted phone]';

export interface Redaction {
  text: string;
  email: number;
  phone: number;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isAlnum = (c: number): boolean => isDigit(c) || isAlpha(c);
// a-z A-Z 0-9 . _ % + -
const isLocal = (c: number): boolean => isAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
// a-z A-Z 0-9 . -
const isDomain = (c: number): boolean => isAlnum(c) || c === 46 || c === 45;

/** Replaces `local@domain.tld` addresses. Runs around different `@`s never overlap, so the scan is linear. */
export function redactEmails(text: string): { text: string; count: number } {
  let out = '';
  let copied = 0; // text[0, copied) is already in `out`
  let count = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > copied && isLocal(text.charCodeAt(start - 1))) start--;
    while (start < at && text.charCodeAt(start) === 46) start++; // no leading dot
    if (start === at) continue;
    let end = at + 1;
    while (end < text.length && isDomain(text.charCodeAt(end))) end++;
    while (end > at + 1 && !isAlnum(text.charCodeAt(end - 1))) end--; // no trailing dot or hyphen
    // The domain needs a dot followed by a top-level label of at least two letters.
    // Searching back stays inside this domain, which no other '@' scans, so the scan stays linear.
    let dot = end - 1;
    while (dot > at && text.charCodeAt(dot) !== 46) dot--;
    if (dot <= at + 1 || end - dot - 1 < 2) continue;
    let tldLetters = true;
    for (let i = dot + 1; i < end; i++) if (!isAlpha(text.charCodeAt(i))) tldLetters = false;
    if (!tldLetters) continue;
    out += text.slice(copied, start) + EMAIL_MARK;
    copied = end;
    count++;
    at = end - 1;
  }
  return count === 0 ? { text, count } : { text: out + text.slice(copied), count };
}

const MIN_DIGITS = 7;
const MAX_DIGITS = 15; // E.164
// space ( ) - .
const isPhoneSeparator = (c: number): boolean => c === 32 || c === 40 || c === 41 || c === 45 || c === 46;

/**
 * Replaces phone-number-like runs: an optional `+`, then 7 to 15 digits
 * separated by at most one of space, `-`, `.`, `(`, `)` between digits, not
 * glued to a letter or digit on either side. The scan resumes after each
 * run, matched or not, so it is linear.
 */
export function redactPhones(text: string): { text: string; count: number } {
  let out = '';
  let copied = 0;
  let count = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const startsRun = isDigit(c) || ((c === 43 || c === 40) && isDigit(text.charCodeAt(i + 1)));
    if (!startsRun || (i > 0 && isAlnum(text.charCodeAt(i - 1)))) {
      i++;
      continue;
    }
    const start = i;
    let digits = 0;
    let end = i; // end of the last digit seen, exclusive
    let j = c === 43 || c === 40 ? i + 1 : i;
    let separators = 0; // consecutive separators since the last digit: at most two, as in "1 (555)"
    while (j < text.length) {
      const d = text.charCodeAt(j);
      if (isDigit(d)) {
        digits++;
        separators = 0;
        end = j + 1;
      } else if (isPhoneSeparator(d) && separators < 2) {
        separators++;
      } else {
        break;
      }
      j++;
    }
    const glued = end < text.length && isAlpha(text.charCodeAt(end));
    if (digits >= MIN_DIGITS && digits <= MAX_DIGITS && !glued) {
      out += text.slice(copied, start) + PHONE_MARK;
      copied = end;
      count++;
    }
    i = Math.max(j, i + 1);
  }
  return count === 0 ? { text, count } : { text: out + text.slice(copied), count };
}

/** Applies the selected patterns; e-mails first, so digits inside an address are not taken for a phone number. */
export function redact(text: string, patterns: ReadonlySet<PiiPattern>): Redaction {
  let email = 0;
  let phone = 0;
  if (patterns.has('email')) ({ text, count: email } = redactEmails(text));
  if (patterns.has('phone')) ({ text, count: phone } = redactPhones(text));
  return { text, email, phone };
}
