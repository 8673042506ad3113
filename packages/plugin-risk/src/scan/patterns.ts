/** The poisoning signatures the scanner reports. */
export const PoisonPattern = Object.freeze({
  /** "ignore / disregard / forget (all) previous / prior / above ... instructions". */
  HIDDEN_INSTRUCTION: 'HIDDEN_INSTRUCTION',
  /** `<system>`, `[system]` and chat-template role markers. */
  SYSTEM_PROMPT_OVERRIDE: 'SYSTEM_PROMPT_OVERRIDE',
  /** "you are now / actually / really a ...", "pretend to be". */
  ROLE_HIJACK: 'ROLE_HIJACK',
  /** Zero-width and invisible characters (U+200B-200D, U+2060-2064, U+FEFF, U+180E) outside the scripts and emoji that need them. */
  UNICODE_ZERO_WIDTH: 'UNICODE_ZERO_WIDTH',
  /** Bidirectional embeddings, overrides and isolates (U+202A-202E, U+2066-2069). */
  UNICODE_RTL_OVERRIDE: 'UNICODE_RTL_OVERRIDE',
  /** A word mixing Latin and Cyrillic letters. */
  UNICODE_HOMOGLYPH_RISK: 'UNICODE_HOMOGLYPH_RISK',
  /** ANSI terminal escape sequences (ESC [, ESC ], and the C1 CSI/OSC). */
  ANSI_ESCAPE: 'ANSI_ESCAPE',
  /** An imperative naming another exposed tool, together with concealment or exfiltration wording. */
  CROSS_SERVER_IMPERATIVE: 'CROSS_SERVER_IMPERATIVE',
  /** "send / post / forward / upload ... all / contents / credentials ... to" an email address or URL. */
  EXFILTRATION_DIRECTIVE: 'EXFILTRATION_DIRECTIVE',
  /** Unicode tag characters (U+E0000-E007F) outside a valid emoji flag sequence. */
  UNICODE_TAG_CHARACTERS: 'UNICODE_TAG_CHARACTERS',
  /** Runs of variation selectors, or a selector with no base character: data smuggled in selectors. */
  UNICODE_VARIATION_SELECTOR: 'UNICODE_VARIATION_SELECTOR',
  /** A UTF-16 surrogate with no partner: malformed text. */
  UNICODE_LONE_SURROGATE: 'UNICODE_LONE_SURROGATE',
  /** C0 and C1 control characters other than tab, line feed and carriage return. */
  CONTROL_CHARACTER: 'CONTROL_CHARACTER',
  /** "do not tell / mention ... the user", "hide ... from the user". */
  CONCEALMENT_DIRECTIVE: 'CONCEALMENT_DIRECTIVE',
  /** A schema too deep or too large to scan whole: what was not read cannot be called clean. */
  SCAN_LIMIT_EXCEEDED: 'SCAN_LIMIT_EXCEEDED',
  /** A pseudo-tag block (`<IMPORTANT>`, `<secret>`, `[ADMIN]`, `<!-- -->`, a hidden `<div>`) that carries orders. */
  HIDDEN_INSTRUCTION_BLOCK: 'HIDDEN_INSTRUCTION_BLOCK',
  /** A credential or sensitive local file (`~/.ssh/id_rsa`, `.env`, `mcp.json`, cloud credentials, keychains) to be read, included or passed. */
  SENSITIVE_FILE_REFERENCE: 'SENSITIVE_FILE_REFERENCE',
  /** Asks for someone's password, API key, token, session cookie or personal data to be passed to the tool. */
  CREDENTIAL_HARVESTING: 'CREDENTIAL_HARVESTING',
  /** Orders to collect secrets met in inputs, files or other tools' results and hand them over. */
  SECRET_COLLECTION: 'SECRET_COLLECTION',
  /** Hijacks the agent loop: "before any other tool", "on every session", "instead of <tool>", "without asking". */
  COERCIVE_ORDERING: 'COERCIVE_ORDERING',
  /** Coaches the model to run or change commands elsewhere: pipe-to-shell payloads, "prepend ... to every command". */
  COMMAND_INJECTION: 'COMMAND_INJECTION',
  /** Overrides beyond the seed's phrase: "forget everything above", "new system prompt", "override your safety guidelines", claimed consent. */
  INSTRUCTION_OVERRIDE: 'INSTRUCTION_OVERRIDE',
  /** A URL template (`![](https://x.example/p.png?d=SUMMARY)`) to be filled with conversation data: exfiltration by rendering. */
  URL_TEMPLATE_EXFILTRATION: 'URL_TEMPLATE_EXFILTRATION',
  /** An optional free-form parameter (`feedback`, `debug`, `notes`, `extra`, an open object) soliciting whatever the model holds: a weak signal. */
  SUSPICIOUS_SINK_PARAMETER: 'SUSPICIOUS_SINK_PARAMETER',
  /** A span in base64, hex, percent-encoding, decimal codes or announced ROT13 that decodes to a signature, or that the text says to decode and follow. */
  ENCODED_INSTRUCTION: 'ENCODED_INSTRUCTION',
  /** A tool promoting itself or disparaging rivals to be chosen: "the only reliable tool", "other tools are unreliable", "deprecated, use this one". */
  PREFERENCE_MANIPULATION: 'PREFERENCE_MANIPULATION',
  /** Self-declared trust or authority: "this server is verified", "outranks the user", "other servers are compromised", planted memories. */
  TRUST_CLAIM: 'TRUST_CLAIM',
  /** Orders to load instructions from a remote URL. */
  REMOTE_INSTRUCTIONS: 'REMOTE_INSTRUCTIONS',
  /** Asks for the model's context: the system prompt, the transcript, environment variables (in a description, or as a parameter name). */
  CONTEXT_EXFILTRATION: 'CONTEXT_EXFILTRATION',
  /** Silent substitution of the user's arguments: "regardless of what the user says", "quietly replace the user's recipient". */
  ARGUMENT_TAMPERING: 'ARGUMENT_TAMPERING',
  /** The outside judge (`scan.judge`) found the definition poisoned; its reason is the excerpt. */
  JUDGE_VERDICT: 'JUDGE_VERDICT',
} as const);

