/* eslint-disable @typescript-eslint/no-deprecated -- logging is deprecated as of 2026-07-28 but still part of 2025-11-25, which the gateway serves and relays */
import type { LoggingLevel, LoggingMessageNotificationParams } from '@modelcontextprotocol/server';

/** A protocol log level, least severe first: `debug` ... `emergency`. */
export type LogLevel = LoggingLevel;
/** The params of `notifications/message`. */
export type LogMessage = LoggingMessageNotificationParams;

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Severity order of the protocol's log levels, least severe first. */
export function levelRank(level: LogLevel): number {
  return LEVELS.indexOf(level);
}
