/** Every code this plugin raises. */
export const PiiRedactorErrorCode = Object.freeze({
  /**
   * Personal data was redacted from the text of a result that also carries
   * `structuredContent`, which this plugin does not rewrite: the result is
   * refused rather than leaking the unredacted structured copy.
   */
  PII_IN_STRUCTURED_CONTENT: 'PII_IN_STRUCTURED_CONTENT',
} as const);
export type PiiRedactorErrorCode = (typeof PiiRedactorErrorCode)[keyof typeof PiiRedactorErrorCode];
