export { PiiRedactorErrorCode } from './errors.js';
export { PiiPattern, PiiRedactorOptions } from './options.js';
export { NAME, VERSION, piiRedactor } from './plugin.js';
export { EMAIL_MARK, PHONE_MARK, redact, redactEmails, redactPhones } from './redact.js';
export type { Redaction } from './redact.js';
import './policy.js';