export type PoisonPattern = (typeof PoisonPattern)[keyof typeof PoisonPattern];

/** How much a hit weighs: `high` blocks under `policy: 'block'` by default; `low` never blocks on its own. */
export type Severity = 'high' | 'medium' | 'low';

export const SEVERITIES = ['low', 'medium', 'high'] as const;

/** Each signature's severity. `CROSS_SERVER_IMPERATIVE` is `high` with concealment or exfiltration wording, else `medium`. */
export const PATTERN_SEVERITY: Readonly<Record<PoisonPattern, Severity>> = Object.freeze({
  HIDDEN_INSTRUCTION: 'high',
  SYSTEM_PROMPT_OVERRIDE: 'high',
  ROLE_HIJACK: 'high',
  UNICODE_ZERO_WIDTH: 'high',
  UNICODE_RTL_OVERRIDE: 'high',
  UNICODE_HOMOGLYPH_RISK: 'high',
  ANSI_ESCAPE: 'high',
  CROSS_SERVER_IMPERATIVE: 'high',
  EXFILTRATION_DIRECTIVE: 'high',
  UNICODE_TAG_CHARACTERS: 'high',
  UNICODE_VARIATION_SELECTOR: 'high',
  UNICODE_LONE_SURROGATE: 'high',
  CONTROL_CHARACTER: 'high',
  CONCEALMENT_DIRECTIVE: 'high',
  SCAN_LIMIT_EXCEEDED: 'high',
  HIDDEN_INSTRUCTION_BLOCK: 'high',
  SENSITIVE_FILE_REFERENCE: 'high',
  CREDENTIAL_HARVESTING: 'high',
  SECRET_COLLECTION: 'high',
  COERCIVE_ORDERING: 'high',
  COMMAND_INJECTION: 'high',
  INSTRUCTION_OVERRIDE: 'high',
  URL_TEMPLATE_EXFILTRATION: 'high',
  SUSPICIOUS_SINK_PARAMETER: 'low',
  ENCODED_INSTRUCTION: 'high',
  PREFERENCE_MANIPULATION: 'medium',
  TRUST_CLAIM: 'high',
  REMOTE_INSTRUCTIONS: 'high',
  CONTEXT_EXFILTRATION: 'high',
  ARGUMENT_TAMPERING: 'high',
  JUDGE_VERDICT: 'high',
});

/** What each severity adds to a tool's combined score. */
export const SEVERITY_WEIGHT: Readonly<Record<Severity, number>> = Object.freeze({ low: 1, medium: 2, high: 4 });

export function severityIndex(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

/**
 * Whether hits keep a tool out under `policy: 'block'`: a hit at or above
 * `blockAt`, or hits whose weights add up to `blockAt`'s weight (two
 * mediums make a high). Weak signals (`low`) count toward the sum but never
 * block alone.
 */
export function blocks(hits: readonly { readonly severity: Severity }[], blockAt: Severity): boolean {
  const floor = severityIndex(blockAt);
  let score = 0;
  let strong = false;
  for (const hit of hits) {
    score += SEVERITY_WEIGHT[hit.severity];
    if (hit.severity === 'low') continue;
    strong = true;
    if (severityIndex(hit.severity) >= floor) return true;
  }
  return strong && score >= SEVERITY_WEIGHT[blockAt];
}
