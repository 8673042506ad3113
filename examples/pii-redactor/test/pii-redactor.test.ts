import { CoreErrorCode } from '@sluice/core';
import { createTestKit, errorOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PiiRedactorErrorCode, piiRedactor, redact, redactEmails, redactPhones } from '../src/index.js';

const echo = {
  name: 'echo',
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }: { text: string }) => ({ content: [{ type: 'text' as const, text }] }),
};
const rename = (name: string, extra: object = {}) => ({ ...echo, name, ...extra });

const textOf = (result: { content: unknown }): string[] =>
  (result.content as { type: string; text?: string }[]).map((b) =>
    b.type === 'text' ? (b.text ?? '') : `<${b.type}>`,
  );

const PII = 'Write to jane.doe+crm@mail.example.com or call +1 (555) 123-4567.';
const REDACTED = 'Write to [redacted email] or call [redacted phone].';

describe('pii redactor', () => {
  let kit: TestKit | undefined;
  afterEach(async () => kit?.close());

  it('redacts e-mail addresses and phone numbers in text results', async () => {
    kit = await createTestKit({ plugins: [piiRedactor()], tools: [echo] });
    expect(textOf(await kit.call('echo', { text: PII }))).toEqual([REDACTED]);
  });

  it('leaves text without personal data untouched and logs nothing', async () => {
    kit = await createTestKit({ plugins: [piiRedactor()], tools: [echo] });
    expect(textOf(await kit.call('echo', { text: 'order 42 shipped on day 3' }))).toEqual([
      'order 42 shipped on day 3',
    ]);
    expect(kit.logs.events('pii.redacted')).toHaveLength(0);
  });

  it('redacts only the patterns selected', async () => {
    kit = await createTestKit({ plugins: [piiRedactor({ patterns: ['phone'] })], tools: [echo] });
    expect(textOf(await kit.call('echo', { text: PII }))).toEqual([
      'Write to jane.doe+crm@mail.example.com or call [redacted phone].',
    ]);
  });

  it('applies only to tools matching the globs', async () => {
    kit = await createTestKit({
      plugins: [piiRedactor({ tools: ['crm_*'] })],
      tools: [rename('crm_lookup'), rename('weather')],
    });
    expect(textOf(await kit.call('crm_lookup', { text: PII }))).toEqual([REDACTED]);
    expect(textOf(await kit.call('weather', { text: PII }))).toEqual([PII]);
  });

  it('skips tools whose policy opts out', async () => {
    kit = await createTestKit({
      plugins: [piiRedactor()],
      tools: [rename('directory', { policy: { pii: { skip: true } } }), echo],
    });
    expect(textOf(await kit.call('directory', { text: PII }))).toEqual([PII]);
    expect(textOf(await kit.call('echo', { text: PII }))).toEqual([REDACTED]);
  });

  it('logs one event per redacted result with counts and never the values', async () => {
    kit = await createTestKit({ plugins: [piiRedactor()], tools: [echo] });
    await kit.call('echo', { text: `${PII} Or bob@example.org.` });
    const events = kit.logs.events('pii.redacted');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ tool: 'echo', email: 2, phone: 1 });
    // The logger's own numbers (the time, the process id) may hold any digits: what the plugin wrote may not.
    const logged = JSON.stringify(
      events.map((event) => Object.entries(event).filter(([key]) => key !== 'time' && key !== 'pid')),
    );
    for (const secret of ['jane.doe', 'example.com', 'bob@', '555', '4567']) expect(logged).not.toContain(secret);
  });

  it('in audit mode logs the finding and leaves the result as it was', async () => {
    kit = await createTestKit({ plugins: [piiRedactor({ mode: 'audit' })], tools: [echo] });
    expect(textOf(await kit.call('echo', { text: PII }))).toEqual([PII]);
    expect(kit.logs.events('pii.redacted')).toMatchObject([{ email: 1, phone: 1, mode: 'audit' }]);
  });

  it('in off mode does nothing', async () => {
    kit = await createTestKit({ plugins: [piiRedactor({ mode: 'off' })], tools: [echo] });
    expect(textOf(await kit.call('echo', { text: PII }))).toEqual([PII]);
  });

  it('redacts every text block and leaves other blocks alone', async () => {
    const multi = {
      name: 'multi',
      inputSchema: z.object({}),
      handler: () => ({
        content: [
          { type: 'text' as const, text: 'a@b.io' },
          { type: 'image' as const, data: 'aGk=', mimeType: 'image/png' },
          { type: 'text' as const, text: 'tel 020 7946 0958' },
        ],
      }),
    };
    kit = await createTestKit({ plugins: [piiRedactor()], tools: [multi] });
    expect(textOf(await kit.call('multi', {}))).toEqual(['[redacted email]', '<image>', 'tel [redacted phone]']);
  });

  it('refuses a result whose structured content would leak what the text had redacted', async () => {
    const contact = {
      name: 'contact',
      inputSchema: z.object({}),
      handler: () => ({
        content: [{ type: 'text' as const, text: '{"email":"a@b.io"}' }],
        structuredContent: { email: 'a@b.io' },
      }),
    };
    kit = await createTestKit({ plugins: [piiRedactor()], tools: [contact] });
    const result = await kit.call('contact', {});
    expect(errorOf(result)?.code).toBe(PiiRedactorErrorCode.PII_IN_STRUCTURED_CONTENT);
    expect(JSON.stringify(result)).not.toContain('a@b.io');
  });

  it('rejects bad options at construction with the field path', () => {
    expect(() => piiRedactor({ patterns: ['ssn' as 'email'] })).toThrow(/patterns/);
    expect(() => piiRedactor({ tools: [] })).toThrow(/tools/);
  });

  it('still reports invalid arguments as the core does', async () => {
    kit = await createTestKit({ plugins: [piiRedactor()], tools: [echo] });
    expect(errorOf(await kit.call('echo', { text: 42 }))?.code).toBe(CoreErrorCode.INVALID_ARGUMENTS);
  });
});

