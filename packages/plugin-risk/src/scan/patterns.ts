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
} as const);

export type PoisonPattern = (typeof PoisonPattern)[keyof typeof PoisonPattern];