describe('matching', () => {
  const all = new Set(['email', 'phone'] as const);

  it.each([
    ['a@b.io', '[redacted email]'],
    ['Mail: first.last@sub.example.co.uk.', 'Mail: [redacted email].'],
    ['x@y', 'x@y'],
    ['@example.com', '@example.com'],
    ['user@host.c0m', 'user@host.c0m'],
    ['a@b.io,c@d.io', '[redacted email],[redacted email]'],
  ])('e-mail %j', (input, output) => expect(redactEmails(input).text).toBe(output));

  it.each([
    ['call 555-1234 now', 'call [redacted phone] now'],
    ['+44 20 7946 0958', '[redacted phone]'],
    ['(555) 123-4567', '[redacted phone]'],
    ['+1 (555) 123-4567.', '[redacted phone].'],
    ['order 123456', 'order 123456'],
    ['id abc5551234567', 'id abc5551234567'],
    ['1234567890123456', '1234567890123456'],
    ['v1.2.3', 'v1.2.3'],
  ])('phone %j', (input, output) => expect(redactPhones(input).text).toBe(output));

  it('counts each kind', () => {
    expect(redact(PII, all)).toEqual({ text: REDACTED, email: 1, phone: 1 });
  });

  it('does not read digits inside an e-mail address as a phone number', () => {
    expect(redact('reach 5551234567@sms.example.net', all)).toEqual({
      text: 'reach [redacted email]',
      email: 1,
      phone: 0,
    });
  });

  it('stays linear on adversarial input', () => {
    const n = 200_000;
    const inputs = [
      'a@'.repeat(n),
      `${'a.'.repeat(n)}@`,
      `@${'a'.repeat(n)}`,
      '1 '.repeat(n),
      '1-'.repeat(n) + 'x',
      'a@b '.repeat(n),
    ];
    const started = performance.now();
    for (const input of inputs) redact(input, all);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
